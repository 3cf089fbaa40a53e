"""The warm pool (core/session/warm.py) against real demo agents, through the session manager on the
recording port: what a warm start opens ahead of time and when, what a session takes, and every way
a warm process ends (expiry, a changed configuration, its agent's exit, a failed start)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import pytest
from fake_editor import FakeEditor

from acp_nvim.core.config import PACKAGE_ROOT, parse_settings
from acp_nvim.core.conversation.prompt import Prompt
from acp_nvim.core.session.manager import SessionManager
from helpers import async_wait_for
from helpers.core import chat_text

pytestmark = pytest.mark.timeout(60)


def settings(folder: Path | None, **extra: object) -> dict:
    env = {"PYTHONPATH": str(PACKAGE_ROOT)} | ({"ACP_DEMO_SESSIONS_DIR": str(folder)} if folder else {})
    agent = {"command": sys.executable, "args": ["-m", "acp_nvim.demo_agent"],
             "env": env, **extra.pop("agent", {})}  # type: ignore[dict-item]
    return {"default_agent": "saved", "warm": "default", "agents": {"saved": agent}, **extra}


def saved(folder: Path) -> list[str]:
    return [json.loads(p.read_text())["id"] for p in folder.glob("*.json")]


@pytest.fixture
async def pool(tmp_path):
    managers: list[SessionManager] = []

    def make(raw: dict) -> SessionManager:
        manager = SessionManager(FakeEditor(), parse_settings(raw))
        managers.append(manager)
        return manager

    yield make
    for manager in managers:
        await manager.close_all()
        await manager.warm.close_all()


async def ready(manager: SessionManager, name: str = "saved") -> None:
    entry = manager.warm.entries[name]
    await entry.opened()


async def test_a_session_takes_the_warm_process_and_its_session(pool, tmp_path):
    folder = tmp_path / "agent"
    manager = pool(settings(folder))
    assert manager.warm.fill(str(tmp_path)) == ["saved"]
    await ready(manager)
    warm = manager.warm.entries["saved"]
    warm_id = warm.session_id
    assert saved(folder) == [warm_id]
    asked: list[bool] = []
    manager.warm.want_idle = lambda: asked.append(True)
    await async_wait_for(lambda: warm.relay.kept, timeout=10, what="the commands the agent announced")

    session = manager.create(None, str(tmp_path), warm=True)
    assert manager.warm.entries == {} and asked == [True]  # replaced at the next idle moment
    await manager.start(session)
    assert session.process is warm.process and session.session_id == warm_id
    assert session.view.command_names, "the commands announced before the session took the agent reach it"
    session.submit(Prompt("hello"))
    await async_wait_for(lambda: "You said: hello" in chat_text(session), timeout=20)
    log = [e.summary for e in session.log.entries()]
    assert any(s.startswith("spawned pid") for s in log) and any("took the warm agent" in s for s in log)


async def test_no_session_ahead_where_it_could_not_be_closed_or_would_bill(pool, tmp_path):
    for raw in (settings(None), settings(tmp_path / "agent", agent={"bills_per_session": True, "warm": True})):
        manager = pool(raw)
        manager.warm.fill(str(tmp_path))
        await ready(manager)
        entry = manager.warm.entries["saved"]
        assert entry.process.alive and entry.session_id is None
    assert saved(tmp_path / "agent") == []


async def test_bills_per_session_stays_cold_under_warm_default(pool, tmp_path):
    manager = pool(settings(None, agent={"bills_per_session": True}))
    assert manager.warm.fill(str(tmp_path)) == []


async def test_a_session_elsewhere_or_of_a_changed_agent_starts_cold(pool, tmp_path):
    folder = tmp_path / "agent"
    manager = pool(settings(folder))
    manager.warm.fill(str(tmp_path))
    await ready(manager)
    other = tmp_path / "other"
    other.mkdir()
    assert manager.warm.take("saved", manager.spec_of("saved"), str(other)) is None
    assert "saved" in manager.warm.entries
    entry = manager.warm.entries["saved"]
    manager.settings = parse_settings(settings(folder, agent={"args": ["-m", "acp_nvim.demo_agent", "--login"]}))
    assert manager.warm.take("saved", manager.spec_of("saved"), str(tmp_path)) is None
    manager.settings = parse_settings(settings(folder))
    manager.warm.fill(str(other))  # idle in another folder: the old one is closed, a new one starts there
    await async_wait_for(lambda: entry.process.exited.done(), timeout=20, what="the old warm agent closed")
    assert manager.warm.entries["saved"].cwd == str(other)
    await ready(manager)
    await async_wait_for(lambda: entry.session_id not in saved(folder), timeout=10, what="its session closed")


async def test_an_untaken_warm_agent_is_closed_after_warm_idle_s(pool, tmp_path):
    folder = tmp_path / "agent"
    manager = pool(settings(folder, warm_idle_s=0.3))
    manager.warm.fill(str(tmp_path))
    await ready(manager)
    entry = manager.warm.entries["saved"]
    await async_wait_for(lambda: entry.process.exited.done(), timeout=20, what="the expiry")
    assert manager.warm.entries == {} and saved(folder) == []


async def test_a_warm_agent_that_exits_gives_way_to_a_cold_start(pool, tmp_path):
    manager = pool(settings(tmp_path / "agent"))
    manager.warm.fill(str(tmp_path))
    await ready(manager)
    entry = manager.warm.entries["saved"]
    taken = manager.create(None, str(tmp_path), warm=True)
    os.kill(entry.process.process.pid, signal.SIGKILL)
    await async_wait_for(lambda: entry.process.exited.done(), timeout=10)
    await manager.start(taken)
    assert taken.process is not entry.process and taken.state == "idle"
    assert any("the warm agent has exited" in e.summary for e in taken.log.entries())


async def test_a_failed_warm_start_is_not_retried_at_once_and_the_session_says_why(pool, tmp_path):
    manager = pool(settings(None, agent={"command": str(tmp_path / "missing")}))
    manager.warm.fill(str(tmp_path))
    entry = manager.warm.entries["saved"]
    with pytest.raises(Exception, match="cannot start agent"):
        await entry.opened()
    assert manager.warm.fill(str(tmp_path)) == []  # not again right away
    session = manager.create(None, str(tmp_path), warm=True)
    assert "saved" not in manager.warm.entries  # a failed one is never taken
    with pytest.raises(Exception, match="cannot start agent"):
        await manager.start(session)
    assert session.state == "failed"


async def test_a_session_closed_while_its_warm_agent_starts_leaves_no_process(pool, tmp_path):
    folder = tmp_path / "agent"
    manager = pool(settings(folder, agent={"env": {"PYTHONPATH": str(PACKAGE_ROOT), "ACP_DEMO_SESSIONS_DIR":
                                                   str(folder), "ACP_DEMO_STARTUP_DELAY": "1"}}))
    manager.warm.fill(str(tmp_path))
    entry = manager.warm.entries["saved"]
    session = manager.create(None, str(tmp_path), warm=True)
    starting = asyncio.ensure_future(manager.start(session))
    await async_wait_for(lambda: entry.process.process is not None, timeout=10, what="the warm agent spawned")
    await manager.close(session)
    with pytest.raises(BaseException):  # noqa: B017  # cancelled, or failed as closed: either way it stopped
        await starting
    await async_wait_for(lambda: entry.process.exited.done(), timeout=20, what="the warm agent to end")
    # the closing task drops its entry once the process's close has returned, a step after the exit
    await async_wait_for(lambda: not manager.warm.closing, timeout=10, what="the warm pool's closing to finish")
    assert saved(folder) == []
