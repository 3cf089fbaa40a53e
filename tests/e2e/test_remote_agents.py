"""A remote agent end to end: real Neovim and host, the demo agent served over WebSocket."""

from __future__ import annotations

import re
import signal

import pytest

from helpers import NOTIFY, buffer_text, capture_notes, notes, wait_for
from ws_server import demo_ws_server

pytestmark = pytest.mark.timeout(90)

CHAT = "acp://chat/far/1"


def chat(nvim) -> str:
    return buffer_text(nvim, CHAT)


def turns(nvim, count: int) -> str:
    return wait_for(lambda: chat(nvim).count("── turn ended") >= count and chat(nvim),
                    timeout=30, what=f"{count} turn(s) to end")


def session_state(nvim) -> str | None:
    return nvim.exec_lua("return (require('acp_nvim.state').sessions['far/1'] or {}).state")


def test_a_remote_agent_chats_runs_terminals_logs_and_survives_a_dropped_connection(nvim, workspace):
    with demo_ws_server("--resume") as (url, server):
        nvim.exec_lua("require('acp_nvim').setup({ agents = { far = { url = ..., headers = { Authorization = "
                      "'Bearer sekrit-token-123' } } }, permissions = { policy = 'trust' } })", url)
        nvim.command("Ai new far")
        wait_for(lambda: session_state(nvim) == "idle", timeout=20, what="the remote session to start")
        nvim.command("Ai send hello from afar")
        assert "You said: hello from afar" in turns(nvim, 1)
        nvim.command("Ai send terminal echo ran-remotely")
        assert "exit code 0" in turns(nvim, 2) and "ran-remotely" in chat(nvim)

        server.send_signal(signal.SIGUSR1)  # the network drops the connection
        wait_for(lambda: "reconnected (resumed)" in chat(nvim), timeout=30, what="the reconnect")
        wait_for(lambda: session_state(nvim) == "idle", timeout=20, what="the resumed session")
        nvim.command("Ai send still there")
        assert "You said: still there" in turns(nvim, 3)

        nvim.command("Ai log")
        log = wait_for(lambda: "connection closed" in buffer_text(nvim, "acp://log/far/1")
                       and buffer_text(nvim, "acp://log/far/1"), what="the log of the remote session")
        assert "connected to ws://" in log and "session/resume" in log and "session/prompt" in log
        assert "sekrit-token-123" not in log


CAPTURE_NOTIFY = NOTIFY


def outward_address() -> str | None:
    """This machine's address on its network (no packet is sent), or None with loopback only."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
        except OSError:
            return None
        address = probe.getsockname()[0]
    return None if address.startswith("127.") else address


def test_clear_text_ws_off_this_machine_is_refused(nvim):
    """The configuration is read at the first :Ai: one line names the problem (the whole reason is in
    :checkhealth), the agent is left out, and no session opens."""
    capture_notes(nvim)
    nvim.exec_lua("require('acp_nvim').setup({ agents = { far = { url = 'ws://agents.example.com:8765' } } })")
    nvim.command("Ai new far")
    wait_for(lambda: any("agents.far.url: ws:// is not encrypted" in n for n in notes(nvim)), what="the one line",
             nvim=nvim)
    problems = nvim.exec_lua("return require('acp_nvim.config.options').problems")
    assert any(re.search(r"agents\.far\.url: ws:// is not encrypted.*set insecure = true", p) for p in problems)
    assert not session_state(nvim), "no session was opened"


def test_insecure_allows_clear_text_ws_and_warns_once_per_session_start(nvim):
    address = outward_address()
    if address is None:
        pytest.skip("this machine has no address but loopback")
    with demo_ws_server("--resume", host=address) as (url, server):
        assert not url.startswith("ws://127.")
        nvim.exec_lua(CAPTURE_NOTIFY)
        nvim.exec_lua("require('acp_nvim').setup({ agents = { far = { url = ..., insecure = true } }, "
                      "permissions = { policy = 'trust' } })", url)
        nvim.command("Ai new far")
        wait_for(lambda: session_state(nvim) == "idle", timeout=20, what="the remote session to start")
        warning = "is not encrypted (insecure = true)"
        wait_for(lambda: warning in chat(nvim), what="the chat's warning")
        assert sum(warning in note for note in notes(nvim)) == 1
        server.send_signal(signal.SIGUSR1)  # a reconnect is no new session start
        wait_for(lambda: "reconnected (resumed)" in chat(nvim), timeout=30, what="the reconnect")
        nvim.command("Ai send still there")
        assert "You said: still there" in turns(nvim, 1)
        assert chat(nvim).count(warning) == 1 and sum(warning in note for note in notes(nvim)) == 1
