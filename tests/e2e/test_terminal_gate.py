"""Terminals against the demo agent: an agent offered none, and the permission gate of execute calls
(the editor is the recording fake; tests/unit/test_terminal.py holds the process-free half)."""

from __future__ import annotations

import pytest
from fake_editor import FakeEditor

pytestmark = pytest.mark.timeout(30)


async def test_an_agent_with_terminal_false_is_offered_none(tmp_path):
    import sys

    from acp_nvim.core.config import PACKAGE_ROOT, parse_settings
    from acp_nvim.core.session.manager import SessionManager
    from acp_nvim.core.session.session import Prompt
    from helpers import async_wait_for

    plain = {"command": sys.executable, "args": ["-m", "acp_nvim.demo_agent"],
             "env": {"PYTHONPATH": str(PACKAGE_ROOT)}, "terminal": False}
    manager = SessionManager(FakeEditor(), parse_settings({"agents": {"plain": plain}}))
    session = manager.create("plain", str(tmp_path))
    await session.start()
    try:
        session.submit(Prompt("terminal echo hi"))
        await async_wait_for(lambda: any("offers no terminal" in b.text() for b in session.transcript.blocks))
    finally:
        await session.close()


async def _demo_session(tmp_path, editor):
    from acp_nvim.core.config import parse_settings
    from acp_nvim.core.session.manager import SessionManager

    session = SessionManager(editor, parse_settings({})).create(None, str(tmp_path))
    await session.start()
    return session


async def _turn(session, text: str, count: int) -> None:
    from acp_nvim.core.session.session import Prompt
    from helpers import async_wait_for

    session.submit(Prompt(text))
    await async_wait_for(lambda: sum("turn ended" in b.text() for b in session.transcript.blocks) >= count)


async def test_the_gate_lets_an_allowed_execute_call_run_once_and_asks_for_anything_else(tmp_path):
    editor = FakeEditor("allow_once")
    session = await _demo_session(tmp_path, editor)
    try:
        await _turn(session, "terminal --no-wait echo covered", 1)
        assert [q.title for q in editor.questions] == ["echo covered"]  # the agent's own request only
        await _turn(session, "terminal --no-ask --no-wait echo uncovered", 2)
        assert editor.questions[-1].title == "Run sh -c 'echo uncovered'" and editor.questions[-1].kind == "execute"
        await _turn(session, "shell ls", 3)  # allowed, and finished without a terminal
        await _turn(session, "terminal --no-ask --no-wait ls", 4)
        assert editor.questions[-1].title == "Run sh -c ls", "a finished call covers nothing"
        assert len(editor.terminals) == 3
    finally:
        await session.close()
    assert sorted(editor.released) == sorted(editor.terminals)


def test_the_folder_check_runs_the_command_only_in_the_approved_folder(tmp_path):
    import subprocess

    from acp_nvim.core.terminal.place import NOT_RUN, identify, launch_argv

    folder = tmp_path / "work"
    folder.mkdir()
    place = identify(str(folder))
    marker = tmp_path / "ran"
    run = launch_argv("touch", (str(marker),), place.path, place.identity)
    assert subprocess.run(run, check=False).returncode == 0 and marker.exists()
    marker.unlink()
    folder.rename(tmp_path / "aside")
    (tmp_path / "elsewhere").mkdir()
    folder.symlink_to(tmp_path / "elsewhere")
    done = subprocess.run(run, capture_output=True, text=True, check=False)
    assert done.returncode == NOT_RUN and "is not the folder that was approved" in done.stderr
    assert not marker.exists()
    assert identify(str(folder)).path == str(tmp_path / "elsewhere")  # named by its real path
