"""Capabilities advertised are exactly what that process serves (real agent processes over real pipes,
the session manager on the recording port): a process started only to list sessions advertises no
file, terminal or question support; a warm process advertises a session's and serves it (a
request it gets before a session takes it waits for that session, and is cancelled if none does)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from fake_editor import FakeEditor

from acp_nvim.core.config import parse_settings
from acp_nvim.core.connection.past import listed_by
from acp_nvim.core.session.manager import SessionManager
from helpers import async_wait_for

pytestmark = pytest.mark.timeout(120)

AGENT = Path(__file__).with_name("caps_agent.py")


def raw_settings(tmp_path: Path, **env: str) -> dict:
    env = {"ACP_TEST_CAPS_OUT": str(tmp_path / "caps.jsonl"), **env}
    return {"default_agent": "caps", "agents": {"caps": {"command": sys.executable, "args": [str(AGENT)],
                                                         "env": env}}}


def advertised(tmp_path: Path) -> list[dict]:
    path = tmp_path / "caps.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def test_a_process_started_to_list_sessions_advertises_nothing_it_would_refuse(tmp_path):
    settings = parse_settings(raw_settings(tmp_path))
    assert await listed_by("caps", settings.agents["caps"], str(tmp_path), None, settings) == []
    (caps,) = advertised(tmp_path)
    assert caps["fs"] == {"readTextFile": False, "writeTextFile": False} and caps["terminal"] is False
    assert "elicitation" not in caps and "plan" not in caps and "session" not in caps
    assert caps["auth"] == {"terminal": True}, ":Ai login runs terminal methods itself, not through this process"


async def test_a_session_advertises_what_it_serves(tmp_path):
    manager = SessionManager(FakeEditor(), parse_settings(raw_settings(tmp_path)))
    session = manager.create("caps", str(tmp_path))
    try:
        await manager.start(session)
        (caps,) = advertised(tmp_path)
        assert caps["fs"] == {"readTextFile": True, "writeTextFile": True}
        assert caps["elicitation"] == {"form": {}, "url": {}} and caps["auth"] == {"terminal": True}
    finally:
        await manager.close_all()


@pytest.fixture
async def warm_manager(tmp_path):
    made: list[SessionManager] = []

    def make(**env: str) -> SessionManager:
        raw = raw_settings(tmp_path, **env) | {"warm": "default"}
        manager = SessionManager(FakeEditor(), parse_settings(raw))
        made.append(manager)
        return manager

    yield make
    for manager in made:
        await manager.close_all()
        await manager.warm.close_all()


async def test_a_warm_process_serves_a_request_it_got_before_a_session_took_it(warm_manager, tmp_path):
    target, out = tmp_path / "a.txt", tmp_path / "read.json"
    target.write_text("served once taken\n")
    manager = warm_manager(ACP_TEST_READ=str(target), ACP_TEST_READ_OUT=str(out))
    assert manager.warm.fill(str(tmp_path)) == ["caps"]
    warm = manager.warm.entries["caps"]
    await warm.opened()
    assert not out.exists(), "nothing serves it before a session takes the process"
    session = manager.create(None, str(tmp_path), warm=True)
    await manager.start(session)
    assert session.process is warm.process
    await async_wait_for(lambda: out.exists(), what="the agent's read to be answered")
    assert json.loads(out.read_text()) == {"content": "served once taken\n"}
    (caps,) = advertised(tmp_path)
    assert caps["fs"] == {"readTextFile": True, "writeTextFile": True}


async def test_a_request_to_a_warm_process_closed_untaken_is_cancelled(warm_manager, tmp_path):
    target, out = tmp_path / "a.txt", tmp_path / "read.json"
    target.write_text("never read\n")
    manager = warm_manager(ACP_TEST_READ=str(target), ACP_TEST_READ_OUT=str(out))
    manager.warm.fill(str(tmp_path))
    warm = manager.warm.entries["caps"]
    await warm.opened()
    await async_wait_for(lambda: any("waits for the session" in e.summary for e in warm.log.entries()),
                         what="the read to wait for a session")
    await manager.warm.close_all()
    answers = [e.summary for e in warm.log.entries()
               if e.kind == "response" and e.direction == "out" and e.method == "fs/read_text_file"]
    assert len(answers) == 1 and "error -32800" in answers[0], answers
