"""The editor's live state for the MCP tools (``core/mcp/editor_state.py``), read from Neovim.

Each answer is one Lua call through the Bridge (``lua/acp_nvim/host/editor_tools.lua``), so the
tools never block Neovim. LSP queries answer later: Lua starts the requests and calls
``AcpNvimToolDone(id, answer)`` when every client answered; ``done`` resolves the call.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from ...core.mcp.editor_state import Json, LspQuery
from ...core.port import FileId
from ..bridge import Bridge

LUA = "require('acp_nvim.host.editor_tools')"
LSP_TIMEOUT = 10.0
"""Seconds an LSP query may take (a server still indexing answers late or never)."""


class NvimEditorState:
    """``EditorState`` for Neovim."""

    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Json]] = {}

    def track(self) -> None:
        """Start remembering where visual selections end (a notification: never yields)."""
        self.bridge.lua_async(f"{LUA}.track()")

    async def diagnostics(self, path: str | None) -> Json:
        return _object(await self.bridge.lua(f"return {LUA}.diagnostics(...)", path))

    async def open_buffers(self) -> list[Json]:
        raw = await self.bridge.lua(f"return {LUA}.open_buffers()")
        return [_object(item) for item in raw or [] if isinstance(item, dict)]

    async def selection(self) -> Json | None:
        raw = await self.bridge.lua(f"return {LUA}.selection()")
        return _object(raw) if isinstance(raw, dict) else None

    async def lsp(self, query: LspQuery) -> Json:
        call = next(self._ids)
        future: asyncio.Future[Json] = asyncio.get_running_loop().create_future()
        self._pending[call] = future
        spec = {"kind": query.kind, "path": query.path, "line": query.line, "column": query.column,
                "symbol": query.symbol, "query": query.query, "expect": list(query.expect)}
        try:
            started = await self.bridge.lua(f"return {LUA}.lsp(...)", call, spec)
            if started is not True:
                return _object(started)
            return await asyncio.wait_for(future, LSP_TIMEOUT)
        except TimeoutError:
            return {"error": f"the LSP server did not answer within {LSP_TIMEOUT:g} s"}
        finally:
            self._pending.pop(call, None)

    def done(self, call: Any, answer: Any) -> None:
        """An LSP answer from Lua; unknown (timed out) calls are ignored."""
        future = self._pending.get(int(call))
        if future is not None and not future.done():
            future.set_result(_object(answer) if isinstance(answer, dict) else {"error": "no answer"})

    async def open_file(self, path: str, line: int, expect: FileId) -> Json:
        return _object(await self.bridge.lua(f"return {LUA}.open_file(...)", path, line, list(expect)))


def _object(raw: Any) -> Json:
    return {str(key): value for key, value in raw.items()} if isinstance(raw, dict) else {}
