"""Per-session protocol log: a ring bounded by entry count and bytes, with levels.

Entries come from the raw wire (each JSON-RPC message, as sent or received), the
agent's stderr, non-JSON lines on its stdout, and lifecycle events. Every text is
redacted before it is kept, so the log buffer and exports never see a secret.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .config import LOG_LEVELS
from .log_summary import summarize

LEVEL_RANK = {name: rank for rank, name in enumerate(LOG_LEVELS)}
STREAMING_UPDATES = frozenset({"agent_message_chunk", "agent_thought_chunk", "user_message_chunk"})
WIRE_KINDS = frozenset({"request", "response", "notification"})
ENTRY_OVERHEAD = 256
"""Bytes charged per entry beyond its texts (the entry object and its fields)."""
MAX_PENDING = 4096
"""Requests remembered for time-to-response; an agent that never answers must not grow this."""
EXPORT_FORMAT = "acp.nvim log"
EXPORT_VERSION = 1


@dataclass(slots=True)
class LogEntry:
    """One line of the log buffer, with the full message kept for folding and export."""

    seq: int
    time: float
    level: str
    direction: str  # "out" (client → agent), "in" (agent → client), or "" for local events
    kind: str  # request | response | notification | stderr | stdout | lifecycle | error
    summary: str
    method: str | None = None
    msg_id: Any = None
    elapsed_ms: float | None = None
    raw: str | None = None
    size: int = 0

    def export_line(self) -> str:
        """This entry as one JSON line; wire messages keep their exact JSON under ``message``."""
        head = {"seq": self.seq, "time": round(self.time, 6), "level": self.level,
                "direction": self.direction, "kind": self.kind, "method": self.method,
                "id": self.msg_id, "elapsed_ms": self.elapsed_ms, "summary": self.summary}
        if self.kind in WIRE_KINDS and self.raw is not None:
            return json.dumps(head, ensure_ascii=False)[:-1] + ',"message":' + self.raw + "}"
        head["text"] = self.raw
        return json.dumps(head, ensure_ascii=False)


Listener = Callable[[LogEntry], None]
Redact = Callable[[str], str]


class LogRing:
    """A bounded, levelled ring of log entries; capacity 0 (entries or bytes) turns it off."""

    def __init__(self, max_entries: int = 5000, max_bytes: int = 8 << 20, level: str = "debug",
                 redact: Redact | None = None) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.level = _checked(level)
        self._rank = LEVEL_RANK[level]
        self.redact: Redact = redact or (lambda text: text)
        self._entries: deque[LogEntry] = deque()
        self._bytes = 0
        self._seq = 0
        self._listeners: list[Listener] = []
        self._started: dict[tuple[str, Any], tuple[str, float]] = {}

    # -- configuration -------------------------------------------------------------

    @property
    def enabled(self) -> bool:
        """False when a capacity is 0: nothing is recorded at all."""
        return self.max_entries > 0 and self.max_bytes > 0

    def set_level(self, level: str) -> None:
        """The per-session minimum level; raises ValueError for an unknown name."""
        self.level = _checked(level)
        self._rank = LEVEL_RANK[level]

    def enabled_for(self, level: str) -> bool:
        """Whether an entry of ``level`` would be kept."""
        return self.enabled and LEVEL_RANK[level] >= self._rank

    # -- reading -------------------------------------------------------------------

    def entries(self) -> list[LogEntry]:
        """A snapshot, oldest first."""
        return list(self._entries)

    def since(self, seq: int) -> list[LogEntry]:
        """Entries newer than ``seq``, oldest first (cheap when few are new)."""
        newer: list[LogEntry] = []
        for entry in reversed(self._entries):
            if entry.seq <= seq:
                break
            newer.append(entry)
        newer.reverse()
        return newer

    @property
    def first_seq(self) -> int:
        """Sequence number of the oldest kept entry (one past the last when empty)."""
        return self._entries[0].seq if self._entries else self._seq + 1

    @property
    def last_seq(self) -> int:
        return self._seq

    @property
    def total_bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` for each kept entry; returns the unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def export(self, header: dict[str, Any]) -> Iterator[str]:
        """JSONL lines: a header object, then every kept entry (see :meth:`LogEntry.export_line`)."""
        meta = {"format": EXPORT_FORMAT, "version": EXPORT_VERSION, "exported": time.time(), **header}
        yield self.redact(json.dumps(meta, ensure_ascii=False))
        for entry in list(self._entries):
            yield entry.export_line()

    # -- writing -------------------------------------------------------------------

    def add(self, level: str, kind: str, summary: str, **fields: Any) -> LogEntry | None:
        """Append an entry if its level passes the filter, trimming the oldest beyond the bounds."""
        if not self.enabled_for(level):
            return None
        raw = fields.pop("raw", None)
        self._seq += 1
        entry = LogEntry(self._seq, time.time(), level, fields.pop("direction", ""), kind,
                         self.redact(summary), raw=self.redact(raw) if raw is not None else None, **fields)
        entry.size = len(entry.summary) + (len(entry.raw) if entry.raw is not None else 0) + ENTRY_OVERHEAD
        self._entries.append(entry)
        self._bytes += entry.size
        self._trim()
        for listener in list(self._listeners):
            listener(entry)
        return entry

    def _trim(self) -> None:
        while self._entries and (len(self._entries) > self.max_entries or self._bytes > self.max_bytes):
            self._bytes -= self._entries.popleft().size

    def record_message(self, direction: str, message: dict[str, Any], raw: str | bytes | None = None) -> None:
        """Log one JSON-RPC message as it crossed the wire (``raw``: its exact line, if known)."""
        if not self.enabled:
            return
        kind, method, level = _classify(message)
        elapsed = None
        if kind == "request":
            self._remember(direction, message.get("id"), method or "?")
        elif kind == "response":
            method, elapsed = self._answered(direction, message.get("id"))
        if LEVEL_RANK[level] < self._rank:
            return
        if raw is None:
            raw = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        elif isinstance(raw, bytes):
            raw = raw.decode("utf-8", "replace")
        self.add(level, kind, summarize(kind, method, message, elapsed), direction=direction,
                 method=method, msg_id=message.get("id"), elapsed_ms=elapsed, raw=raw)

    def record_stdout(self, line: str) -> LogEntry | None:
        """A line on the agent's stdout that is not a JSON-RPC message (kept as such)."""
        return self.add("warn", "stdout", f"stdout (not JSON-RPC): {line[:300]}", direction="in", raw=line)

    def _remember(self, direction: str, msg_id: Any, method: str) -> None:
        if len(self._started) >= MAX_PENDING:
            self._started.pop(next(iter(self._started)))
        self._started[(direction, _key(msg_id))] = (method, time.monotonic())

    def _answered(self, direction: str, msg_id: Any) -> tuple[str | None, float | None]:
        requester = "in" if direction == "out" else "out"
        started = self._started.pop((requester, _key(msg_id)), None)
        if started is None:
            return None, None
        return started[0], round((time.monotonic() - started[1]) * 1000, 1)


def _classify(message: dict[str, Any]) -> tuple[str, str | None, str]:
    method = message.get("method")
    if method is None:
        return "response", None, "warn" if "error" in message else "debug"
    if "id" in message:
        return "request", method, "debug"
    params = message.get("params")
    update = params.get("update") if isinstance(params, dict) else None
    streaming = isinstance(update, dict) and update.get("sessionUpdate") in STREAMING_UPDATES
    return "notification", method, "trace" if streaming else "debug"


def _key(msg_id: Any) -> Any:
    return msg_id if isinstance(msg_id, (int, str)) else repr(msg_id)


def _checked(level: str) -> str:
    if level not in LEVEL_RANK:
        raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
    return level
