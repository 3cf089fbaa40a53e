"""The Python host (lua/acp_nvim/host/init.lua starts pynvim's host on rplugin/python3/acp_nvim, whose
plugin is python/acp_nvim/plugin.py): started without blocking, in order, on idle (prestart), one
way from Lua to Python, and what the user is told when it cannot start or dies."""

from __future__ import annotations

import os
import signal

import pytest

from helpers import buffer_text, capture_notes, wait_for

pytestmark = pytest.mark.timeout(60)

CHAT = "acp://chat/demo/1"


def messages(nvim) -> str:
    return nvim.api.exec2("messages", {"output": True})["output"]


def host_pid(nvim) -> int:
    return nvim.funcs.jobpid(nvim.exec_lua("return require('acp_nvim.host').channel"))


def test_nothing_runs_and_nothing_is_loaded_before_first_use(nvim):
    loaded = nvim.exec_lua("""
        local out = {}
        for name in pairs(package.loaded) do
          if name:match('^acp_nvim') then out[#out + 1] = name end
        end
        return out""")
    assert loaded == []
    assert nvim.exec_lua("return require('acp_nvim.host').channel") is None
    nvim.exec_lua("require('acp_nvim').setup({})")
    assert nvim.exec_lua("return package.loaded['acp_nvim.config'] == nil"), "setup() only records its options"


def test_commands_sent_while_the_host_starts_arrive_in_order(nvim):
    nvim.exec_lua("vim.cmd('Ai send first'); vim.cmd('Ai send second')")  # the host starts after both
    wait_for(lambda: buffer_text(nvim, CHAT).count("turn ended") == 2, 30, what="two turns")
    text = buffer_text(nvim, CHAT)
    assert text.index("## You\nfirst") < text.index("## You\nsecond")
    assert "You said: first" in text and "You said: second" in text


@pytest.mark.cold_python  # reads the host's own memory maps
def test_prestart_starts_the_host_and_loads_the_protocol_while_idle(nvim):
    nvim.exec_lua("require('acp_nvim.host').prestart()")
    # first the interpreter's packages are checked (a short process, not waited for), then the host starts
    wait_for(lambda: nvim.exec_lua("return require('acp_nvim.host').channel"), what="the prestarted host")
    pid = host_pid(nvim)
    # the ACP SDK's models are pydantic's: its compiled core is mapped once the protocol is loaded
    wait_for(lambda: "pydantic_core" in open(f"/proc/{pid}/maps").read(), 20, what="the host to load the ACP SDK")
    nvim.command("Ai send hello")
    wait_for(lambda: "turn ended" in buffer_text(nvim, CHAT), 30, what="the turn on the prestarted host")
    assert host_pid(nvim) == pid, "the prestarted host is the one used"


def test_prestart_can_be_turned_off_and_reports_a_bad_config(nvim):
    nvim.exec_lua("require('acp_nvim').setup({ prestart = false })")
    nvim.exec_lua("require('acp_nvim.host').prestart()")
    assert nvim.exec_lua("return require('acp_nvim.host').channel") is None
    capture_notes(nvim)
    nvim.exec_lua("require('acp_nvim').setup({ chat = { position = 'top' } })")
    # a bad value is said once, and the prestart goes on with that key on its default
    assert nvim.exec_lua("return require('acp_nvim.host').prestart()") is True
    assert nvim.exec_lua("return _G.notes") == [
        "[acp.nvim] setup: chat.position: expected one of right, left, bottom, current; using the default"]
    wait_for(lambda: nvim.exec_lua("return require('acp_nvim.host').channel"), what="the prestarted host", nvim=nvim)


def test_a_host_that_cannot_start_is_one_line_and_its_stderr_goes_to_the_log(nvim, tmp_path):
    """An interpreter that passes the packages' check yet dies at start: the message is one line
    (no traceback, no hit-enter prompt); its stderr is in the log file and :checkhealth."""
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\ncase \"$2\" in *find_spec*) exit 0;; esac\n"
                    "echo 'Traceback (most recent call last):' >&2\necho 'RuntimeError: broken' >&2\nexit 3\n")
    fake.chmod(0o755)
    nvim.vars["acp_nvim_python"] = str(fake)
    nvim.command("Ai send hello")
    wait_for(lambda: "the Python host exited (code 3)" in messages(nvim), what="the exit message")
    said = [line for line in messages(nvim).splitlines() if "acp.nvim" in line]
    assert len(said) == 1 and "Traceback" not in messages(nvim) and "broken" not in messages(nvim)
    assert len(said[0]) <= 68, "fits v:echospace at 80 columns (ruler and showcmd on): no hit-enter prompt"
    log = nvim.exec_lua("return require('acp_nvim.host').log_file()")
    assert "RuntimeError: broken" in open(log).read()
    nvim.command("checkhealth acp_nvim")
    health = "\n".join(nvim.api.buf_get_lines(0, 0, -1, False))
    assert "the Python host exited with code 3" in health and "RuntimeError: broken" in health


