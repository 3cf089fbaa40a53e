"""The agent's ``protocolVersion`` is checked: one acp.nvim does not speak ends the connection with
one line naming both sides' versions, and the log keeps the exchange (a real Neovim, a scripted
agent on the official SDK over real pipes)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from helpers import NOTIFY, buffer_text, notes, wait_for

pytestmark = pytest.mark.timeout(120)

AGENT = Path(__file__).with_name("version_agent.py")
SETUP = """
local python, script, version = ...
require('acp_nvim').setup({
  agents = {speaks = {command = python, args = {script, version}}},
  default_agent = 'speaks',
})
"""


def start(nvim, version: int) -> None:
    nvim.exec_lua(NOTIFY)
    nvim.exec_lua(SETUP, sys.executable, str(AGENT), str(version))
    nvim.command("Ai")


def test_an_agent_answering_version_2_is_disconnected_with_one_line(nvim, tmp_path):
    start(nvim, 2)
    said = "speaks ACP protocol version 2; acp.nvim speaks version 1"
    message = wait_for(lambda: next((n for n in notes(nvim) if said in n), None), what="the version notice")
    assert "\n" not in message and "Traceback" not in message
    assert said in buffer_text(nvim, "acp://chat/speaks/1")
    export = tmp_path / "log.jsonl"
    nvim.command(f"Ai log export {export}")
    wait_for(lambda: export.exists() and export.read_text().endswith("\n"), what="the export")
    entries = [json.loads(line) for line in export.read_text().splitlines()]
    exchange = [e for e in entries if e.get("method") == "initialize"
                or (isinstance(e.get("message"), dict) and "protocolVersion" in json.dumps(e["message"]))]
    assert {e.get("direction") for e in exchange} >= {"out", "in"}, "the log has the initialize exchange"
    assert any(said in str(e.get("summary", "")) for e in entries)
    assert nvim.eval("1 + 1") == 2


def test_an_agent_answering_version_1_gets_a_session(nvim):
    start(nvim, 1)
    wait_for(lambda: "idle" in nvim.exec_lua("return require('acp_nvim').status()"), what="a session")
    assert not any("protocol version" in n for n in notes(nvim))
