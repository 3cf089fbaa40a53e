"""End to end through the real Python host and the demo agent process."""

from __future__ import annotations

import contextlib
import os

import pytest

from helpers import NOTIFY, buffer_text, notes, wait_for

CHAT = "acp://chat/demo/1"
PROMPT = "acp://prompt/demo/1"

CAPTURE_NOTIFY = NOTIFY



@pytest.mark.timeout(60)
def test_send_streams_reply_into_chat_buffer(nvim):
    nvim.command("Ai send hello from the test")
    text = wait_for(lambda: "turn ended: end_turn" in buffer_text(nvim, CHAT) and buffer_text(nvim, CHAT),
                    timeout=20, what="the end of the turn")
    assert "## You\nhello from the test" in text
    assert "You said: hello from the test" in text
    assert "> Thinking about: hello from the test" in text
    assert text.index("## You") < text.index("Thinking") < text.index("You said")
    buf = nvim.funcs.bufnr(CHAT)
    assert nvim.api.get_option_value("buftype", {"buf": buf}) == "nofile"
    assert nvim.api.get_option_value("swapfile", {"buf": buf}) is False


@pytest.mark.timeout(60)
def test_cancel_mid_stream_ends_turn_cancelled(nvim):
    nvim.command("Ai send slow 400")
    wait_for(lambda: ("## demo" in buffer_text(nvim, CHAT) and "chunk" in buffer_text(nvim, CHAT).lower())
             or len(buffer_text(nvim, CHAT)) > 200, timeout=20, what="streaming to start")
    nvim.command("Ai cancel")
    wait_for(lambda: "turn ended: cancelled" in buffer_text(nvim, CHAT), timeout=5, what="cancelled turn")
    assert nvim.exec_lua("return require('acp_nvim').status()").startswith("demo/1 · idle")


@pytest.mark.timeout(60)
def test_prompt_area_sends_with_key(nvim):
    nvim.command("Ai")
    wait_for(lambda: "idle" in nvim.exec_lua("return require('acp_nvim').status()"), timeout=20)
    assert nvim.api.buf_get_name(0) == CHAT
    nvim.api.input("<C-w>ji")  # the prompt window is below the chat window
    wait_for(lambda: nvim.api.buf_get_name(0) == PROMPT and nvim.api.get_mode()["mode"] == "i",
             what="insert mode in the prompt window")
    nvim.api.input("typed in the prompt<C-s>")
    wait_for(lambda: "You said: typed in the prompt" in buffer_text(nvim, CHAT), timeout=20)
    lines = nvim.api.buf_get_lines(nvim.funcs.bufnr(PROMPT), 0, -1, False)
    assert lines == [""], "the prompt is cleared after sending"


@pytest.mark.timeout(60)
def test_missing_agent_command_is_reported_clearly(nvim):
    nvim.exec_lua(CAPTURE_NOTIFY)
    nvim.exec_lua("require('acp_nvim').setup({agents = {nope = {command = 'no-such-acp-agent-xyz'}},"
                  " default_agent = 'nope'})")
    nvim.command("Ai send hi")
    wait_for(lambda: any("no-such-acp-agent-xyz" in n for n in notes(nvim)), timeout=20)
    message = next(n for n in notes(nvim) if "no-such-acp-agent-xyz" in n)
    assert "cannot start agent 'nope'" in message
    assert "Traceback" not in message
    assert "failed to start" in buffer_text(nvim, "acp://chat/nope/1")
    assert nvim.eval("1 + 1") == 2  # Neovim stays usable


@pytest.mark.timeout(60)
def test_agent_exiting_during_initialize_is_reported(nvim):
    nvim.exec_lua(CAPTURE_NOTIFY)
    nvim.exec_lua("""require('acp_nvim').setup({agents = {dies = {command = vim.g.python3_host_prog,
        args = {'-c', 'import sys; sys.stderr.write("no credentials\\\\n"); sys.exit(3)'}}},
        default_agent = 'dies'})""")
    nvim.command("Ai send hi")
    wait_for(lambda: any("exited with code 3" in n for n in notes(nvim)), timeout=20)
    message = next(n for n in notes(nvim) if "exited with code 3" in n)
    assert "during initialize" in message
    assert "no credentials" in message
    assert "failed" in nvim.exec_lua("return require('acp_nvim').status()")


@pytest.mark.timeout(60)
def test_unknown_subcommand_is_an_error_message(nvim):
    nvim.exec_lua(CAPTURE_NOTIFY)
    nvim.command("Ai frobnicate")
    wait_for(lambda: any("unknown subcommand 'frobnicate'" in n for n in notes(nvim)), timeout=20)


@pytest.mark.timeout(60)
def test_quitting_neovim_leaves_no_agent_process(nvim_env, tmp_path):
    from conftest import start_nvim

    instance = start_nvim(tmp_path, cold=True)  # the agent must descend from Neovim
    instance.command("Ai send hello")
    wait_for(lambda: "turn ended" in buffer_text(instance, CHAT), timeout=20)
    agents = set(_demo_agents(instance.funcs.getpid()))
    assert agents, "the demo agent runs while the session is open"
    with contextlib.suppress(Exception):
        instance.command("qa!")
    wait_for(lambda: not any(os.path.exists(f"/proc/{pid}") for pid in agents), timeout=10,
             what="agent processes to exit")


