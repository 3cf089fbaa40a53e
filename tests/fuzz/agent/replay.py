"""The replaying agent's parts: the ACP agent, a transport that counts answers to the lines it wrote,
and the control loop that takes batches from the harness and reports what came back.

Control protocol (JSON lines on a Unix socket, the agent connects): the agent sends
``{"ready": session_id}`` once a prompt turn is open; the harness sends ``{"batch": n, "lines":
[base64], "ids": [request ids], "sync": title, "timeout": s}``; the agent writes each line
(``@SID@`` filled in), then a ``session_info_update`` titled ``sync``, waits until every id was
answered (or the timeout), and replies ``{"batch": n, "answers": {id: count}}``.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections import Counter
from typing import Any

from acp import PROTOCOL_VERSION
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    SessionInfoUpdate,
)

from faults.agent.transport import TapTransport


class FuzzTransport(TapTransport):
    """Counts the client's responses to the request ids of the current batch."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.expected: set[str] = set()
        self.answers: Counter[str] = Counter()
        self.changed = asyncio.Event()

    def intercept(self, message: dict[str, Any]) -> bool:
        key = message.get("id")
        if "method" not in message and isinstance(key, str) and key in self.expected:
            self.answers[key] += 1
            self.changed.set()
            return True
        return super().intercept(message)


class FuzzAgent:
    """Answers the handshake; its prompt turn stays open until the client cancels it."""

    def __init__(self) -> None:
        self.client: Client | None = None
        self.session_id = ""
        self.turn_open = asyncio.Event()
        self._cancelled = asyncio.Event()

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=PROTOCOL_VERSION, agent_capabilities=AgentCapabilities())

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        self.session_id = "fuzz-session"
        return NewSessionResponse(session_id=self.session_id)

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        self._cancelled.clear()
        self.turn_open.set()
        await self._cancelled.wait()
        self.turn_open.clear()
        return PromptResponse(stop_reason="cancelled")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self._cancelled.set()


class Control:
    """The harness's line to the agent."""

    def __init__(self, path: str, agent: FuzzAgent, transport: FuzzTransport) -> None:
        self._path = path
        self._agent = agent
        self._transport = transport

    async def run(self) -> None:
        reader, writer = await asyncio.open_unix_connection(self._path, limit=1 << 30)
        await self._agent.turn_open.wait()
        await self._send(writer, {"ready": self._agent.session_id})
        while line := await reader.readline():
            report = await self._batch(json.loads(line))
            await self._send(writer, report)

    async def _send(self, writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        writer.write(json.dumps(message).encode() + b"\n")
        await writer.drain()

    async def _batch(self, batch: dict[str, Any]) -> dict[str, Any]:
        transport = self._transport
        transport.expected = set(batch["ids"])
        transport.answers = Counter()
        sid = self._agent.session_id.encode()
        for encoded in batch["lines"]:
            await transport.raw(base64.b64decode(encoded).replace(b"@SID@", sid) + b"\n")
        assert self._agent.client is not None
        await self._agent.client.session_update(session_id=self._agent.session_id, update=SessionInfoUpdate(
            session_update="session_info_update", title=batch["sync"]))
        await self._wait_answers(batch["timeout"])
        return {"batch": batch["batch"], "answers": dict(transport.answers)}

    async def _wait_answers(self, timeout: float) -> None:
        transport = self._transport
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not transport.expected <= set(transport.answers) and loop.time() < deadline:
            transport.changed.clear()
            try:
                await asyncio.wait_for(transport.changed.wait(), deadline - loop.time())
            except TimeoutError:
                break
        await asyncio.sleep(0.05)  # a second answer to the same id would come right after the first
