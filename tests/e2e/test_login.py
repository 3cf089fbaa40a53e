"""``:Ai login`` and ``:Ai logout`` in real Neovim against the demo agent asking for a login
(``ACP_DEMO_REQUIRE_AUTH=all``): the agent's own method (``authenticate`` with its id), a terminal
method run in a Neovim terminal (then a new process, no ``authenticate``), and the ``env_var``
method older agents still send (``ACP_DEMO_ENV_VAR_LOGIN=1``), typed without echo, reaching only
the agent's environment and never the log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT
from helpers import buffer_text, capture_notes, chat, notes, wait_for

pytestmark = pytest.mark.timeout(90)

SECRET = "sk-demo-" + "s3cr3t" * 4
SETUP = """
local login_file, pythonpath, extra = ...
_G.notes = {}
vim.notify = function(msg, level) table.insert(_G.notes, msg) end
_G.choose = {}
_G.offered = {}
vim.ui.select = function(items, opts, on_choice)
  table.insert(_G.offered, items)
  local pattern = table.remove(_G.choose, 1)
  for i, item in ipairs(items) do
    if pattern and item:find(pattern, 1, true) then return on_choice(item, i) end
  end
  on_choice(nil, nil)
end
require('acp_nvim').setup({ default_agent = 'locked', agents = { locked = {
  command = vim.g.python3_host_prog, args = { '-m', 'acp_nvim.demo_agent' },
  env = vim.tbl_extend('force', { ACP_DEMO_REQUIRE_AUTH = 'all', ACP_DEMO_LOGIN_FILE = login_file,
                                   PYTHONPATH = pythonpath }, vim.json.decode(extra)) } } })
"""


def start_locked(nvim, tmp_path: Path, **env: str):
    nvim.exec_lua(SETUP, str(tmp_path / "logged-in"), str(ROOT / "python"), json.dumps(env))
    return nvim


@pytest.fixture
def locked(nvim, tmp_path: Path):
    return start_locked(nvim, tmp_path)


@pytest.fixture
def older_agent(nvim, tmp_path: Path):
    """The demo agent offering an env_var method too, as agents did before ACP's schema dropped it."""
    return start_locked(nvim, tmp_path, ACP_DEMO_ENV_VAR_LOGIN="1")


def wait_note(nvim, text: str) -> str:
    return wait_for(lambda: next((n for n in notes(nvim) if text in n), None), timeout=30, what=repr(text))


def fail_first_start(nvim) -> None:
    """The session asks for a login; the user picks the terminal method, which needs :Ai login."""
    nvim.exec_lua("_G.choose = {...}", "Demo terminal login")
    nvim.command("Ai send hello")
    wait_note(nvim, "run :Ai login locked")


def log_of(nvim, key: str) -> str:
    nvim.command(f"Ai log {key}")
    return wait_for(lambda: buffer_text(nvim, f"acp://log/{key}") or None, timeout=10, what=f"the log of {key}")


def test_an_agent_of_the_current_schema_is_offered_its_own_and_terminal_methods_only(locked):
    fail_first_start(locked)
    offered = locked.exec_lua("return _G.offered[1]")
    assert [item.split(" (")[0] for item in offered] == ["Demo login", "Demo terminal login"], offered


def test_login_with_the_agents_own_method_authenticates_the_running_session(locked):
    locked.exec_lua("_G.choose = {...}", "Demo login")
    locked.command("Ai send hello")
    wait_for(lambda: "You said: hello" in chat(locked, "locked/1"), timeout=30, what="the first reply")
    locked.exec_lua("_G.choose = {...}", "Demo login")
    locked.command("Ai login")
    wait_note(locked, "locked: logged in with Demo login")
    assert "starting a new session" not in "\n".join(notes(locked))
    wait_for(lambda: log_of(locked, "locked/1").count("response authenticate") == 2, timeout=10,
             what="two authenticate requests answered, in the log")


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
    assert "authenticate" not in log_of(locked, "locked/2"), "a terminal method was followed by authenticate"


def test_an_older_agents_env_var_method_keeps_the_secret_out_of_sight(older_agent):
    locked = older_agent
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
