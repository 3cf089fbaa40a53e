"""The ``mcp`` scenario: show the MCP servers the session got, or call one of their tools.

``mcp`` lists the servers (name, transport, URL or command; header and env names only).
``mcp <server> <tool> [json arguments]`` calls the tool of an http server with the MCP SDK's
client, sending the server's headers (the editor's ``nvim`` server wants its bearer token),
and replies with the tool's text. The SDK is imported only here: most demo sessions never pay.
"""

from __future__ import annotations

import json
from typing import Any

from acp.schema import HttpMcpServer, McpServerStdio, SseMcpServer, StopReason

from .turn import Turn, fenced

CALL_TIMEOUT = 20.0


def describe(server: Any) -> str:
    if isinstance(server, McpServerStdio):
        env = f" (env: {', '.join(e.name for e in server.env)})" if server.env else ""
        return f"{server.name}: stdio {' '.join([server.command, *server.args])}{env}"
    if isinstance(server, (HttpMcpServer, SseMcpServer)):
        headers = f" (headers: {', '.join(h.name for h in server.headers)})" if server.headers else ""
        return f"{server.name}: {server.type} {server.url}{headers}"
    return f"{getattr(server, 'name', '?')}: {getattr(server, 'type', '?')}"


async def mcp(turn: Turn) -> StopReason:
    """List the session's MCP servers, or call ``<server> <tool> [json]``."""
    servers = turn.session.mcp_servers
    if len(turn.args) < 2:
        lines = [describe(server) for server in servers] or ["(no MCP servers)"]
        await turn.say("MCP servers:\n" + "\n".join(f"- {line}" for line in lines) + "\n")
        return "end_turn"
    name, tool = turn.args[0], turn.args[1]
    server = next((s for s in servers if s.name == name), None)
    if not isinstance(server, HttpMcpServer):
        await turn.say(f"no http MCP server named {name!r}\n")
        return "end_turn"
    raw = turn.rest.split(None, 2)[2] if len(turn.rest.split(None, 2)) > 2 else "{}"
    try:
        text, error = await _call(server, tool, json.loads(raw))
    except Exception as exc:  # the scenario reports what went wrong, as text
        text, error = f"{type(exc).__name__}: {exc}", True
    await turn.say(f"{'MCP error' if error else 'MCP result'} of {name}/{tool}:\n" + fenced(text, "json"))
    return "end_turn"


async def _call(server: HttpMcpServer, tool: str, args: dict[str, Any]) -> tuple[str, bool]:
    import anyio
    import httpx2
    from mcp.client.client import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {h.name: h.value for h in server.headers}
    with anyio.fail_after(CALL_TIMEOUT):
        async with httpx2.AsyncClient(headers=headers, timeout=CALL_TIMEOUT) as http:
            async with Client(streamable_http_client(server.url, http_client=http), mode="legacy") as client:
                result = await client.call_tool(tool, args)
    text = "\n".join(getattr(part, "text", "") for part in result.content)
    return text, bool(result.is_error)
