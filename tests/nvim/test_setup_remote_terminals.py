"""setup() keys of issue 15 (terminals, remote agents) and their :checkhealth lines."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(30)


def setup_error(nvim, opts_lua: str) -> str:
    """The problems the options have when first used (setup() only records them: nothing loads at startup):
    one per line, each naming its key path; reading the configuration never raises."""
    return nvim.exec_lua(f"""local m = require('acp_nvim'); m.setup({opts_lua}); local _ = m.config
        return table.concat(require('acp_nvim.config.options').problems, '\\n')""")


def test_remote_agents_and_terminal_keys_are_accepted(nvim):
    assert setup_error(nvim, "{agents = {far = {url = 'wss://agents.example/acp', headers = {Authorization = 'x'}},"
                             " near = {command = 'x', terminal = false}},"
                             " terminals = {output_limit = 4096, preview_lines = 0}}") == ""


@pytest.mark.parametrize(("opts", "message"), [
    ("{agents = {far = {url = 'http://x'}}}", "agents.far.url: expected a 'ws://…' or 'wss://…' address"),
    ("{agents = {far = {url = 'ws://x', command = 'y'}}}", "agents.far: give either command"),
    ("{agents = {far = {url = 'ws://x', headers = {A = 1}}}}", "agents.far.headers.A: expected string"),
    ("{agents = {g = {command = 'x', headers = {A = 'b'}}}}", "agents.g.headers: only for a remote agent"),
    ("{agents = {g = {command = 'x', terminal = 'yes'}}}", "agents.g.terminal: expected boolean"),
    ("{agents = {far = {url = 'ws://agents.example:80/acp'}}}", "agents.far.url: ws:// is not encrypted"),
    ("{agents = {far = {url = 'ws://user@127.0.0.1.example.com/'}}}", "agents.far.url: ws:// is not encrypted"),
    ("{agents = {far = {url = 'ws://x', insecure = 'yes'}}}", "agents.far.insecure: expected boolean"),
    ("{agents = {g = {command = 'x', insecure = true}}}", "agents.g.insecure: only for a remote agent"),
    ("{terminals = {output_limit = 0}}", "terminals.output_limit: expected a whole number of bytes >= 1"),
    ("{terminals = {preview_lines = 1.5}}", "terminals.preview_lines: expected a whole number >= 0"),
])
def test_bad_keys_name_their_path(nvim, opts, message):
    assert message in setup_error(nvim, opts)


@pytest.mark.parametrize("agent", ["{url = 'ws://127.0.0.1:9/acp'}", "{url = 'ws://127.1.2.3'}",
                                   "{url = 'ws://[::1]:9/'}", "{url = 'ws://LocalHost:9'}",
                                   "{url = 'ws://agents.example/acp', insecure = true}",
                                   "{url = 'wss://agents.example/acp', insecure = false}"])
def test_clear_text_ws_is_accepted_on_loopback_or_when_insecure(nvim, agent):
    assert setup_error(nvim, f"{{agents = {{far = {agent}}}}}") == ""


def test_checkhealth_lists_a_remote_agent(nvim):
    nvim.exec_lua("require('acp_nvim').setup({agents = {far = {url = 'ws://127.0.0.1:9/acp'}}})")
    nvim.command("checkhealth acp_nvim")
    text = "\n".join(nvim.api.buf_get_lines(0, 0, -1, False))
    assert "agent far: remote, ws://127.0.0.1:9/acp (websockets found)" in text
