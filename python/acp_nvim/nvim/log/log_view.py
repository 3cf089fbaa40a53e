"""The log buffer ``acp://log/<agent>/<n>``: a view of one session's log ring.

New entries are coalesced and sent at most once per ``FLUSH_DELAY`` with one Lua
call, together with the ring's oldest kept sequence number so the buffer is trimmed
with the ring. At most one call is in flight; entries arriving meanwhile wait for
the next one, so a flood never queues up RPCs.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from typing import Any

import pynvim

from ...core import tasks
from ...core.log.ring import WIRE_KINDS, LogEntry, LogRing
from ..bridge import Bridge

FLUSH_DELAY = 0.016
LEVEL_TAGS = {"trace": "TRC", "debug": "DBG", "info": "INF", "warn": "WRN", "error": "ERR"}
ARROWS = {"out": "→", "in": "←"}
BODY_INDENT = "  "
APPEND_CODE = "return require('acp_nvim.log').append(...)"
OPEN_CODE = "return require('acp_nvim.log').open(...)"


def entry_item(entry: LogEntry) -> list[Any]:
    """``[seq, header line, body lines]`` as the Lua side renders them."""
    return [entry.seq, header_line(entry), body_lines(entry)]


def header_line(entry: LogEntry) -> str:
    """``HH:MM:SS.mmm LVL → summary`` on one line (never starting with a blank: see the fold expr)."""
    stamp = _clock(int(entry.time)) + f".{int(entry.time * 1000) % 1000:03d}"
    prefix = "" if entry.kind in WIRE_KINDS else f"{entry.kind}: "
    text = f"{prefix}{entry.summary}".replace("\r", "").replace("\n", "⏎")
    return f"{stamp} {LEVEL_TAGS[entry.level]} {ARROWS.get(entry.direction, '·')} {text}"


@functools.lru_cache(maxsize=4)
def _clock(second: int) -> str:
    return time.strftime("%H:%M:%S", time.localtime(second))


def body_lines(entry: LogEntry) -> list[str]:
    """The full message indented under the entry line: pretty-printed JSON, except for streamed
    chunks (level trace), which stay on one line so that a flood costs little to show."""
    if entry.raw is None:
        return []
    if entry.level == "trace":
        return [BODY_INDENT + entry.raw.replace("\r", "").replace("\n", "\\n")]
    try:
        text = json.dumps(json.loads(entry.raw), indent=2, ensure_ascii=False)
    except ValueError:
        text = entry.raw
    return [BODY_INDENT + line.replace("\r", "") for line in text.split("\n")]


class LogView:
    """Mirrors one ring into its buffer while the buffer exists."""

    def __init__(self, bridge: Bridge, key: str, ring: LogRing, report: tasks.ErrorReporter) -> None:
        self.bridge = bridge
        self.report = report
        self.key = key
        self.ring = ring
        self._sent = 0
        self._unsubscribe: Any = None
        self._handle: asyncio.TimerHandle | None = None
        self._busy = False

    @property
    def attached(self) -> bool:
        return self._unsubscribe is not None

    def open(self, nvim: pynvim.Nvim, focus: bool = True) -> None:
        """Show the buffer (greenlet context), filling it from the ring when it is new."""
        if self.attached and nvim.exec_lua(OPEN_CODE, self.key, None, focus):
            return  # the buffer is there and up to date: no snapshot to format
        if not self.attached:
            self._unsubscribe = self.ring.subscribe(self._on_entry)
        snapshot = self.ring.entries()
        last = snapshot[-1].seq if snapshot else self._sent
        nvim.exec_lua(OPEN_CODE, self.key, [entry_item(e) for e in snapshot], focus)
        self._sent = max(self._sent, last)

    def detach(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _on_entry(self, entry: LogEntry) -> None:
        self._schedule()

    def _schedule(self) -> None:
        if self._handle is None and not self._busy:
            self._handle = asyncio.get_running_loop().call_later(FLUSH_DELAY, self._flush)

    def _flush(self) -> None:
        self._handle = None
        items = [entry_item(e) for e in self.ring.since(self._sent)]
        self._sent = self.ring.last_seq
        self._busy = True
        tasks.spawn(self._send(self.ring.first_seq, items), self.report, f"{self.key} log view")

    async def _send(self, first_seq: int, items: list[list[Any]]) -> None:
        try:
            alive = await self.bridge.lua(APPEND_CODE, self.key, first_seq, items)
        finally:
            self._busy = False
        if not alive:
            self.detach()
        elif self.ring.last_seq > self._sent:
            self._schedule()
