"""The log buffer ``acp://log/<agent>/<n>``: a view of one session's log ring.

The frame budget: no call carries more than a page of lines (``PAGE_LINES``), whatever the
ring holds. A new buffer shows the newest page, then the older ones a page per flush above it
until it shows the session from its first entry (``initialize``), at most ``OPEN_PAGES`` pages:
an agent whose messages are long (codex-acp's config options and models) fills a page before its
first turn ends. It says how many older entries the ring has above it; they are drawn a page at a
time above the first line (``prepend``) as the user scrolls up to them (``want_older``), not all
at once: lines added at the top of a buffer cost Neovim time
in proportion to the buffer (its folds move), so a log of a million lines only grows when asked.
New entries are coalesced and sent at most once per ``FLUSH_DELAY``, together with the ring's
oldest kept sequence number so the buffer is trimmed with the ring; when more came than a page
holds (a flood at level trace), only the newest page goes and the buffer starts over from it;
and a buffer that tails keeps at most ``VIEW_ENTRIES`` entries.
At most one call is in flight; entries arriving meanwhile wait for the next one, so a flood
never queues up RPCs.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Iterable
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
PREPEND_CODE = "return require('acp_nvim.log').prepend(...)"
OPEN_CODE = "return require('acp_nvim.log').open(...)"
PAGE_LINES = 500
"""Lines of entries one call carries at most (at least one entry): Neovim evaluates the fold
expression of each new line (about 2 µs a line with a window open, plus the folds moved)."""
OPEN_PAGES = 8
"""Older pages a new buffer draws by itself, one per flush, to reach the session's start."""
VIEW_ENTRIES = 5000
"""Entries a log buffer keeps while it tails: older ones leave its top (the ring may keep them: the
user scrolls up to them). Cutting an entry off the top moves every fold below it in each window,
so a call that trims as many entries as it adds costs in proportion to this."""


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
        """The newest entry sent."""
        self._oldest = 1
        """The oldest entry the buffer shows (older ones the ring still has wait for ``want_older``)."""
        self._older_wanted = False
        self._opened = 0
        """Buffers ``open`` made: a call sent to an earlier one that was wiped says nothing of this one."""
        self._filling = 0
        """Older pages still to draw by themselves (a new buffer reaching the session's start)."""
        self._unsubscribe: Any = None
        self._handle: asyncio.TimerHandle | None = None
        self._busy = False

    @property
    def attached(self) -> bool:
        return self._unsubscribe is not None

    def open(self, nvim: pynvim.Nvim, focus: bool = True) -> None:
        """Show the buffer (greenlet context); a new one gets the ring's newest page now and the
        older entries a page per frame after."""
        if self.attached and nvim.exec_lua(OPEN_CODE, self.key, None, focus):
            return  # the buffer is there and up to date: no snapshot to format
        if not self.attached:
            self._unsubscribe = self.ring.subscribe(self._on_entry)
        last = self.ring.last_seq
        items = page(self.ring.older(last + 1))
        self._oldest = items[0][0] if items else last + 1
        nvim.exec_lua(OPEN_CODE, self.key, items, focus, self._hidden())
        self._opened += 1  # a call in flight to a wiped buffer must not detach this one
        self._sent = max(self._sent, last)
        self._filling = OPEN_PAGES
        self._older_wanted = self._hidden() > 0
        self._schedule()

    def want_older(self) -> None:
        """A window of the log scrolled up to its first line: the next page of older entries."""
        self._older_wanted = True
        self._schedule()

    def _hidden(self) -> int:
        """Entries the ring has that are older than the buffer's first."""
        return max(0, self._oldest - self.ring.first_seq)

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
        if self._handle is None and not self._busy and self.attached and self._pending():
            self._handle = asyncio.get_running_loop().call_later(FLUSH_DELAY, self._flush)

    def _pending(self) -> bool:
        return self.ring.last_seq > self._sent or self._older_wanted

    def _flush(self) -> None:
        """The new entries (up to a page: the newest), else the page of older ones asked for."""
        self._handle = None
        first_seq = self.ring.first_seq
        if self.ring.last_seq > self._sent:
            fresh = self.ring.since(self._sent)
            items = page(reversed(fresh))
            self._sent = self.ring.last_seq
            if len(items) < len(fresh):  # more than a page came: the buffer starts over from these
                first_seq = self._oldest = items[0][0]
            elif self._sent - VIEW_ENTRIES + 1 > max(first_seq, self._oldest):
                first_seq = self._oldest = self._sent - VIEW_ENTRIES + 1
            call = (APPEND_CODE, self.key, first_seq, items, self._hidden())
        elif self._older_wanted:
            self._older_wanted = False
            items = page(self.ring.older(self._oldest))
            self._oldest = items[0][0] if items else first_seq
            if self._filling > 1 and self._hidden() > 0:
                self._filling -= 1
                self._older_wanted = True
            else:
                self._filling = 0
            call = (PREPEND_CODE, self.key, first_seq, items, self._hidden())
        else:
            return
        self._busy = True
        tasks.spawn(self._send(call, self._opened), self.report, f"{self.key} log view")

    async def _send(self, call: tuple[str, str, int, list[list[Any]], int], opened: int) -> None:
        try:
            alive = await self.bridge.lua(*call)
        finally:
            self._busy = False
        if not alive and opened == self._opened:
            self.detach()
        else:
            self._schedule()


def page(newest_first: Iterable[LogEntry]) -> list[list[Any]]:
    """The items of the newest entries that fit ``PAGE_LINES`` (at least one), oldest first."""
    items: list[list[Any]] = []
    lines = 0
    for entry in newest_first:
        item = entry_item(entry)
        size = 1 + len(item[2])
        if items and lines + size > PAGE_LINES:
            break
        items.append(item)
        lines += size
    items.reverse()
    return items
