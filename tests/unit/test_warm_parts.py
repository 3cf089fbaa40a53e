"""Warm starts without a process: which agents are kept warm (config), the relay that stands for a
session until one takes the process, and the log a taking session inherits."""

from __future__ import annotations

import asyncio

import pytest
from acp import RequestError
from acp.schema import ReadTextFileResponse

from acp_nvim.core.config import WireSettings, parse_settings
from acp_nvim.core.connection.relay import MAX_KEPT, Relay
from acp_nvim.core.errors import ConfigError
from acp_nvim.core.log.ring import LogRing
from acp_nvim.core.session.warm import spec_with
from helpers import async_wait_for

AGENT = {"command": "agent"}


@pytest.mark.parametrize(("raw", "warm"), [
    ({}, []),
    ({"warm": "default"}, ["demo"]),
    ({"warm": False}, []),
    ({"warm": "default", "default_agent": "a", "agents": {"a": {**AGENT, "bills_per_session": True}}}, []),
    ({"warm": "default", "default_agent": "a", "agents": {"a": {**AGENT, "warm": False}}}, []),
    ({"agents": {"a": {**AGENT, "warm": True, "bills_per_session": True}, "b": AGENT}}, ["a"]),
    ({"warm": "default", "agents": {"a": {**AGENT, "warm": True}}}, ["a", "demo"]),
    ({"agents": {"r": {"url": "ws://127.0.0.1:1", "warm": True}}}, []),
])
def test_which_agents_are_kept_warm(raw, warm):
    assert parse_settings(raw).warm_agents() == warm


@pytest.mark.parametrize("raw", [{"warm": "always"}, {"warm": True}, {"warm_idle_s": 0},
                                 {"agents": {"a": {**AGENT, "warm": "yes"}}}])
def test_bad_warm_settings_name_their_key(raw):
    with pytest.raises(ConfigError, match="warm"):
        parse_settings(raw)


def test_a_login_adds_to_the_environment_of_warm_processes_too():
    spec = parse_settings({"agents": {"a": {**AGENT, "env": {"X": "1"}}}}).agents["a"]
    assert spec_with({}, "a", spec) is spec
    assert spec_with({"a": {"KEY": "k"}}, "a", spec).env == {"X": "1", "KEY": "k"}


class Target:
    """A session's client side as the relay sees it (``Inbound``)."""

    max_line_bytes = 1024

    def __init__(self) -> None:
        self.batches: list[list] = []
        self.drops: list[str] = []

    def updates(self, batch: list) -> None:
        self.batches.append(batch)

    def dropped(self, summary: str, raw: str | None = None, tell: bool = False, level: str = "warn") -> None:
        self.drops.append(summary)


async def test_the_relay_keeps_updates_until_the_session_took_the_answer():
    notes: list[str] = []
    relay = Relay(WireSettings(), notes.append)
    relay.updates([("s1", "agent_message_chunk", "a")])
    target = Target()
    relay.attach(target)  # type: ignore[arg-type]
    relay.updates([("s1", "agent_message_chunk", "b")])
    assert target.batches == [] and relay.kept == 2
    relay.release()
    relay.updates([("s1", "agent_message_chunk", "c")])
    assert target.batches == [[("s1", "agent_message_chunk", "a"), ("s1", "agent_message_chunk", "b")],
                              [("s1", "agent_message_chunk", "c")]]
    relay.dropped("bad line")
    assert target.drops == ["bad line"] and notes == []


async def test_the_relay_is_bounded_and_cancels_requests_still_waiting_when_closed_untaken():
    notes: list[str] = []
    relay = Relay(WireSettings(), notes.append)
    relay.updates([("s1", "", object())] * (MAX_KEPT + 3))
    assert relay.kept == MAX_KEPT and relay.dropped_updates == 3
    read = asyncio.ensure_future(relay.read_text_file(session_id="s1", path="/etc/passwd"))
    create = asyncio.ensure_future(relay.create_terminal(session_id="s1", command="rm"))
    await async_wait_for(lambda: sum("waits for the session" in note for note in notes) == 2, what="both waiting")
    assert not read.done() and not create.done(), "a request waits for the session that takes the process"
    relay.close()
    for request in (read, create):
        with pytest.raises(RequestError) as cancelled:
            await request
        assert cancelled.value.code == -32800  # request cancelled: never a refusal of what was advertised
    assert notes[-2:] == ["cancelled fs/read_text_file: the agent was closed before any session took it",
                          "cancelled terminal/create: the agent was closed before any session took it"]
    relay.release()  # a cold start took over: what was kept goes nowhere
    assert relay.kept == 0


class Served(Target):
    """A session's client side that serves a file read."""

    async def read_text_file(self, session_id: str, path: str, **kwargs: object) -> ReadTextFileResponse:
        return ReadTextFileResponse(content=f"{session_id}:{path}")


async def test_a_request_before_a_session_is_served_by_the_session_that_takes_the_process():
    notes: list[str] = []
    relay = Relay(WireSettings(), notes.append)
    read = asyncio.ensure_future(relay.read_text_file(session_id="s1", path="/w/a.txt"))
    await async_wait_for(lambda: notes == ["fs/read_text_file waits for the session that takes this agent"],
                         what="the read waiting")
    assert not read.done()
    relay.attach(Served())  # type: ignore[arg-type]
    assert (await read).content == "s1:/w/a.txt"


def test_a_taking_session_gets_the_warm_log_in_order_and_bounded():
    warm, session = LogRing(level="trace"), LogRing(max_entries=3, level="trace")
    session.add("info", "lifecycle", "session made")
    for n in range(3):
        warm.add("info", "lifecycle", f"warm {n}")
    session.take(warm)
    session.add("info", "lifecycle", "after")
    assert [e.summary for e in session.entries()] == ["warm 1", "warm 2", "after"]
    assert [e.seq for e in session.entries()] == [3, 4, 5]


async def test_nothing_warms_while_a_session_starts_and_a_cold_start_asks_for_the_next_idle_moment(tmp_path):
    from fake_editor import FakeEditor

    from acp_nvim.core.session.manager import SessionManager

    manager = SessionManager(FakeEditor(), parse_settings({"warm": "default"}))
    asked: list[bool] = []
    manager.warm.want_idle = lambda: asked.append(True)
    session = manager.create(None, str(tmp_path), warm=True)  # none warm yet: it will start cold
    assert asked == [True] and session.state == "starting"
    assert manager.warm.fill(str(tmp_path)) == [] and asked == [True, True]  # not while it starts
    assert manager.warm.entries == {}
