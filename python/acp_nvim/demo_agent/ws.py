"""The demo agent served over WebSocket (``--ws HOST:PORT``): a remote agent to try and test.

Each connection gets its own agent over one shared session table, so a client that
reconnects can load (or, with ``--resume``, resume) its session. SIGUSR1 drops every open
connection at once (the tests' "network failure"); the server keeps listening.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
from typing import Any, cast

from acp import Agent
from acp.agent.connection import AgentSideConnection

from .agent import DemoAgent
from .session import SessionState

FRAME_LIMIT = 64 * 1024 * 1024


class SocketTransport:
    """One JSON-RPC message per text frame (the SDK's WebSocket framing), agent side."""

    def __init__(self, socket: Any) -> None:
        self._socket = socket

    async def send(self, message: dict[str, Any]) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            await self._socket.send(json.dumps(message, separators=(",", ":")))
        except ConnectionClosed as exc:
            raise ConnectionError(str(exc)) from None

    async def receive(self) -> dict[str, Any] | None:
        from websockets.exceptions import ConnectionClosed

        while True:
            try:
                frame = await self._socket.recv()
            except ConnectionClosed:
                return None
            with contextlib.suppress(ValueError):
                message = json.loads(frame)
                if isinstance(message, dict):
                    return message

    async def close(self) -> None:
        await self._socket.close()


async def serve_ws(address: str, resume: bool) -> None:
    """Listen on ``HOST:PORT`` (port 0: any free one, printed as ``listening on ws://…``)."""
    from websockets.asyncio.server import serve

    host, _, port = address.rpartition(":")
    sessions: dict[str, SessionState] = {}
    open_sockets: set[Any] = set()

    async def handle(socket: Any) -> None:
        open_sockets.add(socket)
        transport = SocketTransport(socket)
        agent = DemoAgent(sessions=sessions, resume=resume)
        connection = AgentSideConnection(cast(Agent, agent), transport, listening=False, use_unstable_protocol=True)
        try:
            await connection.listen()
        finally:
            open_sockets.discard(socket)
            with contextlib.suppress(Exception):
                await connection.close()

    def drop_all() -> None:
        for socket in list(open_sockets):
            socket.transport.abort()  # no close handshake: the network went away

    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, drop_all)
    async with serve(handle, host or "127.0.0.1", int(port or 0), max_size=FRAME_LIMIT) as server:
        bound = next(iter(server.sockets)).getsockname()
        print(f"listening on ws://{bound[0]}:{bound[1]}", flush=True)
        sys.stdout.flush()
        await server.serve_forever()
