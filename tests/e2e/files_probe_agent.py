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
import sys
import time
from pathlib import Path
from typing import Any

from acp import RequestError, run_agent, stdio_streams

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: run as a script
from scripted_agent import ScriptedAgent

LIMIT = 64 * 1024 * 1024


class ProbeAgent(ScriptedAgent):
    name = "probe"

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
