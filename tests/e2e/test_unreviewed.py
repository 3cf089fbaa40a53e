"""Under policy ask, an edit that arrives without a permission request is flagged in the chat."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from fake_editor import FakeEditor

from acp_nvim.core.config import parse_settings
from acp_nvim.core.session.manager import SessionManager
from acp_nvim.core.session.session import Prompt
from helpers import async_wait_for
from helpers.core import chat_text as chat

pytestmark = pytest.mark.timeout(30)

MODE_AGENT = Path(__file__).resolve().parents[1] / "e2e" / "mode_agent.py"
ENV = {"ACP_TEST_MODES": "ask,free", "ACP_TEST_ASKING": "ask"}


async def started(tmp_path, mode: str, policy: str = "ask"):
    editor = FakeEditor()
    spec = {"command": sys.executable, "args": [str(MODE_AGENT)], "env": ENV, "mode": mode}
    manager = SessionManager(editor, parse_settings({"agents": {"probe": spec}, "permissions": {"policy": policy}}))
    session = manager.create("probe", str(tmp_path))
    await session.start()
    return editor, session


async def write(session, path: Path, text: str) -> None:
    turns = session.details.turns
    session.submit(Prompt(json.dumps({"op": "write", "path": str(path), "text": text})))
    await async_wait_for(lambda: session.details.turns > turns and session.state == "idle")
    await async_wait_for(lambda: path.read_text() == text)


async def test_an_unasked_disk_edit_is_flagged_with_what_it_changed(tmp_path):
    target = tmp_path / "a.txt"
    target.write_text("before\n")
    _, session = await started(tmp_path, "free")
    try:
        await write(session, target, "after\n")
        await async_wait_for(lambda: session.unreviewed.flags)
        [(block, change)] = session.unreviewed.flags.items()
        assert change.path == str(target.resolve()) and change.before == "before\n" and change.known
        assert f"⚠ not reviewed: the agent changed {target.resolve()} on disk" in chat(session)
        assert "X on this line reverts it" in chat(session)
        assert session.unreviewed.reverted(block) is change and not session.unreviewed.flags
        assert f"reverted {target.resolve()}" in chat(session)
        assert session.unreviewed.reverted(block) is None
    finally:
        await session.close()


async def test_an_edit_the_user_was_asked_about_is_not_flagged(tmp_path):
    target = tmp_path / "b.txt"
    target.write_text("before\n")
    editor, session = await started(tmp_path, "ask")
    try:
        await write(session, target, "after\n")
        assert editor.reviews or editor.questions, "the agent asked"
        await async_wait_for(lambda: session.files.changes.latest() is not None)
        assert not session.unreviewed.flags and "not reviewed" not in chat(session)
    finally:
        await session.close()


@pytest.mark.parametrize("policy", ["auto-edit", "trust"])
async def test_other_policies_flag_nothing(tmp_path, policy):
    target = tmp_path / "c.txt"
    target.write_text("before\n")
    _, session = await started(tmp_path, "free", policy)
    try:
        await write(session, target, "after\n")
        await async_wait_for(lambda: session.files.changes.latest() is not None)
        assert not session.unreviewed.flags
    finally:
        await session.close()