def _demo_agents(ancestor: int) -> list[int]:
    """Demo agent processes descending from ``ancestor`` (other test runs may have their own)."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if b"acp_nvim.demo_agent" in f.read() and _descends(int(entry), ancestor):
                        pids.append(int(entry))
            except OSError:
                continue
    return pids


def _descends(pid: int, ancestor: int) -> bool:
    while pid > 1:
        if pid == ancestor:
            return True
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
    return False


@pytest.mark.timeout(60)
def test_agent_asking_for_login_gets_authenticate(nvim):
    nvim.exec_lua("""
      _G.acp_test_select = {}
      vim.ui.select = function(items, opts, on_choice)
        table.insert(_G.acp_test_select, {prompt = opts.prompt, items = items})
        on_choice(items[1], 1)
      end
      require('acp_nvim').setup({agents = {locked = {command = vim.g.python3_host_prog,
        args = {'-m', 'acp_nvim.demo_agent'}, env = {ACP_DEMO_REQUIRE_AUTH = '1'}}},
        default_agent = 'locked'})""")
    nvim.command("Ai send hello after login")
    chat = "acp://chat/locked/1"
    wait_for(lambda: "You said: hello after login" in buffer_text(nvim, chat), timeout=20)
    asked = nvim.exec_lua("return _G.acp_test_select")
    assert asked[0]["items"] == ["Demo login (pretend to log in)"]
    assert "locked needs you to log in" in asked[0]["prompt"]


@pytest.mark.timeout(60)
def test_dismissed_login_is_a_clear_error(nvim):
    nvim.exec_lua(CAPTURE_NOTIFY)
    nvim.exec_lua("""
      vim.ui.select = function(items, opts, on_choice) on_choice(nil, nil) end
      require('acp_nvim').setup({agents = {locked = {command = vim.g.python3_host_prog,
        args = {'-m', 'acp_nvim.demo_agent'}, env = {ACP_DEMO_REQUIRE_AUTH = '1'}}},
        default_agent = 'locked'})""")
    nvim.command("Ai send hello")
    wait_for(lambda: any("authentication of agent 'locked' was cancelled" in n for n in notes(nvim)), timeout=20)
    text = buffer_text(nvim, "acp://chat/locked/1")
    # the prompt is kept in the queue (sent after a restart), and the chat says so
    assert "not sent yet (the agent is not running): hello" in text
    assert "they stay in the queue" in text


@pytest.mark.timeout(60)
def test_restart_after_crash_recovers_without_restarting_neovim(nvim):
    nvim.command("Ai send crash")
    wait_for(lambda: "agent exited with code 3" in buffer_text(nvim, CHAT), timeout=20)
    wait_for(lambda: "failed" in nvim.exec_lua("return require('acp_nvim').status()"), timeout=5)
    nvim.command("Ai restart")
    wait_for(lambda: "agent restarted" in buffer_text(nvim, CHAT), timeout=20)
    nvim.command("Ai send back again")
    wait_for(lambda: "You said: back again" in buffer_text(nvim, CHAT), timeout=20)
    text = buffer_text(nvim, CHAT)
    assert text.count("## You\ncrash") == 1, "history is kept, not replayed twice"


@pytest.mark.timeout(90)
def test_crash_notice_then_a_prompt_or_the_restart_key_brings_the_agent_back(nvim):
    nvim.command("Ai send crash")
    wait_for(lambda: "agent exited with code 3" in buffer_text(nvim, CHAT), timeout=20)
    text = buffer_text(nvim, CHAT)
    assert "demo agent: crashing on purpose" in text, "the crash notice holds the stderr tail"
    assert "<LocalLeader>R restarts the agent (after asking) and reopens this session" in text
    nvim.command("Ai send kept while down")
    wait_for(lambda: "You said: kept while down" in buffer_text(nvim, CHAT), timeout=30,
             what="a prompt to a stopped agent restarts it and is sent")
    nvim.command("Ai send crash")
    wait_for(lambda: buffer_text(nvim, CHAT).count("agent exited with code 3") == 2, timeout=20)
    nvim.command(f"buffer {CHAT}")
    desc = nvim.exec_lua("return vim.fn.maparg('<LocalLeader>R', 'n', false, true).desc")
    assert "restart" in desc
    nvim.exec_lua("vim.ui.select = function(items, opts, on_choice) on_choice(items[1], 1) end")  # yes
    nvim.input("\\R")  # <LocalLeader>R: the default maplocalleader is a backslash
    wait_for(lambda: buffer_text(nvim, CHAT).count("agent restarted") == 2, timeout=30,
             what="the restart key restarted the agent")
    nvim.command("Ai send after the key")
    wait_for(lambda: "You said: after the key" in buffer_text(nvim, CHAT), timeout=20)
