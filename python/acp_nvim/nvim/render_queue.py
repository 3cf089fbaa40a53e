"""Coalesces render operations and status changes into one Lua call per short tick.

One RPC per streamed chunk is 50-100x slower than one per batch (GUIDE.md §4), so
operations wait here for a few milliseconds; consecutive appends to the same block merge.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

FLUSH_DELAY = 0.008
FLUSH_CODE = "require('acp_nvim.ui').flush(...)"


class RenderQueue:
    """Buffers ops per session and session states, then flushes them together."""

    def __init__(self, send: Callable[[str, dict[str, Any], dict[str, Any]], None],
                 states: Callable[[str], dict[str, Any]]) -> None:
        self._send = send
        self._states = states
        self._ops: dict[str, list[list[Any]]] = {}
        self._changed: set[str] = set()
        self._handle: asyncio.TimerHandle | None = None

    def push(self, key: str, ops: list[list[Any]]) -> None:
        queue = self._ops.setdefault(key, [])
        for op in ops:
            last = queue[-1] if queue else None
            if last is not None and op[0] == "append" and last[0] == "append" and last[1] == op[1]:
                last[2] += op[2]
            else:
                queue.append(list(op))
        self._schedule()

    def changed(self, key: str) -> None:
        self._changed.add(key)
        self._schedule()

    def _schedule(self) -> None:
        if self._handle is None:
            self._handle = asyncio.get_running_loop().call_later(FLUSH_DELAY, self.flush)

    def flush(self) -> None:
        """Send everything queued now (also called directly before operations that need order)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if not self._ops and not self._changed:
            return
        ops, self._ops = self._ops, {}
        states = {key: self._states(key) for key in self._changed}
        self._changed = set()
        self._send(FLUSH_CODE, ops, states)
