"""A tiny real ACP agent for fs tests and the fs benchmark: it sends exactly the request it is told.

The prompt is one JSON object:
  {"op": "read", "path": ..., "line": n?, "limit": n?, "out": result-file}
  {"op": "write", "path": ..., "content": ..., "out": result-file}
  {"op": "bench", "path": ..., "n": count, "line": n?, "limit": n?, "out": result-file}
Paths go out verbatim (relative, ``..`` and all), unlike the demo agent's. The outcome is
written as JSON to ``out``: {"ok": true, "content": ...} or {"ok": false, "code": .., "message": ..},
and for ``bench`` {"ms": [per-read milliseconds], "chars": n}.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, run_agent, stdio_streams
from acp.helpers import update_agent_message_text
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    TextContentBlock,
)

LIMIT = 64 * 1024 * 1024


class ProbeAgent:
    def __init__(self) -> None:
        self.client: Any = None

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=PROTOCOL_VERSION, agent_capabilities=AgentCapabilities(),
                                  agent_info=Implementation(name="fs-probe", version="0"))

    async def new_session(self, cwd: str, mcp_servers: list[Any], **kwargs: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id="probe-1")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        text = "".join(b.text for b in prompt if isinstance(b, TextContentBlock))
        request = json.loads(text[text.index("{"):])
        result = await getattr(self, "_" + request["op"])(session_id, request)
        partial = request["out"] + ".partial"  # the test polls for the file: it appears whole
        with open(partial, "w", encoding="utf-8") as handle:
            json.dump(result, handle)
        os.replace(partial, request["out"])
        await self.client.session_update(session_id=session_id,
                                         update=update_agent_message_text(f"probe {request['op']} done\n"))
        return PromptResponse(stop_reason="end_turn")

    async def _read(self, session_id: str, request: dict[str, Any]) -> dict[str, Any]:
        try:
            response = await self.client.read_text_file(session_id=session_id, path=request["path"],
                                                        line=request.get("line"), limit=request.get("limit"))
        except RequestError as exc:
            return {"ok": False, "code": exc.code, "message": str(exc), "data": exc.data}
        return {"ok": True, "content": response.content}

    async def _write(self, session_id: str, request: dict[str, Any]) -> dict[str, Any]:
        try:
            await self.client.write_text_file(session_id=session_id, path=request["path"],
                                              content=request["content"])
        except RequestError as exc:
            return {"ok": False, "code": exc.code, "message": str(exc), "data": exc.data}
        return {"ok": True}

    async def _bench(self, session_id: str, request: dict[str, Any]) -> dict[str, Any]:
        times, chars = [], 0
        for _ in range(int(request["n"])):
            start = time.perf_counter()
            response = await self.client.read_text_file(session_id=session_id, path=request["path"],
                                                        line=request.get("line"), limit=request.get("limit"))
            times.append((time.perf_counter() - start) * 1000)
            chars = len(response.content)
        return {"ms": times, "chars": chars}


async def serve() -> None:
    reader, writer = await stdio_streams(limit=LIMIT)
    await run_agent(ProbeAgent(), writer, reader, stdio_buffer_limit_bytes=LIMIT)


if __name__ == "__main__":
    asyncio.run(serve())
    sys.exit(0)
