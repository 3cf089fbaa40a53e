"""Issue 12's process and turn faults in the core: bounded stderr lines, answers in time, the turn
watchdog, cancelled tool calls, and recovery (crash, restart, queued prompts) against the demo agent."""

from __future__ import annotations

import asyncio

import pytest
from acp.schema import ToolCallStart
from fake_editor import FakeEditor

from acp_nvim.core.agent import deadline
from acp_nvim.core.agent.stderr import LineCutter, drain
from acp_nvim.core.config import TimeoutSettings, parse_settings
from acp_nvim.core.errors import ConfigError
from acp_nvim.core.session.manager import SessionManager
from acp_nvim.core.session.prompt import Prompt, Turn
from acp_nvim.core.session.watch import TurnWatch, WatchHooks
from acp_nvim.core.transcript.transcript import Transcript
from helpers import async_wait_for

pytestmark = pytest.mark.timeout(60)


# -- stderr lines ---------------------------------------------------------------------------------


def test_a_line_over_the_limit_is_cut_and_the_next_line_still_arrives():
    cutter = LineCutter(limit=10)
    assert cutter.feed(b"x" * 25) == []
    assert cutter.feed(b"yyy\nnext line\n") == [("x" * 10, 18), ("next line", 0)]


def test_a_carriage_return_progress_bar_keeps_its_last_state():
    cutter = LineCutter(limit=100)
    lines = cutter.feed(b"10%\r50%\r100%\rdone\r\nafter\n")
    assert lines == [("done", 13), ("after", 0)]
    assert cutter.flush() is None


def test_the_unfinished_last_line_is_flushed():
    cutter = LineCutter()
    assert cutter.feed(b"partial") == []
    assert cutter.flush() == ("partial", 0)


async def test_drain_reads_a_stream_with_an_endless_line_to_its_end():
    stream = asyncio.StreamReader()
    stream.feed_data(b"a" * (3 * 64 * 1024) + b"\nlast words\n")
    stream.feed_eof()
    seen: list[tuple[str, int]] = []
    await drain(stream, lambda text, dropped: seen.append((text[:3], dropped)))
    assert seen == [("aaa", 2 * 64 * 1024), ("las", 0)]


# -- answers in time --------------------------------------------------------------------------------


async def test_a_request_without_answer_times_out_after_a_notice():
    loop = asyncio.get_running_loop()
    never: asyncio.Future[int] = loop.create_future()
    exited: asyncio.Future[int] = loop.create_future()
    notices: list[float] = []
    with pytest.raises(deadline.TimedOut):
        await deadline.answer_within(never, limit=0.2, notice=0.05, exited=exited, on_notice=notices.append)
    assert notices == [0.05]
    assert never.cancelled(), "the unanswered request is cancelled"


async def test_an_agent_exit_fails_the_request_with_its_code():
    loop = asyncio.get_running_loop()
    never: asyncio.Future[int] = loop.create_future()
    exited: asyncio.Future[int] = loop.create_future()
    exited.set_result(3)
    with pytest.raises(deadline.Exited) as info:
        await deadline.answer_within(never, limit=30, notice=10, exited=exited, on_notice=lambda _: None)
    assert info.value.code == 3


async def test_an_answer_in_time_is_returned():
    async def answer() -> str:
        return "ok"

    exited: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    assert await deadline.answer_within(answer(), limit=30, notice=10, exited=exited, on_notice=lambda _: None) == "ok"


# -- the turn watchdog ------------------------------------------------------------------------------


class Watched:
    def __init__(self) -> None:
        self.heard = 0.0
        self.waiting = False
        self.events: list[str] = []

    def hooks(self) -> WatchHooks:
        return WatchHooks(last_heard=lambda: self.heard, quiet=lambda: self.waiting,
                          silent=lambda s: self.events.append(f"silent {s:g}"),
                          speaks=lambda: self.events.append("speaks"),
                          ignores_cancel=lambda s: self.events.append(f"ignores {s:g}"))


def watch(watched: Watched) -> tuple[Turn, TurnWatch]:
    turn = Turn(Prompt("hi"), started=0.0)
    return turn, TurnWatch(turn, TimeoutSettings(notice=8, cancel=5), watched.hooks())


