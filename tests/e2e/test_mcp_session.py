"""A session's MCP servers with the real demo agent: session/new, restart (load), capabilities, secrets."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from test_mcp_server import FakeState

from acp_nvim.core.config import PACKAGE_ROOT, parse_settings
from acp_nvim.core.mcp.http_server import EditorMcpServer
from acp_nvim.core.mcp.tools import EditorTools
from acp_nvim.core.session.session import Prompt
from acp_nvim.nvim.app import notification_redactor
from helpers import async_wait_for, core
from helpers.core import chat_text as chat

pytestmark = pytest.mark.timeout(60)

GITHUB_SECRET = "ghp-this-is-a-configured-secret"
HEADER_SECRET = "header-credential-0123456789"


def demo(capabilities: str) -> dict:
    return {"command": sys.executable, "args": ["-m", "acp_nvim.demo_agent"],
            "env": {"PYTHONPATH": str(PACKAGE_ROOT), "ACP_DEMO_CAPABILITIES": capabilities}}


def config(capabilities: str = "mcp-http", **extra: object) -> dict:
    return {"agents": {"d": demo(capabilities)}, "default_agent": "d",
            "mcp_servers": {
                "github": {"command": "/usr/bin/true", "env": {"GITHUB_TOKEN": GITHUB_SECRET}},
                "events": {"type": "sse", "url": "http://127.0.0.1:9/sse",
                           "headers": {"Authorization": f"Bearer {HEADER_SECRET}"}}},
            **extra}


async def turn(session, text: str) -> str:
    ended = chat(session).count("turn ended")
    session.submit(Prompt(text))
    await async_wait_for(lambda: chat(session).count("turn ended") > ended and session.state == "idle", timeout=30)
    return chat(session).rsplit("## You", 1)[1]


def sent_servers(session, method: str = "session/new") -> list[dict]:
    requests = [json.loads(e.raw) for e in session.log.entries() if e.kind == "request" and e.method == method]
    return requests[-1]["params"]["mcpServers"]


@pytest.fixture
async def host(tmp_path: Path):
    root = tmp_path.resolve()
    server = EditorMcpServer(EditorTools(FakeState(root, root.parent)), lambda message: None)
    yield server
    await server.close()


async def started(tmp_path: Path, host: EditorMcpServer | None, raw: dict):
    return (await core.started(tmp_path, raw, editor_mcp=host))[2]


async def test_servers_follow_the_agents_capabilities(tmp_path, host):
    session = await started(tmp_path, host, config("mcp-http"))
    try:
        sent = sent_servers(session)
        assert [s["name"] for s in sent] == ["github", "nvim"]
        nvim = sent[1]
        assert nvim["type"] == "http" and nvim["url"] == host.url
        [header] = nvim["headers"]  # the log's redaction marker names the secret or not, per its version
        assert header["name"] == "Authorization" and re.fullmatch(r"Bearer \[redacted[^\]]*\]", header["value"])
        assert "MCP server 'events' not passed to the agent: the agent does not take sse" in chat(session)
        assert any(e.level == "warn" and "'events' not passed" in e.summary for e in session.log.entries())
        listed = await turn(session, "mcp")
        assert "- github: stdio /usr/bin/true (env: GITHUB_TOKEN)" in listed
        assert f"- nvim: http {host.url} (headers: Authorization)" in listed
    finally:
        await session.close()


async def test_the_agent_calls_the_editors_tools_with_its_token(tmp_path, host):
    (tmp_path / "a.py").write_text("x = 1\n")
    session = await started(tmp_path, host, config("mcp-http"))
    try:
        answer = await turn(session, 'mcp nvim diagnostics {"path": "a.py"}')
        assert "MCP result of nvim/diagnostics" in answer and '"message":"bad"' in answer
        assert [e.summary.split("(")[0] for e in session.log.entries() if e.kind == "mcp"] == [
            "tool nvim/diagnostics"]
    finally:
        await session.close()
    assert host.grant_for(f"Bearer {session.mcp.token}") is None, "closing the session revokes its token"


async def test_secrets_never_reach_the_log(tmp_path, host):
    session = await started(tmp_path, host, config("mcp-http,mcp-sse"))
    try:
        exported = "\n".join(session.log.export({}))
        assert "events" in exported and "github" in exported
        for secret in (GITHUB_SECRET, HEADER_SECRET, session.mcp.token):
            assert secret not in exported
        assert "[redacted:$mcp_servers.github.GITHUB_TOKEN]" in exported
    finally:
        await session.close()


async def test_restart_passes_the_servers_again(tmp_path, host):
    session = await started(tmp_path, host, config("mcp-http"))
    try:
        await session.restart()
        assert [s["name"] for s in sent_servers(session, "session/load")] == ["github", "nvim"]
        assert chat(session).count("'events' not passed") == 1, "told once per session"
        listed = await turn(session, "mcp")
        assert "- nvim: http" in listed
    finally:
        await session.close()


async def test_no_editor_server_without_http_or_when_turned_off(tmp_path, host):
    plain = await started(tmp_path, host, config(""))
    try:
        assert [s["name"] for s in sent_servers(plain)] == ["github"]
        assert not host.serving, "the editor's server starts only for a session that gets it"
        assert any("takes no http MCP servers" in e.summary for e in plain.log.entries())
        assert "'events' not passed" in chat(plain)
    finally:
        await plain.close()
    off = await started(tmp_path, host, config("mcp-http", editor_mcp=False))
    try:
        assert [s["name"] for s in sent_servers(off)] == ["github"]
    finally:
        await off.close()


async def test_a_configured_server_named_nvim_replaces_the_editors(tmp_path, host):
    raw = config("mcp-http")
    raw["mcp_servers"] = {"nvim": {"type": "http", "url": "http://127.0.0.1:9/mine"}}
    session = await started(tmp_path, host, raw)
    try:
        assert sent_servers(session) == [{"type": "http", "name": "nvim", "url": "http://127.0.0.1:9/mine",
                                          "headers": []}]
    finally:
        await session.close()


async def test_without_a_host_sessions_still_get_the_configured_servers(tmp_path):
    session = await started(tmp_path, None, config("mcp-http"))
    try:
        assert [s["name"] for s in sent_servers(session)] == ["github"]
    finally:
        await session.close()



async def opened(tmp_path: Path, host: EditorMcpServer, raw: dict):
    _, manager, session = await core.started(tmp_path, raw, editor_mcp=host)
    return manager, session


async def test_editor_notifications_redact_every_agents_mcp_secrets(tmp_path, host):
    raw = config("mcp-http")
    raw["agents"]["other"] = {**demo(""), "mcp_servers": {
        "docs": {"type": "http", "url": "http://127.0.0.1:9/docs", "headers": {"X-Api-Key": "docs-key-0123456789"}}}}
    manager, session = await opened(tmp_path, host, raw)
    try:
        redact = notification_redactor(manager)
        for secret in (GITHUB_SECRET, HEADER_SECRET, "docs-key-0123456789", session.mcp.token):
            note = redact(f"d/1: the agent said {secret} and exited")
            assert secret not in note and "[redacted" in note, secret
        assert redact("d/1: github events docs") == "d/1: github events docs", "names are not secrets"
    finally:
        await session.close()


async def test_a_session_that_predates_the_config_keeps_its_mcp_secrets_redacted(tmp_path, host):
    manager, session = await opened(tmp_path, host, config("mcp-http"))
    try:
        manager.settings = parse_settings({})  # the next :Ai came with a config without those servers
        redact = notification_redactor(manager)
        for secret in (GITHUB_SECRET, HEADER_SECRET, session.mcp.token):
            assert secret not in redact(f"d/1: exited: {secret}"), secret
    finally:
        await session.close()
