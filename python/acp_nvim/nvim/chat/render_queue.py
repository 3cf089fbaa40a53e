"""Coalesces render operations and status changes into one Lua call per short tick.

One RPC per streamed chunk is 50-100x slower than one per batch, so operations wait here
for one frame (``FLUSH_DELAY``): consecutive appends to one block become one
append, and a newer ``set``/``clip`` of a block replaces the queued one. What comes after a
quiet frame goes at once (on the next turn of the event loop): the first chunk of a reply
shows without waiting a frame, and a stream is still sent at most once per frame.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

FLUSH_DELAY = 0.016
"""Seconds operations wait: one flush (and one redraw) per frame keeps Neovim's share small."""
FLUSH_CODE = "require('acp_nvim.ui').flush(...)"
REPLACEABLE = frozenset(("set", "clip"))


class RenderQueue:
    """Buffers ops per session and session states, then flushes them together."""

    def __init__(self, send: Callable[[str, dict[str, Any], dict[str, Any]], None],
                 states: Callable[[str], dict[str, Any]]) -> None:
        self._send = send
        self._states = states
        self._ops: dict[str, list[list[Any]]] = {}
        self._changed: set[str] = set()
        self._handle: asyncio.TimerHandle | asyncio.Handle | None = None
        self._last_flush = float("-inf")

    def push(self, key: str, ops: list[list[Any]]) -> None:
        queue = self._ops.get(key)
        if queue is None:
            queue = self._ops[key] = []
        for op in ops:
            self._add(queue, op)
        if self._handle is None:
            self._schedule()

    @staticmethod
    def _add(queue: list[list[Any]], op: list[Any]) -> None:
        last = queue[-1] if queue else None
        kind = op[0]
        if last is not None and last[1] == op[1]:
            if kind == "append" and last[0] == "append":
                last[2].append(op[2])  # joined once, at flush
                return
            if kind in REPLACEABLE and last[0] == kind:
                queue[-1] = op
                return
        queue.append(["append", op[1], [op[2]]] if kind == "append" else op)

    def changed(self, key: str) -> None:
        self._changed.add(key)
        if self._handle is None:
            self._schedule()

    def _schedule(self) -> None:
        loop = asyncio.get_running_loop()
        wait = self._last_flush + FLUSH_DELAY - time.monotonic()
        self._handle = loop.call_later(wait, self.flush) if wait > 0 else loop.call_soon(self.flush)

    def flush(self) -> None:
        """Send everything queued now (also called directly before operations that need order)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if not self._ops and not self._changed:
            return
        self._last_flush = time.monotonic()
        ops, self._ops = self._ops, {}
        for queue in ops.values():
            for op in queue:
                if op[0] == "append":
                    op[2] = "".join(op[2])
        states = {key: self._states(key) for key in self._changed}
        self._changed = set()
        self._send(FLUSH_CODE, ops, states)
