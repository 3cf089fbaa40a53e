"""``:Ai logout`` and ``:Ai delete`` against an agent that offers ``logout`` and ``session/delete``
(the demo agent with ``ACP_DEMO_CAPABILITIES=logout,delete``): real Neovim, real agent processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT
from helpers import NOTIFY, SELECT, buffer_text, chat, notes, session_state, wait_for

pytestmark = pytest.mark.timeout(120)

SETUP = """
local env = ...
require('acp_nvim').setup({ default_agent = 'demo', agents = { demo = {
  command = vim.g.python3_host_prog, args = { '-m', 'acp_nvim.demo_agent' }, env = env } } })
"""


def start(nvim, **env: str) -> None:
    nvim.exec_lua(NOTIFY + SELECT)
    nvim.exec_lua(SETUP, {"PYTHONPATH": str(ROOT / "python"), **env})


def wait_note(nvim, text: str) -> str:
    return wait_for(lambda: next((n for n in notes(nvim) if text in n), None), what=repr(text), nvim=nvim)


def reply(nvim, text: str, key: str = "demo/1") -> None:
    nvim.command(f"Ai send {text}")
    wait_for(lambda: f"You said: {text}" in chat(nvim, key) and session_state(nvim, key).get("state") == "idle",
             what=f"the reply to {text!r}", nvim=nvim)


def log_of(nvim, key: str) -> str:
    nvim.command(f"Ai log {key}")
    return wait_for(lambda: buffer_text(nvim, f"acp://log/{key}") or None, what=f"the log of {key}", nvim=nvim)


def test_logout_logs_the_agent_out_and_the_next_session_asks_for_a_login(nvim, tmp_path: Path):
    login_file = tmp_path / "logged-in"
    login_file.write_text("logged in\n")  # logged in earlier, through the terminal method
    start(nvim, ACP_DEMO_REQUIRE_AUTH="all", ACP_DEMO_LOGIN_FILE=str(login_file), ACP_DEMO_CAPABILITIES="logout")
    reply(nvim, "hello while logged in")
    nvim.command("Ai logout")
    wait_note(nvim, "demo: logged out")
    assert not login_file.exists(), "the agent forgot its login"
    log = wait_for(lambda: "response logout" in (text := log_of(nvim, "demo/1")) and text,
                   what="logout answered, in the log", nvim=nvim)
    assert "request logout" in log
    nvim.exec_lua("_G.choose = { 'Demo terminal login' }")
    nvim.command("Ai new demo")
    wait_note(nvim, "run :Ai login demo")


def test_delete_deletes_the_session_in_the_agent_and_the_local_history(nvim, tmp_path: Path):
    agent_dir = tmp_path / "agent-sessions"
    start(nvim, ACP_DEMO_SESSIONS_DIR=str(agent_dir), ACP_DEMO_CAPABILITIES="delete")
    reply(nvim, "delete me")
    (session_id,) = [data["id"] for p in agent_dir.glob("*.json")
                     if ["user", "delete me"] in (data := json.loads(p.read_text()))["history"]]
    nvim.command("Ai close")
    wait_for(lambda: "session closed" in chat(nvim), what="the session closed", nvim=nvim)
    nvim.command(f"Ai delete {session_id}")
    note = wait_note(nvim, f"deleted session {session_id}")
    assert "agent demo" in note and "offers no session/delete" not in note, note
    assert not [p for p in agent_dir.glob("*.json") if json.loads(p.read_text())["id"] == session_id], \
        "the agent no longer has the session"