def test_silence_is_told_once_then_the_agent_speaks_again():
    watched = Watched()
    _, watchdog = watch(watched)
    watchdog.check(7.0)
    assert watched.events == []
    watchdog.check(8.5)
    watchdog.check(9.0)
    assert watched.events == ["silent 8.5"]
    watched.heard = 9.5
    watchdog.check(10.0)
    assert watched.events == ["silent 8.5", "speaks"]


def test_a_running_tool_or_a_question_is_not_silence():
    watched = Watched()
    turn, watchdog = watch(watched)
    transcript = Transcript(lambda op: None)
    turn.tools["t1"] = transcript.tool_call(ToolCallStart(session_update="tool_call", tool_call_id="t1",
                                                          title="build", status="in_progress"))
    watchdog.check(30.0)
    turn.tools.clear()
    watched.waiting = True
    watchdog.check(60.0)
    assert watched.events == []


def test_a_cancel_not_confirmed_in_time_is_shown_as_ignored_once():
    watched = Watched()
    turn, watchdog = watch(watched)
    turn.cancelled_at = 1.0
    watchdog.check(5.0)
    watchdog.check(6.5)
    watchdog.check(9.0)
    assert watched.events == ["ignores 5.5"]
    assert turn.cancel_ignored


# -- the transcript -----------------------------------------------------------------------------


def test_a_cancelled_tool_call_stays_cancelled_unless_it_finishes():
    transcript = Transcript(lambda op: None)
    start = ToolCallStart(session_update="tool_call", tool_call_id="t1", title="edit", status="pending")
    transcript.tool_call(start)
    transcript.cancel_tool_call("t1")
    assert transcript.tool_calls["t1"].status == "cancelled"
    transcript.tool_call(ToolCallStart(session_update="tool_call", tool_call_id="t1", title="edit",
                                       status="in_progress"))
    assert transcript.tool_calls["t1"].status == "cancelled", "a late in_progress does not reopen it"
    transcript.tool_call(ToolCallStart(session_update="tool_call", tool_call_id="t1", title="edit",
                                       status="completed"))
    assert transcript.tool_calls["t1"].status == "completed"


def test_the_conversation_as_context_leaves_notices_out_and_is_bounded():
    transcript = Transcript(lambda op: None)
    assert not transcript.has_prompts()
    transcript.user_message("first question", [])
    transcript.notice("some notice", "info")
    assert transcript.has_prompts()
    text = transcript.as_context(10_000)
    assert "first question" in text and "some notice" not in text
    transcript.user_message("x" * 500, [])
    cut = transcript.as_context(100)
    assert cut.startswith("[… earlier conversation cut …]") and len(cut) < 200


# -- configuration --------------------------------------------------------------------------------


def test_timeouts_and_the_restart_key_are_configuration():
    settings = parse_settings({"timeouts": {"handshake": 5, "notice": 1}, "keymaps": {"restart": "<leader>r"}})
    assert settings.timeouts.handshake == 5 and settings.timeouts.login == 300
    assert settings.restart_key == "<leader>r"
    assert parse_settings({"timeouts": [], "keymaps": []}).restart_key == "<C-r>"
    assert parse_settings({"keymaps": {"restart": ""}}).restart_key == "", "disabled: notices name :Ai restart"


@pytest.mark.parametrize("bad", [{"handshake": 0}, {"cancel": -1}, {"notice": 4000}, {"typo": 3}])
def test_a_bad_timeout_names_its_key(bad):
    with pytest.raises(ConfigError, match=r"timeouts\."):
        parse_settings({"timeouts": bad})


# -- recovery against the demo agent ------------------------------------------------------------


def chat_text(session) -> str:
    return "\n\n".join(block.text() for block in session.transcript.blocks)


async def started(tmp_path, raw=None):
    editor = FakeEditor()
    manager = SessionManager(editor, parse_settings(raw or {}))
    session = manager.create(None, str(tmp_path))
    await session.start()
    return editor, manager, session


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
        replacing = asyncio.ensure_future(session._link.replace_process())
        await async_wait_for(lambda: old.closing)
        assert old in session._link.retiring and old in session.processes
        replacing.cancel()  # a restart cancelled by another one: the old process still ends
        await async_wait_for(lambda: old.exited.done())
        await async_wait_for(lambda: old not in session._link.retiring)
    finally:
        await manager.close(session)
