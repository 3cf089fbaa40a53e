"""The MCP SDK part of the editor's server: the low-level SDK server, Streamable HTTP, uvicorn.

Imported in a thread the first time the server starts (``http_server.py``): the SDK, Starlette
and uvicorn take about half a second to import. The low-level ``Server`` is used rather than
``MCPServer``, whose constructor configures the process's root logger (the Python host is
shared by every remote plugin). uvicorn is driven through ``startup``/``shutdown`` only: its
``serve`` would take over SIGINT/SIGTERM of the host and wake the loop ten times a second.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Mapping, MutableMapping
from typing import Any, Protocol

import mcp_types as types
import uvicorn
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from .tools import SERVER_NAME, TOOLS

INSTRUCTIONS = ("Tools that read the user's Neovim: diagnostics of open files (unsaved edits included), open "
                "buffers, the visual selection, LSP symbols/definition/references, and open_file to show a file.")
GRACEFUL_SHUTDOWN = 1

_Scope = MutableMapping[str, Any]


class ToolHost(Protocol):
    """What the SDK server asks of the editor's server: who a token is, and the answer to a call."""

    def grant_for(self, authorization: str) -> object | None: ...

    async def call(self, authorization: str, name: str, args: Mapping[str, object]) -> tuple[str, bool]: ...


async def serve(sock: socket.socket, host: ToolHost, stop: asyncio.Event) -> None:
    """Serve MCP on the listening ``sock`` until ``stop`` is set."""
    port = sock.getsockname()[1]
    manager = StreamableHTTPSessionManager(app=_server(host), security_settings=_security(port))
    config = uvicorn.Config(_Authorized(host, StreamableHTTPASGIApp(manager)), lifespan="off", log_config=None,
                            access_log=False, timeout_graceful_shutdown=GRACEFUL_SHUTDOWN)
    config.load()
    server = uvicorn.Server(config)
    server.lifespan = config.lifespan_class(config)
    async with manager.run():
        await server.startup(sockets=[sock])
        try:
            await stop.wait()
        finally:
            server.should_exit = True
            await server.shutdown(sockets=[sock])


def _security(port: int) -> TransportSecuritySettings:
    """Only requests addressed to this server (no DNS rebinding from a web page)."""
    hosts = [f"127.0.0.1:{port}", f"localhost:{port}"]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=[f"http://{h}" for h in hosts])


def _server(host: ToolHost) -> Server[Any]:
    async def list_tools(ctx: ServerRequestContext[Any, Any],
                         params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[_tool(spec.name, spec.description, spec.schema, spec.read_only)
                                            for spec in TOOLS])

    async def call_tool(ctx: ServerRequestContext[Any, Any],
                        params: types.CallToolRequestParams) -> types.CallToolResult:
        headers = getattr(ctx.request, "headers", None) or {}
        text, error = await host.call(str(headers.get("authorization") or ""), params.name, params.arguments or {})
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)

    return Server(SERVER_NAME, version="0.1.0", instructions=INSTRUCTIONS, on_list_tools=list_tools,
                  on_call_tool=call_tool)


def _tool(name: str, description: str, schema: dict[str, object], read_only: bool) -> types.Tool:
    hints = types.ToolAnnotations(read_only_hint=read_only, destructive_hint=False, idempotent_hint=True,
                                  open_world_hint=False)
    return types.Tool(name=name, description=description, input_schema=schema, annotations=hints)


class _Authorized:
    """Requests without this session's bearer token get 401; only the MCP path is served."""

    def __init__(self, host: ToolHost, app: StreamableHTTPASGIApp) -> None:
        self._host = host
        self._app = app

    async def __call__(self, scope: _Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope.get("path", "").rstrip("/") != "/mcp":
            await _refuse(send, 404, "not found: the MCP endpoint is /mcp")
            return
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope["headers"]}
        if self._host.grant_for(headers.get("authorization", "")) is None:
            await _refuse(send, 401, "unauthorized: the session's bearer token is required")
            return
        await self._app(scope, receive, send)


async def _refuse(send: Any, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="acp.nvim"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
