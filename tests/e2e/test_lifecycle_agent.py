"""Recovery against the demo agent (crash, restart, queued prompts, cancel, close) and the shutdown of an
agent that ignores SIGTERM and EOF: the process half of tests/unit/test_lifecycle.py."""

from __future__ import annotations

import asyncio

import pytest

from acp_nvim.core.config import TimeoutSettings
from acp_nvim.core.conversation.prompt import Prompt
from helpers import async_wait_for
from helpers.core import chat_text, started

pytestmark = pytest.mark.timeout(60)


# -- recovery against the demo agent ------------------------------------------------------------


async def test_a_crash_shows_the_stderr_tail_keeps_the_queue_and_a_restart_sends_it(tmp_path):
    _, manager, session = await started(tmp_path)
    try:
        session.submit(Prompt("hello first"))
        await async_wait_for(lambda: "turn ended" in chat_text(session))
        first_pid = session.process.process.pid
        session.submit(Prompt("crash"))
        session.submit(Prompt("queued after the crash"))
        await async_wait_for(lambda: session.state == "failed")
        text = chat_text(session)
        assert "agent exited with code 3 during the turn" in text
        assert "demo agent: crashing on purpose" in text, "the stderr tail is in the crash notice"
        assert ":Ai restart" in text and "turn ended: error" in text
        assert "not sent yet (the agent is not running): queued after the crash" in text
        assert [p.text for p in session.queue] == ["queued after the crash"]
        assert session.recovery
        await session.restart()
        await async_wait_for(lambda: "You said: queued after the crash" in chat_text(session))
        text = chat_text(session)
        # the demo agent cannot load a session of another process: a new session, the chat carried
        assert "agent restarted: new session" in text and "as context" in text
        assert session.process.process.pid != first_pid and not session.queue and session.recovery == ""
    finally:
        await manager.close(session)


async def test_a_prompt_to_a_crashed_agent_restarts_it_on_the_same_chat(tmp_path):
    _, manager, session = await started(tmp_path)
    try:
        session.submit(Prompt("crash"))
        await async_wait_for(lambda: session.state == "failed")
        assert session.submit(Prompt("are you back")) == "restarting"
        await async_wait_for(lambda: "You said: are you back" in chat_text(session))
    finally:
        await manager.close(session)


async def test_restart_mid_turn_ends_it_and_sends_the_queue_after(tmp_path):
    _, manager, session = await started(tmp_path)
    try:
        session.submit(Prompt("hello"))
        await async_wait_for(lambda: "turn ended" in chat_text(session))
        session.submit(Prompt("slow 200"))
        await async_wait_for(lambda: session.state == "running")
        session.submit(Prompt("queued behind the slow one"))
        await session.restart()
        await async_wait_for(lambda: "You said: queued behind the slow one" in chat_text(session))
        text = chat_text(session)
        assert "turn ended: interrupted by the restart" in text
        assert "1 queued prompt(s) are sent after it" in text
        assert "agent restarted: new session" in text
    finally:
        await manager.close(session)


async def test_cancel_marks_open_tool_calls_and_the_next_prompt_runs(tmp_path):
    _, manager, session = await started(tmp_path)
    try:
        session.submit(Prompt("slow 400"))
        await async_wait_for(lambda: "tick 1" in chat_text(session))
        assert await session.cancel()
        await async_wait_for(lambda: session.state == "idle")
        assert "turn ended: cancelled" in chat_text(session)
        session.submit(Prompt("after the cancel"))
        await async_wait_for(lambda: "You said: after the cancel" in chat_text(session))
    finally:
        await manager.close(session)


async def test_close_keeps_the_session_for_editor_exit_until_the_process_is_gone(tmp_path):
    _, manager, session = await started(tmp_path)
    closing = asyncio.ensure_future(manager.close(session))
    await async_wait_for(lambda: session in manager.closing or closing.done())
    assert manager.get(session.key) is None
    await closing
    assert session not in manager.closing
    assert session.process.exited.done()


# -- shutdown -------------------------------------------------------------------------------------

STUBBORN = """
import signal, subprocess, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
code = "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN); signal.pause()"
child = subprocess.Popen([sys.executable, "-c", code])
print(f"child {child.pid}", file=sys.stderr, flush=True)
signal.pause()
"""


async def test_a_handshake_timeout_ends_an_agent_that_ignores_sigterm_and_eof_with_its_child(tmp_path):
    import signal
    import sys

    from acp_nvim.core.agent import process_tree
    from acp_nvim.core.agent.process import AgentHooks, AgentProcess
    from acp_nvim.core.config import AgentSpec
    from acp_nvim.core.errors import AgentTimeoutError
    from acp_nvim.core.log.ring import LogRing

    hooks = AgentHooks(timeouts=TimeoutSettings(handshake=2, notice=1))
    agent = AgentProcess("stubborn", AgentSpec(command=sys.executable, args=["-c", STUBBORN]), object(),  # type: ignore[arg-type]
                         LogRing(), str(tmp_path), hooks)
    with pytest.raises(AgentTimeoutError, match=r"did not answer initialize within 2 s \(timed out\).*stderr: child"):
        await agent.start()
    assert agent.exited.result() == -signal.SIGKILL, "SIGTERM and EOF were ignored: SIGKILL ended it"
    child = int(agent.stderr_tail()[-1].split()[-1])
    await async_wait_for(lambda: process_tree.identify(child) is None)
    assert all(helper.done() for helper in agent._helpers), "no task outlives the process"


async def test_a_replaced_process_counts_for_editor_exit_until_it_has_exited(tmp_path):
    _, manager, session = await started(tmp_path)
    try:
        old = session.process
        replacing = asyncio.ensure_future(session.link.replace_process())
        await async_wait_for(lambda: old.closing)
        assert old in session.link.retiring and old in session.processes
        replacing.cancel()  # a restart cancelled by another one: the old process still ends
        await async_wait_for(lambda: old.exited.done())
        await async_wait_for(lambda: old not in session.link.retiring)
    finally:
        await manager.close(session)
