"""An agent reached over WebSocket (``url`` in its spec): the face of ``AgentProcess``, no process.

Connecting replaces spawning; the connection's close is the agent's exit (its WebSocket
close code), told to the owner through ``AgentHooks.exited`` as a process's exit is.
Everything else (``initialize`` through ``ask``, the log taps, the capabilities) is the
process's. The transport does not take the wire's hot path: every message goes through the
SDK's models (``session/update`` included).
"""

from __future__ import annotations

import asyncio
import contextlib

from acp import connect_to_agent

from ..config import AgentSpec
from .process import CONNECTION_CLOSE, AgentProcess
from .websocket import WebSocketTransport, connect


def clear_text_warning(spec: AgentSpec) -> str | None:
    """What to tell the user when a session starts on a ``ws://`` address off this machine
    (allowed only by ``insecure = true``); None for every other agent."""
    if not spec.clear_text:
        return None
    return (f"{spec.url} is not encrypted (insecure = true): headers, files and the MCP token cross "
            "the network in clear text")


class RemoteAgent(AgentProcess):
    """One WebSocket connection to a remote agent; a reconnect makes a new one."""

    remote = True

    _transport: WebSocketTransport | None = None

    async def _spawn(self) -> None:
        url = self.spec.url or ""
        socket = await connect(self.name, url, self.spec.headers)
        self._transport = WebSocketTransport(socket, self, self._closed)
        self.conn = connect_to_agent(self._client, self._transport, use_unstable_protocol=True)  # session/resume
        self.log.add("info", "lifecycle", f"connected to {url}")

    def _closed(self, code: int) -> None:
        """The connection closed (the agent's exit): logged once, then told to the owner."""
        if self.exited.done():
            return
        self.log.add("info" if self.closing else "warn", "lifecycle", f"connection closed (WebSocket code {code})")
        self.exited.set_result(code)
        self.hooks.exited(self, code)

    @property
    def alive(self) -> bool:
        return self.conn is not None and not self.exited.done() and not self.closing

    async def close(self) -> None:
        """Close the connection (the remote agent decides what its sessions become)."""
        self.closing = True
        conn, transport = self.conn, self._transport
        if conn is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.close(), CONNECTION_CLOSE)
        if transport is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(transport.close(), CONNECTION_CLOSE)
        self._closed(1000)

    def kill_now(self) -> None:
        """The editor quits: nothing to signal; the socket closes with the host."""
        self.closing = True
        with contextlib.suppress(Exception):
            self.log.add("info", "lifecycle", "editor exit: leaving the remote agent")
