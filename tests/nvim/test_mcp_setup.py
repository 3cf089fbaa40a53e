"""setup()'s mcp_servers, editor_mcp and media keys (validated key by key) and :checkhealth, in real Neovim."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(30)

SERVERS = """{
  github = { command = 'sh', args = { '-c', 'exit 0' }, env = { GITHUB_TOKEN = 'ghp-never-shown-123' } },
  docs = { type = 'http', url = 'https://docs.example/mcp', headers = { Authorization = 'Bearer zzz-secret' } },
}"""


def setup_error(nvim, opts_lua: str) -> str:
    """The problems the options have when first used (setup() only records them), one per line."""
    return nvim.exec_lua(f"""local m = require('acp_nvim'); m.setup({opts_lua}); local _ = m.config
        return table.concat(require('acp_nvim.config.options').problems, '\\n')""")


def test_servers_are_accepted_globally_and_per_agent(nvim):
    assert setup_error(nvim, f"{{ mcp_servers = {SERVERS}, agents = {{ a = {{ command = 'a', mcp_servers = "
                             "{ docs = false, local_docs = { command = 'x' } } } }, editor_mcp = false, "
                             "media = { max_bytes = 1024 } }") == ""
    config = nvim.exec_lua("return require('acp_nvim').config")
    assert config["mcp_servers"]["docs"]["type"] == "http"
    assert config["agents"]["a"]["mcp_servers"]["docs"] is False
    assert config["editor_mcp"] is False and config["media"]["max_bytes"] == 1024


def test_defaults(nvim):
    config = nvim.exec_lua("return require('acp_nvim').config")
    assert not config["mcp_servers"] and config["editor_mcp"] is True
    assert config["media"]["max_bytes"] == 5 * 1024 * 1024


@pytest.mark.parametrize(("opts", "message"), [
    ("{ mcp_servers = { x = { args = {} } } }", "mcp_servers.x.command: expected string, got nil"),
    ("{ mcp_servers = { x = { command = '' } } }", "mcp_servers.x.command: must not be empty"),
    ("{ mcp_servers = { x = { command = 'c', args = { 1 } } } }", "mcp_servers.x.args[1]: expected string"),
    ("{ mcp_servers = { x = { command = 'c', env = { K = 1 } } } }", "mcp_servers.x.env.K: expected string"),
    ("{ mcp_servers = { x = { type = 'http' } } }", "mcp_servers.x.url: expected string, got nil"),
    ("{ mcp_servers = { x = { type = 'sse', url = 'ws://h' } } }", "mcp_servers.x.url: expected an http"),
    ("{ mcp_servers = { x = { type = 'ws', url = 'ws://h' } } }", "mcp_servers.x.type: expected 'stdio', 'http'"),
    ("{ mcp_servers = { x = { type = 'http', url = 'http://h', command = 'c' } } }",
     "mcp_servers.x.command: unknown key (known: type, url, headers)"),
    ("{ mcp_servers = { x = { type = 'http', url = 'http://h', headers = { A = true } } } }",
     "mcp_servers.x.headers.A: expected string"),
    ("{ mcp_servers = { x = 'npx server' } }", "mcp_servers.x: expected table, got string"),
    ("{ mcp_servers = { 'npx' } }", "mcp_servers: expected a table of servers by name"),
    ("{ agents = { a = { command = 'a', mcp_servers = { y = { type = 'http' } } } } }",
     "agents.a.mcp_servers.y.url: expected string"),
    ("{ editor_mcp = 'yes' }", "editor_mcp: expected boolean, got string"),
    ("{ media = { max_bytes = -1 } }", "media.max_bytes: expected a whole number"),
])
def test_errors_name_the_key_path(nvim, opts, message):
    assert message in setup_error(nvim, opts)


def test_presets_take_mcp_servers(nvim):
    servers = nvim.exec_lua("return require('acp_nvim.presets').claude({ mcp_servers = { g = { command = 'g' } } })"
                            ".mcp_servers")
    assert servers == {"g": {"command": "g"}}


def test_checkhealth_lists_the_servers_without_secrets(nvim):
    nvim.exec_lua(f"require('acp_nvim').setup({{ mcp_servers = {SERVERS}, agents = {{ a = {{ command = 'sh', "
                  "mcp_servers = { docs = false, gone = { command = 'no-such-mcp-server' } } } } })")
    nvim.command("checkhealth acp_nvim")
    text = "\n".join(nvim.api.buf_get_lines(0, 0, -1, False))
    assert "MCP servers" in text
    assert "github: stdio: sh -c exit 0 (env: GITHUB_TOKEN)" in text
    assert "docs: http: https://docs.example/mcp (headers: Authorization)" in text
    assert "agent a: docs: removed for this agent" in text
    assert "agent a: gone: stdio: no-such-mcp-server: command not found on PATH" in text
    assert "nvim: the editor's own MCP server" in text
    assert "ghp-never-shown-123" not in text and "zzz-secret" not in text


def test_checkhealth_says_when_the_editor_server_is_off(nvim):
    nvim.exec_lua("require('acp_nvim').setup({ editor_mcp = false })")
    nvim.command("checkhealth acp_nvim")
    text = "\n".join(nvim.api.buf_get_lines(0, 0, -1, False))
    assert "editor_mcp = false" in text and "no mcp_servers configured" in text
