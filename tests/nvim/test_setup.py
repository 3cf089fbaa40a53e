"""setup() validation, :Ai completion, docs and health in a real headless Neovim."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import NVIM, ROOT
from helpers import buffer_text, wait_for

CHAT = "acp://chat/demo/1"

pytestmark = pytest.mark.timeout(30)


def setup_error(nvim, opts_lua: str) -> str:
    """The problems the options have when first used (setup() only records them: nothing loads at startup):
    one per line, each naming its key path; reading the configuration never raises."""
    return nvim.exec_lua(f"""local m = require('acp_nvim'); m.setup({opts_lua}); local _ = m.config
        return table.concat(require('acp_nvim.config.options').problems, '\\n')""")


def test_setup_without_call_uses_demo(nvim):
    assert nvim.exec_lua("return require('acp_nvim').config.default_agent") == "demo"


def test_setup_accepts_agents_as_configuration(nvim):
    assert setup_error(nvim, "{agents = {g = {command = 'gemini', args = {'--acp'}, env = {K = 'v'}}},"
                             " default_agent = 'g'}") == ""
    assert nvim.exec_lua("return require('acp_nvim').config.agents.g.args[1]") == "--acp"


@pytest.mark.parametrize(("opts", "message"), [
    ("{agents = {g = {args = {}}}}", "agents.g.command: expected string, got nil"),
    ("{agents = {g = {command = 'x', args = {1}}}}", "agents.g.args[1]: expected string, got number"),
    ("{agents = {g = {command = 'x', bogus = 1}}}", "agents.g.bogus: unknown key"),
    ("{default_agent = 'missing'}", "default_agent: no agent named \"missing\""),
    ("{log = {level = 'loud'}}", "log.level: expected one of"),
    ("{chat = {position = 'top'}}", "chat.position"),
    ("{redaction = {patterns = {42}}}", "redaction.patterns[1]: expected string, got number"),
    ("'nope'", "opts: expected a table"),
    ("{timeouts = {handshake = 0}}", "timeouts.handshake: expected seconds"),
    ("{timeouts = {cancel = 'soon'}}", "timeouts.cancel: expected number"),
    ("{timeouts = {hang = 3}}", "timeouts.hang: unknown key"),
    ("{keymaps = {restart = 1}}", "keymaps.restart: expected string"),
    ("{history = {max_sessions = 0}}", "history.max_sessions: expected a whole number >= 1"),
    ("{history = 'off'}", "history: expected table"),
    ("{log = {bogus = 1}}", "log.bogus: unknown key (known: max_entries, max_bytes, level)"),
    ("{terminals = {kill_grace = 0}}", "terminals.kill_grace: expected seconds > 0"),
    ("{chat = {max_block_lines = 0}}", "chat.max_block_lines: expected a whole number >= 1"),
    ("{permissions = {arm_ms = 10001}}", "permissions.arm_ms: expected a whole number from 0 to 10000"),
    ("{agents = {r = {url = 'ws://example.com'}}}", "agents.r.url: ws:// is not encrypted"),
    ("{agents = {g = {command = 'x', warm = 'yes'}}}", "agents.g.warm: expected boolean, got string"),
    ("{warm = 'always'}", "warm: expected one of off, default"),
    ("{warm_idle_s = 0}", "warm_idle_s: expected seconds, more than 0 and at most 86400"),
    ("{notify = {when = 'sometimes'}}", "notify.when: expected one of unfocused, always, never"),
    ("{notify = {beep = true}}", "notify.beep: unknown key (known: when, terminal, sequence)"),
    ("{worktrees = {folder = 3}}", "worktrees.folder: expected string, got number"),
])
def test_setup_errors_name_the_key_path(nvim, opts, message):
    assert message in setup_error(nvim, opts)


def test_the_defaults_are_the_generated_schemas(nvim):
    defaults = nvim.exec_lua("return require('acp_nvim').config")
    assert defaults["keymaps"]["restart"] == "<LocalLeader>R" and defaults["timeouts"]["handshake"] == 60
    assert defaults["permissions"]["rejected"]["max_bytes"] == 50 * 1024 * 1024


def test_history_false_is_accepted(nvim):
    assert setup_error(nvim, "{history = false}") == ""
    assert nvim.exec_lua("return require('acp_nvim').config.history") is False


def test_ai_completion_lists_subcommands_and_agents(nvim):
    nvim.exec_lua("require('acp_nvim').setup({agents = {gem = {command = 'gemini'}}})")
    subs = nvim.funcs.getcompletion("Ai ", "cmdline")
    assert {"send", "cancel", "new", "open"} <= set(subs)
    assert set(nvim.funcs.getcompletion("Ai new ", "cmdline")) == {"--worktree", "demo", "gem"}


def test_status_is_empty_without_session(nvim):
    assert nvim.exec_lua("return require('acp_nvim').status()") == ""


def test_helptags_build_without_duplicates(tmp_path):
    doc = tmp_path / "doc"
    doc.mkdir()
    for path in (ROOT / "doc").glob("*.txt"):
        (doc / path.name).write_text(path.read_text())
    result = subprocess.run([NVIM, "--headless", "-u", "NONE", "-c", f"helptags {doc}", "-c", "qa!"],
                            capture_output=True, text=True, timeout=20)
    assert result.returncode == 0 and "E154" not in result.stderr + result.stdout, result.stderr
    tags = (doc / "tags").read_text()
    for tag in ("acp_nvim.setup()", ":Ai", ":Ai-send", ":Ai-cancel", "acp_nvim.status()"):
        assert f"{tag}\t" in tags


def test_checkhealth_reports_host_and_plugin(nvim):
    nvim.command("checkhealth acp_nvim")
    text = "\n".join(nvim.api.buf_get_lines(0, 0, -1, False))
    assert "acp.nvim" in text
    for found in ("agent-client-protocol 0.12.", "pynvim 0.6.", "pydantic 2.", "mcp 2.", "orjson 3.", "websockets 1"):
        assert f"OK {found}" in text, found
    assert "from g:acp_nvim_python" in text and "what is missing" not in text
    assert "the Python host is not started yet" in text
    assert Path(NVIM).exists()


def test_checkhealth_names_what_is_missing_and_the_one_command_that_fixes_it(nvim, tmp_path):
    fake = tmp_path / "python"
    fake.write_text('#!/bin/sh\necho \'{"python": "3.12.1", "packages": {"agent-client-protocol": "0.12.1", '
                    '"pynvim": "0.6.0", "pydantic": "2.1.0", "mcp": null, "orjson": null, "websockets": null}}\'\n')
    fake.chmod(0o755)
    nvim.vars["acp_nvim_python"] = str(fake)
    nvim.command("checkhealth acp_nvim")
    text = "\n".join(nvim.api.buf_get_lines(0, 0, -1, False))
    assert "OK agent-client-protocol 0.12.1" in text and "ERROR pydantic: 2.1.0 (needs pydantic>=2.7,<3)" in text
    assert "ERROR mcp: missing" in text and "optional: orjson missing" in text
    assert f'fixed by: {fake} -m pip install --upgrade "pydantic>=2.7,<3" "mcp>=2.3,<3"' in text
    nvim.command("bwipeout!")
    nvim.command("unlet g:acp_nvim_python")
    nvim.vars["python3_host_prog"] = str(fake)  # not chosen for acp.nvim: the venv is the fix
    nvim.command("checkhealth acp_nvim")
    text = "\n".join(nvim.api.buf_get_lines(0, 0, -1, False))
    assert "what is missing is fixed by: :Ai deps" in text


def test_a_key_set_to_false_is_off(nvim):
    assert setup_error(nvim, "{keymaps = {restart = false, retry = false}}") == ""
    keymaps = nvim.exec_lua("return require('acp_nvim').config.keymaps")
    assert keymaps["restart"] == "" and keymaps["retry"] == "", "false is off, as '' is"
    assert keymaps["send"] == "<C-s>", "the other keys keep their defaults"


@pytest.mark.parametrize(("opts", "message"), [
    ("{keymap = {send = '<C-x>'}}", "keymap: unknown key; did you mean keymaps?"),
    ("{defualt_agent = 'demo'}", "defualt_agent: unknown key; did you mean default_agent?"),
    ("{chat = {positon = 'left'}}", "chat.positon: unknown key; did you mean position?"),
    ("{keymaps = {sned = '<C-x>'}}", "keymaps.sned: unknown key; did you mean send?"),
    ("{agents = {g = {comand = 'x', command = 'x'}}}", "agents.g.comand: unknown key; did you mean command?"),
    ("{mcp_servers = {m = {command = 'x', agrs = {}}}}", "mcp_servers.m.agrs: unknown key; did you mean args?"),
    ("{agents = {g = {command = 'x', mcp_servers = {m = {type = 'http', url = 'http://h', header = {}}}}}}",
     "agents.g.mcp_servers.m.header: unknown key; did you mean headers?"),
    ("{permissions = {polciy = 'ask'}}", "permissions.polciy: unknown key; did you mean policy?"),
    ("{permissions = {rejected = {max_file = 3}}}",
     "permissions.rejected.max_file: unknown key; did you mean max_files?"),
    ("{timeouts = {handshak = 3}}", "timeouts.handshak: unknown key; did you mean handshake?"),
    ("{notify = {wehn = 'always'}}", "notify.wehn: unknown key; did you mean when?"),
])
def test_typos_at_every_level_name_the_path_and_the_nearest_key(nvim, opts, message):
    assert setup_error(nvim, opts) == message
    assert nvim.exec_lua("return require('acp_nvim').config") is not None, "the plugin runs on"


def test_an_unknown_key_far_from_any_known_one_lists_them_instead_of_guessing(nvim):
    assert setup_error(nvim, "{chat = {zzzz = 1}}") == (
        "chat.zzzz: unknown key (known: position, width, height, prompt_height, max_block_lines, max_line_chars, "
        "steer)")


def test_a_bad_value_gets_its_default_and_the_rest_is_kept(nvim):
    problems = setup_error(nvim, "{permissions = {policy = 'yolo', focus = 'never'}, chat = {width = 'wide'},"
                                 " agents = {g = {command = 'g', args = {1}}, h = {args = {}}}, default_agent = 'h'}")
    assert "permissions.policy: expected one of ask, auto-edit, trust; using the default" in problems
    assert "chat.width: expected number, got string; using the default" in problems
    assert "agents.g.args[1]: expected string, got number; left out" in problems
    assert "agents.h.command: expected string, got nil; agents.h left out" in problems
    assert "default_agent: no agent named \"h\" in agents; using 'demo'" in problems
    config = nvim.exec_lua("return require('acp_nvim').config")
    assert config["permissions"]["policy"] == "ask" and config["permissions"]["focus"] == "never"
    assert config["chat"]["width"] == 0.4 and config["default_agent"] == "demo"
    assert config["agents"] == {"g": {"command": "g"}}


def messages(nvim) -> str:
    return nvim.api.exec2("messages", {"output": True})["output"]


@pytest.mark.timeout(200)
def test_a_bad_value_is_said_once_in_one_line_and_ai_runs_on_the_default(nvim):
    """setup({ permissions = { policy = 'yolo' } }): every :Ai used to raise a Lua stack trace (and the
    Python side, given the same table, an "invalid configuration" error)."""
    nvim.exec_lua("require('acp_nvim').setup({ permissions = { policy = 'yolo' } })")
    nvim.command("Ai send first")
    wait_for(lambda: "turn ended" in buffer_text(nvim, CHAT), what="the first turn", nvim=nvim)
    nvim.command("Ai send second")
    wait_for(lambda: buffer_text(nvim, CHAT).count("turn ended") == 2, what="the second turn", nvim=nvim)
    nvim.command("Ai cancel")
    text = messages(nvim)
    assert "stack traceback" not in text and "Error executing" not in text and "invalid configuration" not in text
    said = [line for line in text.splitlines() if "acp.nvim] setup" in line]
    assert said == ["[acp.nvim] setup: permissions.policy: expected one of ask, auto-edit, trust; using the default"]
    assert "You said: second" in buffer_text(nvim, CHAT)
    assert nvim.exec_lua("return require('acp_nvim').config.permissions.policy") == "ask"


def test_several_problems_are_one_line_and_checkhealth_lists_them_all(nvim):
    nvim.command("set columns=80")
    nvim.exec_lua("require('acp_nvim').setup({ chat = { positon = 'left' }, permissions = { policy = 'yolo' },"
                  " keymap = {} })")
    nvim.exec_lua("return require('acp_nvim').config")
    said = [line for line in messages(nvim).splitlines() if "acp.nvim] setup" in line]
    assert len(said) == 1 and said[0].startswith("[acp.nvim] setup: keymap: unknown"), "cut to fit, never two lines"
    assert said[0].endswith("(+2 more: :checkhealth acp_nvim)")
    assert nvim.funcs.strdisplaywidth(said[0]) <= nvim.eval("v:echospace"), "no Press ENTER prompt"
    nvim.command("checkhealth acp_nvim")
    health = "\n".join(nvim.api.buf_get_lines(0, 0, -1, False))
    assert "keymap: unknown key; did you mean keymaps?" in health
    assert "chat.positon: unknown key; did you mean position?" in health
    assert "permissions.policy: expected one of ask, auto-edit, trust; using the default" in health


def test_setup_again_says_the_new_problems_once(nvim):
    nvim.exec_lua("require('acp_nvim').setup({ log = { level = 'loud' } })")
    for _ in range(3):
        nvim.exec_lua("return require('acp_nvim').config.log.level")
    nvim.exec_lua("require('acp_nvim').setup({ log = { level = 'louder' } })")
    nvim.exec_lua("return require('acp_nvim').config.log.level")
    said = [line for line in messages(nvim).splitlines() if "log.level" in line]
    assert len(said) == 2 and said[0].endswith("using the default")
