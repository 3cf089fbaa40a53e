"""A scripted agent that writes down what each of its processes was told it may ask (``initialize``'s
client capabilities), lists and closes sessions, and, with ``ACP_TEST_READ`` set, reads that file
through the client (``fs/read_text_file``) right after ``session/new``: before a warm process is taken.

  ACP_TEST_CAPS_OUT   a file: one JSON line per process, its clientCapabilities
  ACP_TEST_READ       a path to read after session/new; the answer (or the error) goes to
  ACP_TEST_READ_OUT   as {"content": ...} or {"code": ..., "message": ...}
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, run_agent, stdio_streams
from acp.schema import (
    AgentCapabilities,
    CloseSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    NewSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionListCapabilities,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: run as a script
from scripted_agent import ScriptedAgent


class CapsAgent(ScriptedAgent):
    name = "caps"

    def __init__(self) -> None:
        super().__init__()
        self._reads: set[asyncio.Task[None]] = set()

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        caps = kwargs.get("client_capabilities")
        with open(os.environ["ACP_TEST_CAPS_OUT"], "a", encoding="utf-8") as out:
            out.write(json.dumps(caps.model_dump(by_alias=True, exclude_none=True) if caps else None) + "\n")
        sessions = SessionCapabilities(list=SessionListCapabilities(), close=SessionCloseCapabilities())
        return InitializeResponse(protocol_version=PROTOCOL_VERSION,
                                  agent_capabilities=AgentCapabilities(session_capabilities=sessions),
                                  agent_info=Implementation(name=self.name, version="0"))

    async def new_session(self, cwd: str, mcp_servers: list[Any], **kwargs: Any) -> NewSessionResponse:
        response = await super().new_session(cwd, mcp_servers, **kwargs)
        if os.environ.get("ACP_TEST_READ"):
            task = asyncio.ensure_future(self._read(response.session_id))
            self._reads.add(task)
        return response

    async def _read(self, session_id: str) -> None:
        try:
            answer: dict[str, Any] = {"content": (await self.client.read_text_file(
                session_id=session_id, path=os.environ["ACP_TEST_READ"])).content}
        except RequestError as exc:
            answer = {"code": exc.code, "message": str(exc)}
        partial = os.environ["ACP_TEST_READ_OUT"] + ".partial"
        Path(partial).write_text(json.dumps(answer), encoding="utf-8")
        os.replace(partial, os.environ["ACP_TEST_READ_OUT"])

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None,
                            **kwargs: Any) -> ListSessionsResponse:
        return ListSessionsResponse(sessions=[])

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        return CloseSessionResponse()


async def serve() -> None:
    reader, writer = await stdio_streams()
    await run_agent(CapsAgent(), writer, reader)


if __name__ == "__main__":
    asyncio.run(serve())
