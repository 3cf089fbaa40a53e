"""Core sessions against the real demo agent subprocess, through a recording editor port."""

from __future__ import annotations

import pytest
from fake_editor import FakeEditor

from acp_nvim.core.errors import AgentStartError
from helpers import async_wait_for, core
from helpers.core import chat_text

pytestmark = pytest.mark.timeout(30)


async def started(tmp_path, editor=None, agents=None, agent=None):
    editor, _, session = await core.started(tmp_path, {"agents": agents or {}}, editor=editor, agent=agent)
    return editor, session


async def test_prompt_turn_streams_and_ends(tmp_path):
    editor, session = await started(tmp_path)
    try:
        assert session.state == "idle" and session.view.mode == "ask"
        assert session.process.info.agent_info.name == "acp-nvim-demo"
        from acp_nvim.core.session.session import Prompt

        assert session.submit(Prompt("hello core")) == "started"
        await async_wait_for(lambda: session.state == "idle" and "turn ended" in chat_text(session))
        text = chat_text(session)
        assert "You said: hello core" in text
        assert "turn ended: end_turn" in text
        assert any(op["op"] == "append" for op in editor.ops), "chunks stream as appends"
    finally:
        await session.close()


async def test_second_prompt_queues_until_turn_ends(tmp_path):
    from acp_nvim.core.session.session import Prompt

    _, session = await started(tmp_path)
    try:
        assert session.submit(Prompt("slow 20")) == "started"
        assert session.submit(Prompt("after the slow one")) == "queued"
        await async_wait_for(lambda: "You said: after the slow one" in chat_text(session))
        text = chat_text(session)
        assert text.index("slow 20") < text.index("after the slow one")
    finally:
        await session.close()


async def test_cancel_answers_pending_permission_cancelled(tmp_path):
    from acp_nvim.core.session.session import Prompt

    target = tmp_path / "a.txt"
    target.write_text("one\n")
    editor = FakeEditor(hold=True)
    _, session = await started(tmp_path, editor)
    try:
        session.submit(Prompt(f"edit {target}"))
        await async_wait_for(lambda: session.state == "waiting")
        assert await session.cancel()
        await async_wait_for(lambda: "turn ended: cancelled" in chat_text(session), timeout=5)
        assert target.read_text() == "one\n"
        assert not session.view.pending and editor.dismissed == editor.tickets
    finally:
        await session.close()


async def test_edit_allowed_writes_through_editor_buffer(tmp_path):
    from acp_nvim.core.session.session import Prompt

    target = tmp_path / "b.txt"
    target.write_text("disk text\n")
    editor = FakeEditor(answer_kind="allow_once")
    editor.buffers[str(target)] = "buffer text\n"
    _, session = await started(tmp_path, editor)
    try:
        session.submit(Prompt(f"edit {target}"))
        await async_wait_for(lambda: "turn ended" in chat_text(session))
        assert editor.questions[0].choices[0].option_id == "demo-yes"
        assert editor.buffers[str(target)].startswith("buffer text edited by demo")
    finally:
        await session.close()


async def test_missing_command_raises_readable_error(tmp_path):
    with pytest.raises(AgentStartError, match=r"cannot start agent 'x'.*no-such-binary-acp"):
        await started(tmp_path, agents={"x": {"command": "no-such-binary-acp"}}, agent="x")


async def test_crash_mid_turn_marks_session_failed(tmp_path):
    from acp_nvim.core.session.session import Prompt

    editor, session = await started(tmp_path)
    try:
        session.submit(Prompt("crash"))
        await async_wait_for(lambda: session.state == "failed")
        assert "agent exited with code 3" in chat_text(session)
        assert any("exited with code 3" in note for note, _ in editor.notes)
    finally:
        await session.close()


async def test_log_ring_records_wire_and_lifecycle(tmp_path):
    from acp_nvim.core.session.session import Prompt

    _, session = await started(tmp_path)
    try:
        session.submit(Prompt("hello"))
        await async_wait_for(lambda: "turn ended" in chat_text(session))
        summaries = [e.summary for e in session.log.entries()]
        assert any(s.startswith("spawned pid") for s in summaries)
        assert any("request initialize" in s for s in summaries)
        assert any("response initialize" in s for s in summaries)
    finally:
        await session.close()
