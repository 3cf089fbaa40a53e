"""Ways forward, not dead ends: an agent whose command is missing names its install line and keeps no
prompt behind a restart; :checkhealth does not call it OK; an unknown agent id names :Ai install
when the registry knows it (real Neovim, real host)."""

from __future__ import annotations

import pytest

from helpers import NOTIFY, buffer_text, notes, wait_for

pytestmark = pytest.mark.timeout(90)

GEMINI = "agents = { gemini = { command = 'gemini-missing-acp-xyz' } }"
INSTALL = ":Ai install gemini"


def session(nvim, key: str) -> dict:
    return nvim.exec_lua("return require('acp_nvim.state').sessions[...] or vim.empty_dict()", key)


def test_a_missing_command_names_its_install_and_queues_nothing(nvim):
    nvim.exec_lua(NOTIFY)
    nvim.exec_lua("require('acp_nvim').setup({ agents = { gemini = { command = 'gemini' } },"
                  " default_agent = 'gemini' })")
    nvim.command("let $PATH = '/usr/bin/nonexistent-for-test'")  # gemini is not installed here
    nvim.command("Ai send hello there")
    chat = "acp://chat/gemini/1"
    text = wait_for(lambda: "not sent (the agent is not installed): hello there" in buffer_text(nvim, chat)
                    and buffer_text(nvim, chat), timeout=30, what="the failed start", nvim=nvim)
    assert "cannot start agent 'gemini': gemini is not installed (not found on PATH); install it: " \
           "npm install -g @google/gemini-cli or :Ai install gemini" in text
    assert "restarts the agent" not in text
    state = wait_for(lambda: session(nvim, "gemini/1").get("state") == "failed" and session(nvim, "gemini/1"),
                     timeout=30, what="the failed session")
    assert state.get("recovery", "") == "" and not state.get("queue")
    nvim.command("Ai send again")  # still missing: refused at once, wherever it goes, and no restart
    def chats() -> str:
        return "\n".join(buffer_text(nvim, name) for name in nvim.exec_lua(
            "return vim.tbl_map(vim.api.nvim_buf_get_name, vim.api.nvim_list_bufs())") if name.startswith("acp://chat/"))
    wait_for(lambda: "not sent" in chats() and "again" in chats(), timeout=30, what="the refused prompt", nvim=nvim)
    assert "restarting it" not in chats() and "restarts the agent" not in chats()
    assert not any(s.get("queue") for s in nvim.exec_lua("return vim.tbl_values(require('acp_nvim.state').sessions)"))


def test_an_unknown_command_without_an_install_line_says_only_what_is_missing(nvim):
    nvim.exec_lua(NOTIFY)
    nvim.exec_lua("require('acp_nvim').setup({ agents = { mine = { command = 'mine-missing-xyz' } },"
                  " default_agent = 'mine' })")
    nvim.command("Ai send hi")
    text = wait_for(lambda: "not installed" in buffer_text(nvim, "acp://chat/mine/1")
                    and buffer_text(nvim, "acp://chat/mine/1"), timeout=30, what="the failed start", nvim=nvim)
    assert "cannot start agent 'mine': mine-missing-xyz is not installed (not found on PATH)\n" in text + "\n"
    assert "install it" not in text and "Traceback" not in text


def test_checkhealth_does_not_call_a_missing_default_agent_ok(nvim, tmp_path):
    nvim.exec_lua(f"require('acp_nvim').setup({{ {GEMINI}, default_agent = 'gemini' }})")
    nvim.command("checkhealth acp_nvim")
    report = "\n".join(nvim.current.buffer[:])
    assert "default agent: gemini" not in report.replace("default agent gemini", "")
    assert 'ERROR default agent gemini: command "gemini-missing-acp-xyz" not found on PATH' in report, report
    nvim.exec_lua("require('acp_nvim').setup({ default_agent = 'demo' })")
    nvim.command("bwipeout! | checkhealth acp_nvim")
    assert "OK default agent: demo (bundled)" in "\n".join(nvim.current.buffer[:])


def test_an_unknown_agent_id_suggests_ai_install_or_lists_the_agents(nvim):
    nvim.exec_lua(NOTIFY)
    nvim.command("Ai new gemini")
    said = wait_for(lambda: [n for n in notes(nvim) if "unknown agent" in n], timeout=30, what="the answer",
                    nvim=nvim)
    assert f"unknown agent 'gemini'; the ACP registry has it: {INSTALL}; configured: demo" in said[-1]
    nvim.command("Ai new zzz-nobody")
    said = wait_for(lambda: [n for n in notes(nvim) if "'zzz-nobody'" in n], timeout=30, what="the answer",
                    nvim=nvim)
    assert "unknown agent 'zzz-nobody'; configured: demo" in said[-1] and ":Ai install" not in said[-1]
