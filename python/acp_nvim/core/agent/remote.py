"""An agent reached over WebSocket (``url`` in its spec): the face of ``AgentProcess``, no process.

Connecting replaces spawning; the connection's close is the agent's exit (its WebSocket
close code). Everything else (initialize, the log taps, the capabilities) is the process's.
"""

from __future__ import annotations

import contextlib

from acp import connect_to_agent

from .process import AgentProcess
from .websocket import WebSocketTransport, connect


class RemoteAgent(AgentProcess):
    """One WebSocket connection to a remote agent; a reconnect makes a new one."""

    remote = True

    async def _spawn(self) -> None:
        url = self.spec.url or ""
        socket = await connect(self.name, url, self.spec.headers)
        transport = WebSocketTransport(socket, self, self._closed)
        self._stack.push_async_callback(transport.close)
        conn = self.conn = connect_to_agent(self._client, transport, use_unstable_protocol=True)  # session/resume
        self._stack.push_async_callback(conn.close)
        self.log.add("info", "lifecycle", f"connected to {url}")

    def _closed(self, code: int) -> None:
        self.log.add("warn", "lifecycle", f"connection closed (WebSocket code {code})")
        if not self.exited.done():
            self.exited.set_result(code)

    @property
    def alive(self) -> bool:
        return self.conn is not None and not self.exited.done()

    async def close(self) -> None:
        """Close the connection (the remote agent decides what its sessions become)."""
        await self._stack.aclose()
        self._closed(1000)

    def kill_now(self) -> None:
        """The editor quits: nothing to signal; the socket closes with the host."""
        with contextlib.suppress(Exception):
            self.log.add("info", "lifecycle", "editor exit: leaving the remote agent")
