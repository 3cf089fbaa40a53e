"""A hostile ACP agent that asks the editor for buffers that are no longer the file at their name.

The test swaps the files behind Neovim's buffers (a symlink to a file outside removed or
replaced, a file renamed away and another put at its name); this agent then reads those paths
with ``fs/read_text_file`` and calls the editor's MCP tools (the ``nvim`` server the session
got, over HTTP with the MCP SDK's client and its bearer token).

The prompt is one JSON object:
  {"op": "read", "path": ..., "out": result-file}
  {"op": "mcp", "tool": name, "args": {...}, "out": result-file}
  {"op": "deep", "method": ..., "depth": n, "path": ..., "out": result-file}: a request nested
                                ``depth`` deep as a whole (in the ``_meta`` of an ``fs/read_text_file``
                                of ``path``, or in the params of an extension method)
The result is written as JSON to ``out``: ``ok`` and the content (read), the tool's text (mcp),
or the error's code and message.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from acp import RequestError, run_agent, stdio_streams
from acp.schema import (
    AgentCapabilities,
    HttpMcpServer,
    InitializeResponse,
    McpCapabilities,
    NewSessionResponse,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: run as a script
from scripted_agent import ScriptedAgent

CALL_TIMEOUT = 20.0


class HostileReads(ScriptedAgent):
    name = "hostile-reads"

    def __init__(self) -> None:
        super().__init__()
        self.servers: list[Any] = []

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        answer = await super().initialize(protocol_version, **kwargs)
        answer.agent_capabilities = AgentCapabilities(mcp_capabilities=McpCapabilities(http=True))
        return answer

    async def new_session(self, cwd: str, mcp_servers: list[Any], **kwargs: Any) -> NewSessionResponse:
        self.servers = list(mcp_servers or [])
        return await super().new_session(cwd, mcp_servers, **kwargs)

    async def _read(self, session_id: str, request: dict[str, Any]) -> dict[str, Any]:
        try:
            response = await self.client.read_text_file(session_id=session_id, path=request["path"])
        except RequestError as exc:
            return {"ok": False, "code": exc.code, "message": str(exc)}
        return {"ok": True, "content": response.content}

    async def _deep(self, session_id: str, request: dict[str, Any]) -> dict[str, Any]:
        method = request["method"]
        reading = method == "fs/read_text_file"
        nested: Any = "bottom"
        for level in range(request["depth"] - (3 if reading else 2)):  # the message, params (and _meta) add
            nested = [nested] if level % 2 else {"a": nested}
        if reading:
            params = {"sessionId": session_id, "path": request["path"], "_meta": {"x": nested}}
        else:
            params = {"x": nested}
        try:
            await self.client._conn.send_request(method, params)
        except RequestError as exc:
            return {"ok": False, "code": exc.code, "message": str(exc)}
        return {"ok": True}

    async def _mcp(self, session_id: str, request: dict[str, Any]) -> dict[str, Any]:
        server = next((s for s in self.servers if isinstance(s, HttpMcpServer) and s.name == "nvim"), None)
        if server is None:
            return {"ok": False, "message": f"no nvim MCP server among {[s.name for s in self.servers]}"}
        try:
            text, error = await _call(server, request["tool"], request.get("args") or {})
        except Exception as exc:  # reported to the test as the outcome
            return {"ok": False, "message": f"{type(exc).__name__}: {exc}"}
        return {"ok": not error, "text": text}


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
    return "\n".join(getattr(part, "text", "") for part in result.content), bool(result.is_error)


async def serve() -> None:
    reader, writer = await stdio_streams()
    await run_agent(HostileReads(), writer, reader)


if __name__ == "__main__":
    asyncio.run(serve())
