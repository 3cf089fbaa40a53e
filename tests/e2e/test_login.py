"""``:Ai login`` and ``:Ai logout`` in real Neovim against the demo agent asking for a login
(``ACP_DEMO_REQUIRE_AUTH=all``): a terminal method run in a Neovim terminal, an env_var method
typed without echo that reaches only the agent's environment and never the log."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ROOT
from helpers import NOTIFY, SELECT, buffer_text, capture_notes, chat, notes, wait_for

pytestmark = pytest.mark.timeout(90)

SECRET = "sk-demo-" + "s3cr3t" * 4
SETUP = """
local login_file, pythonpath = ...
""" + NOTIFY + SELECT + """require('acp_nvim').setup({ default_agent = 'locked', agents = { locked = {
  command = vim.g.python3_host_prog, args = { '-m', 'acp_nvim.demo_agent' },
  env = { ACP_DEMO_REQUIRE_AUTH = 'all', ACP_DEMO_LOGIN_FILE = login_file, PYTHONPATH = pythonpath } } } })
"""


@pytest.fixture
def locked(nvim, tmp_path: Path):
    nvim.exec_lua(SETUP, str(tmp_path / "logged-in"), str(ROOT / "python"))
    return nvim


def wait_note(nvim, text: str) -> str:
    return wait_for(lambda: next((n for n in notes(nvim) if text in n), None), timeout=30, what=repr(text))


def fail_first_start(nvim) -> None:
    """The session asks for a login; the user picks the terminal method, which needs :Ai login."""
    nvim.exec_lua("_G.choose = {...}", "Demo terminal login")
    nvim.command("Ai send hello")
    wait_note(nvim, "run :Ai login locked")


def test_login_through_a_terminal_method(locked, tmp_path):
    fail_first_start(locked)
    locked.exec_lua("_G.choose = {...}", "Demo terminal login")
    locked.command("Ai login")
    buf = wait_for(lambda: (b := locked.funcs.bufnr("acp://login/locked")) > 0 and b, timeout=30,
                   what=f"a terminal (messages: {notes(locked)})")
    job = wait_for(lambda: locked.api.buf_get_var(buf, "terminal_job_id"), timeout=10, what="the terminal job")
    wait_for(lambda: "Type anything" in "\n".join(locked.api.buf_get_lines(buf, 0, -1, False)), timeout=30,
             what="the login prompt")
    locked.api.chan_send(job, "me\r")
    wait_note(locked, "locked: logged in with Demo terminal login")
    assert (tmp_path / "logged-in").exists()
    locked.command("Ai send hello after the terminal")
    wait_for(lambda: "You said: hello after the terminal" in chat(locked, "locked/2"), timeout=30, what="a reply")


def test_login_through_an_env_var_method_keeps_the_secret_out_of_sight(locked):
    fail_first_start(locked)
    locked.exec_lua("local pick, key = ...; _G.choose = { pick }; "
                    "vim.fn.inputsecret = function(prompt) _G.asked = prompt; return key end", "Demo API key", SECRET)
    locked.command("Ai login locked")
    wait_note(locked, "locked: DEMO_API_KEY set for its new sessions")
    assert locked.exec_lua("return _G.asked") == "Demo API key: "
    state = "return (require('acp_nvim.state').sessions['locked/2'] or {}).state"
    wait_for(lambda: locked.exec_lua(state) == "idle", timeout=30, what="the new session to start without asking")
    locked.command("Ai send echo the key is " + SECRET)
    wait_for(lambda: "## You" in chat(locked, "locked/2") and "turn ended" in chat(locked, "locked/2"), timeout=30,
             what="the turn")
    locked.command("Ai log locked/2")
    log = wait_for(lambda: buffer_text(locked, "acp://log/locked/2") or None, timeout=10, what="the log")
    assert SECRET not in log, log[max(0, log.find(SECRET) - 600):log.find(SECRET) + 100]
    assert "[redacted:$DEMO_API_KEY]" in log
    assert not any(SECRET in n for n in notes(locked))


def test_logout_where_the_agent_offers_none_is_a_clear_error(nvim):
    capture_notes(nvim)
    nvim.command("Ai")
    wait_for(lambda: nvim.exec_lua("return (require('acp_nvim.state').sessions['demo/1'] or {}).state") == "idle",
             timeout=30, what="idle")
    nvim.command("Ai logout")
    wait_note(nvim, "does not offer logout")
