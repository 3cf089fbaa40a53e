"""The user's permission policy holds for the whole session, in real Neovim: an agent that switches
itself mid-session to a mode that asks nothing is switched back, and the chat says so."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from helpers import buffer_text, wait_for

pytestmark = pytest.mark.timeout(60)

MODE_AGENT = Path(__file__).with_name("mode_agent.py")
CHAT = "acp://chat/probe/1"
SETUP = """
local agent = ...
_G.acp_test_notes = {}
vim.notify = function(msg, level) table.insert(_G.acp_test_notes, msg) end
require('acp_nvim').setup({ agents = { probe = agent }, default_agent = 'probe' })
"""
CLAUDE = {"ACP_TEST_AGENT_NAME": "@agentclientprotocol/claude-agent-acp",
          "ACP_TEST_MODES": "default,acceptEdits,plan,auto", "ACP_TEST_ASKING": "default"}


def mode(nvim) -> str | None:
    return nvim.exec_lua("return (require('acp_nvim.state').current() or {}).mode")


def state(nvim) -> str | None:
    return nvim.exec_lua("return (require('acp_nvim.state').current() or {}).state")


@pytest.mark.parametrize("via", ["update", "option"])
def test_an_agent_that_switches_itself_to_auto_is_switched_back(nvim, workspace, via):
    env = {**CLAUDE, **({"ACP_TEST_MODE_OPTION": "1"} if via == "option" else {})}
    nvim.exec_lua(SETUP, {"command": sys.executable, "args": [str(MODE_AGENT)], "env": env})
    nvim.command("Ai open")
    wait_for(lambda: state(nvim) == "idle", timeout=20, what="the session to start (in mode default)")
    nvim.command("Ai send " + json.dumps({"op": "switch", "mode": "auto", "via": via}))
    chat = wait_for(lambda: "the agent switched itself to mode auto" in buffer_text(nvim, CHAT)
                    and buffer_text(nvim, CHAT), timeout=20, what="the chat to say so")
    assert "switched to mode default, which asks" in chat
    wait_for(lambda: mode(nvim) == "default", what="the statusline's mode back to default")
    target = workspace / "target.txt"
    target.write_text("before\n")
    nvim.command("Ai send " + json.dumps({"op": "write", "path": str(target), "text": "after\n"}))
    wait_for(lambda: nvim.exec_lua("return #require('acp_nvim.review').list()") == 1, timeout=20,
             what="the next edit to ask (a review)")
    assert target.read_text() == "before\n"
