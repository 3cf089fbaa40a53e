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

from ...core.render_ops import RenderOp, append

FLUSH_DELAY = 0.016
"""Seconds operations wait: one flush (and one redraw) per frame keeps Neovim's share small."""
FLUSH_CODE = "require('acp_nvim.ui').flush(...)"
REPLACEABLE = frozenset(("set", "clip"))


class _Appends:
    """Consecutive appends to one block, joined once at flush."""

    __slots__ = ("id", "parts")

    def __init__(self, block_id: int, text: str) -> None:
        self.id = block_id
        self.parts = [text]


Queued = RenderOp | _Appends


class RenderQueue:
    """Buffers ops per session and session states, then flushes them together."""

    def __init__(self, send: Callable[[str, dict[str, list[RenderOp]], dict[str, Any]], None],
                 states: Callable[[str], dict[str, Any]]) -> None:
        self._send = send
        self._states = states
        self._ops: dict[str, list[Queued]] = {}
        self._changed: set[str] = set()
        self._handle: asyncio.TimerHandle | asyncio.Handle | None = None
        self._last_flush = float("-inf")

    def push(self, key: str, ops: list[RenderOp]) -> None:
        queue = self._ops.get(key)
        if queue is None:
            queue = self._ops[key] = []
        for op in ops:
            self._add(queue, op)
        if self._handle is None:
            self._schedule()

    @staticmethod
    def _add(queue: list[Queued], op: RenderOp) -> None:
        last = queue[-1] if queue else None
        if op["op"] == "append":
            if isinstance(last, _Appends) and last.id == op["id"]:
                last.parts.append(op["text"])  # joined once, at flush
            else:
                queue.append(_Appends(op["id"], op["text"]))
            return
        if (last is not None and not isinstance(last, _Appends) and last["id"] == op["id"]
                and op["op"] in REPLACEABLE and last["op"] == op["op"]):
            queue[-1] = op
            return
        queue.append(op)

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
        queued, self._ops = self._ops, {}
        ops = {key: [_sent(op) for op in queue] for key, queue in queued.items()}
        states = {key: self._states(key) for key in self._changed}
        self._changed = set()
        self._send(FLUSH_CODE, ops, states)


def _sent(op: Queued) -> RenderOp:
    return append(op.id, "".join(op.parts)) if isinstance(op, _Appends) else op
