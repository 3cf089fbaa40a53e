"""MCP servers from the configuration: merged per agent, validated by key path, offered per capabilities."""

from __future__ import annotations

import pytest
from acp.schema import AgentCapabilities, InitializeResponse, McpCapabilities

from acp_nvim.core.config import parse_settings
from acp_nvim.core.errors import ConfigError
from acp_nvim.core.mcp import servers
from acp_nvim.core.mcp.servers import Transports

pytestmark = pytest.mark.timeout(10)

GLOBAL = {
    "github": {"command": "/usr/bin/gh-mcp", "args": ["--stdio"], "env": {"GITHUB_TOKEN": "ghp-global-secret"}},
    "docs": {"type": "http", "url": "https://docs.example/mcp", "headers": {"Authorization": "Bearer docs-token-1"}},
    "events": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
}


def settings(agent_servers: dict | None = None):
    agent = {"command": "agent", **({"mcp_servers": agent_servers} if agent_servers is not None else {})}
    return parse_settings({"mcp_servers": GLOBAL, "agents": {"a": agent}})


def info(http: bool = False, sse: bool = False) -> InitializeResponse:
    return InitializeResponse(protocol_version=1, agent_capabilities=AgentCapabilities(
        mcp_capabilities=McpCapabilities(http=http, sse=sse)))


def test_agent_servers_win_and_false_removes_a_global_one():
    merged = servers.configured(settings({"github": False, "docs": {"command": "/bin/docs-local"}}), "a")
    assert sorted(merged) == ["docs", "events"]
    assert merged["docs"].type == "stdio" and merged["docs"].command == "/bin/docs-local"
    assert list(servers.configured(settings(), "a")) == ["docs", "events", "github"], "by name, always"
    assert sorted(servers.configured(settings(), "demo")) == ["docs", "events", "github"]


def test_lua_empty_tables_are_empty_maps():
    parsed = parse_settings({"mcp_servers": [], "agents": {"a": {"command": "a", "mcp_servers": []}},
                             "media": []})
    assert parsed.mcp_servers == {} and parsed.agents["a"].mcp_servers == {}
    parsed = parse_settings({"mcp_servers": {"x": {"type": "http", "url": "http://h/mcp", "headers": []}}})
    assert parsed.mcp_servers["x"].headers == {}


@pytest.mark.parametrize(("raw", "message"), [
    ({"mcp_servers": {"x": {"type": "http"}}}, r"mcp_servers\.x\.url: Field required"),
    ({"mcp_servers": {"x": {"type": "ws", "url": "ws://h"}}}, r"mcp_servers\.x\.type: Input should be 'http' or 'sse'"),
    ({"mcp_servers": {"x": {"args": ["a"]}}}, r"mcp_servers\.x\.command: Field required"),
    ({"mcp_servers": {"x": {"type": "sse", "url": "ftp://h"}}}, r"mcp_servers\.x\.url: .*http:// or https://"),
    ({"mcp_servers": {"x": True}}, r"mcp_servers\.x: Input should be False"),
    ({"mcp_servers": {"x": {"command": "c", "cwd": "/"}}}, r"mcp_servers\.x\.cwd: Extra inputs"),
    ({"agents": {"a": {"command": "a", "mcp_servers": {"x": {"command": "c", "env": {"K": 1}}}}}},
     r"agents\.a\.mcp_servers\.x\.env\.K: Input should be a valid string"),
    ({"editor_mcp": "yes"}, r"editor_mcp: Input should be a valid boolean"),
    ({"media": {"max_bytes": -1}}, r"media\.max_bytes: Input should be greater than or equal to 0"),
])
def test_errors_name_the_key_path(raw, message):
    with pytest.raises(ConfigError, match=message):
        parse_settings(raw)


def test_stdio_always_http_and_sse_only_where_advertised():
    merged = servers.configured(settings(), "a")
    none = servers.offer(merged, Transports.of(info()))
    assert none.names == ["github"]
    assert sorted(name for name, _ in none.refused) == ["docs", "events"]
    assert "does not take http MCP servers" in dict(none.refused)["docs"]
    http_only = servers.offer(merged, Transports.of(info(http=True)))
    assert http_only.names == ["docs", "github"] and [n for n, _ in http_only.refused] == ["events"]
    both = servers.offer(merged, Transports.of(info(http=True, sse=True)))
    assert both.names == ["docs", "events", "github"] and both.refused == []
    assert servers.offer(merged, Transports.of(None)).names == ["github"]


def test_acp_shapes_of_each_kind():
    merged = servers.configured(settings(), "a")
    offered = servers.offer(merged, Transports(http=True, sse=True)).servers
    dumped = [s.model_dump(mode="json", by_alias=True, exclude_none=True) for s in offered]
    assert dumped == [
        {"type": "http", "name": "docs", "url": "https://docs.example/mcp",
         "headers": [{"name": "Authorization", "value": "Bearer docs-token-1"}]},
        {"type": "sse", "name": "events", "url": "http://127.0.0.1:9/sse", "headers": []},
        {"name": "github", "command": "/usr/bin/gh-mcp", "args": ["--stdio"],
         "env": [{"name": "GITHUB_TOKEN", "value": "ghp-global-secret"}]},
    ]


def test_a_bare_command_is_looked_up_on_path(tmp_path, monkeypatch):
    tool = tmp_path / "my-mcp"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    found = servers.to_acp("m", parse_settings({"mcp_servers": {"m": {"command": "my-mcp"}}}).mcp_servers["m"])
    assert found.command == str(tool)
    missing = servers.to_acp("m", parse_settings({"mcp_servers": {"m": {"command": "nope-mcp"}}}).mcp_servers["m"])
    assert missing.command == "nope-mcp"


def test_secrets_are_env_values_headers_and_bearer_credentials():
    found = servers.secrets(servers.configured(settings(), "a"))
    assert set(found.values()) == {"ghp-global-secret", "Bearer docs-token-1", "docs-token-1"}
    assert "GITHUB_TOKEN" not in found.values()


def test_describe_shows_no_secret():
    merged = servers.configured(settings(), "a")
    assert servers.describe(merged["github"]) == "stdio: /usr/bin/gh-mcp --stdio (env: GITHUB_TOKEN)"
    assert servers.describe(merged["docs"]) == "http: https://docs.example/mcp (headers: Authorization)"
