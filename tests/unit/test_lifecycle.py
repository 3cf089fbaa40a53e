"""Issue 12's process and turn faults in the core: bounded stderr lines, answers in time, the turn
watchdog, cancelled tool calls (recovery against the demo agent: tests/e2e/test_lifecycle_agent.py)."""

from __future__ import annotations

import asyncio

import pytest
from acp.schema import ToolCallStart

from acp_nvim.core.agent import deadline
from acp_nvim.core.agent.stderr import LineCutter, drain
from acp_nvim.core.config import TimeoutSettings, parse_settings
from acp_nvim.core.conversation.prompt import Prompt, Turn
from acp_nvim.core.conversation.watch import TurnWatch, WatchHooks
from acp_nvim.core.errors import ConfigError
from acp_nvim.core.transcript.conversation import Conversation
from acp_nvim.core.transcript.export import as_context

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
    transcript = Conversation()
    turn.tools["t1"] = transcript.tools.tool_call(ToolCallStart(session_update="tool_call", tool_call_id="t1",
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
    transcript = Conversation()
    start = ToolCallStart(session_update="tool_call", tool_call_id="t1", title="edit", status="pending")
    transcript.tools.tool_call(start)
    transcript.tools.cancel_tool_call("t1")
    assert transcript.tool_calls["t1"].status == "cancelled"
    transcript.tools.tool_call(ToolCallStart(session_update="tool_call", tool_call_id="t1", title="edit",
                                             status="in_progress"))
    assert transcript.tool_calls["t1"].status == "cancelled", "a late in_progress does not reopen it"
    transcript.tools.tool_call(ToolCallStart(session_update="tool_call", tool_call_id="t1", title="edit",
                                             status="completed"))
    assert transcript.tool_calls["t1"].status == "completed"


def test_the_conversation_as_context_leaves_notices_out_and_is_bounded():
    transcript = Conversation()
    assert not transcript.has_prompts()
    transcript.user_message("first question", [])
    transcript.notice("some notice", "info")
    assert transcript.has_prompts()
    text = as_context(transcript, 10_000)
    assert "first question" in text and "some notice" not in text
    transcript.user_message("x" * 500, [])
    cut = as_context(transcript, 100)
    assert cut.startswith("[… earlier conversation cut …]") and len(cut) < 200


# -- configuration --------------------------------------------------------------------------------


def test_timeouts_and_the_restart_key_are_configuration():
    settings = parse_settings({"timeouts": {"handshake": 5, "notice": 1}, "keymaps": {"restart": "<leader>r"}})
    assert settings.timeouts.handshake == 5 and settings.timeouts.login == 300
    assert settings.restart_key == "<leader>r"
    assert parse_settings({"timeouts": [], "keymaps": []}).restart_key == "<LocalLeader>R"
    assert parse_settings({"keymaps": {"restart": ""}}).restart_key == "", "disabled: notices name :Ai restart"
    assert parse_settings({"keymaps": {"restart": False}}).restart_key == "", "false disables a key as '' does"
    assert parse_settings({"keymaps": {"retry": False}}).action_keys["retry"] == ""


@pytest.mark.parametrize("bad", [{"handshake": 0}, {"cancel": -1}, {"notice": 4000}, {"typo": 3}])
def test_a_bad_timeout_names_its_key(bad):
    with pytest.raises(ConfigError, match=r"timeouts\."):
        parse_settings({"timeouts": bad})