def test_an_interpreter_without_the_packages_starts_no_host_and_names_ai_deps(nvim, tmp_path):
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\necho started >> {tmp_path / 'runs'}\n"
                    "echo 'ModuleNotFoundError: No module named pynvim' >&2\nexit 1\n")
    fake.chmod(0o755)
    nvim.vars["acp_nvim_python"] = str(fake)
    nvim.command("Ai send hello")
    wait_for(lambda: "acp.nvim's Python packages are missing: run :Ai deps" in messages(nvim), what="the line")
    assert (tmp_path / "runs").read_text() == "started\n", "only the check ran: no host was started"
    assert nvim.exec_lua("return require('acp_nvim.host').started") is None
    assert "No module named" not in messages(nvim) and "Traceback" not in messages(nvim)


def test_an_interpreter_that_is_not_there_names_the_setting(nvim):
    nvim.vars["acp_nvim_python"] = "/nonexistent/python3"
    error = nvim.exec_lua("local ok, err = pcall(require('acp_nvim.host').start); return err")
    assert "cannot start the Python host" in error and "g:acp_nvim_python" in error and ":Ai deps" in error


def test_a_host_that_dies_is_reported_and_the_next_command_starts_a_new_one(nvim):
    nvim.command("Ai send hello")
    wait_for(lambda: "turn ended" in buffer_text(nvim, CHAT), 30, what="the first turn")
    pid = host_pid(nvim)
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: "the Python host exited" in messages(nvim), 20, what="the exit message")
    assert nvim.exec_lua("return require('acp_nvim.state').sessions['demo/1'].state") == "failed"
    nvim.command("Ai new")
    wait_for(lambda: nvim.exec_lua("return require('acp_nvim.host').channel"), 10, what="a new host")
    assert host_pid(nvim) != pid
    wait_for(lambda: "demo/1" in (nvim.exec_lua("return vim.tbl_keys(require('acp_nvim.state').sessions)") or []),
             30, what="a session on the new host")


def test_lua_calls_python_through_the_entry_points_and_defines_no_vim_function(nvim):
    nvim.exec_lua("require('acp_nvim.host').call.answer(999, vim.NIL)")  # nobody waits for it: ignored
    wait_for(lambda: nvim.exec_lua("return require('acp_nvim.host').channel") is not None, what="the host")
    assert nvim.funcs.exists("*AcpNvimAnswer") == 0 and nvim.funcs.exists("#FuncUndefined#AcpNvimAnswer") == 0
    error = nvim.exec_lua("local ok, err = pcall(function() return require('acp_nvim.host').call.nope end)"
                          "; return err")
    assert 'no entry point "nope"' in error
    nvim.exec_lua("require('acp_nvim.host').call.review_done = function(id) vim.g.recorded = id end"
                  "; require('acp_nvim.host').call.review_done(5, {})")
    assert nvim.vars["recorded"] == 5, "a test's recorder replaces the entry point"


def test_the_host_is_pynvims_own_started_on_the_plugin_path(nvim):
    nvim.exec_lua("require('acp_nvim.host').call.warm()")
    chan = wait_for(lambda: nvim.exec_lua("return require('acp_nvim.host').channel"), what="the host")
    # pynvim's client names itself python3-client, then the host, once the plugin is loaded
    client = wait_for(lambda: (nvim.api.get_chan_info(chan).get("client") or {}).get("type") == "host"
                      and nvim.api.get_chan_info(chan)["client"], 20, what="the host's client info")
    assert client["name"] == "python3-rplugin-host"
    started = nvim.exec_lua("return require('acp_nvim.host').started")
    assert started["source"] == "g:acp_nvim_python"
    assert started["argv"][-1].endswith("/rplugin/python3/acp_nvim") and "pynvim.start_host()" in started["argv"][2]
    nvim.command("checkhealth acp_nvim")
    health = "\n".join(nvim.api.buf_get_lines(0, 0, -1, False))
    assert "pynvim's remote plugin host (python3-rplugin-host" in health
    assert "from g:acp_nvim_python" in health and "rplugin/python3/acp_nvim" in health
