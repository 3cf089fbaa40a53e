"""Per-session protocol log: a ring bounded by entry count and bytes, with levels."""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .config import LOG_LEVELS

LEVEL_RANK = {name: rank for rank, name in enumerate(LOG_LEVELS)}
STREAMING_UPDATES = frozenset({"agent_message_chunk", "agent_thought_chunk", "user_message_chunk"})


@dataclass(slots=True)
class LogEntry:
    """One line of the log buffer, with the full message kept for folding and export."""

    seq: int
    time: float
    level: str
    direction: str  # "out" (client → agent), "in" (agent → client), or "" for local events
    kind: str  # request | response | notification | stderr | lifecycle | error
    summary: str
    method: str | None = None
    msg_id: Any = None
    elapsed_ms: float | None = None
    raw: str | None = None
    size: int = field(default=0)


Listener = Callable[[LogEntry], None]


class LogRing:
    """A bounded, levelled ring of log entries; capacity 0 turns it off."""

    def __init__(self, max_entries: int = 5000, max_bytes: int = 8 << 20, level: str = "debug") -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.level = level
        self._entries: deque[LogEntry] = deque()
        self._bytes = 0
        self._seq = 0
        self._listeners: list[Listener] = []
        self._started: dict[tuple[str, Any], tuple[str, float]] = {}

    def enabled_for(self, level: str) -> bool:
        """Whether an entry of ``level`` would be kept."""
        return self.max_entries > 0 and LEVEL_RANK[level] >= LEVEL_RANK[self.level]

    def entries(self) -> list[LogEntry]:
        """A snapshot, oldest first."""
        return list(self._entries)

    @property
    def total_bytes(self) -> int:
        return self._bytes

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` for each kept entry; returns the unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def add(self, level: str, kind: str, summary: str, **fields: Any) -> LogEntry | None:
        """Append an entry if its level passes the filter, trimming the oldest beyond the bounds."""
        if not self.enabled_for(level):
            return None
        self._seq += 1
        raw = fields.get("raw")
        entry = LogEntry(self._seq, time.time(), level, fields.pop("direction", ""), kind, summary, **fields)
        entry.size = len(summary) + (len(raw) if raw else 0) + 64
        self._entries.append(entry)
        self._bytes += entry.size
        self._trim()
        for listener in list(self._listeners):
            listener(entry)
        return entry

    def _trim(self) -> None:
        while self._entries and (len(self._entries) > self.max_entries or self._bytes > self.max_bytes):
            self._bytes -= self._entries.popleft().size

    def record_message(self, direction: str, message: dict[str, Any]) -> None:
        """Log one raw JSON-RPC message (the SDK's stream observers feed this)."""
        kind, method, level = self._classify(direction, message)
        if not self.enabled_for(level):
            return
        msg_id = message.get("id")
        elapsed = self._elapsed(direction, kind, method, msg_id)
        if kind == "response" and method is None:
            method = self._started.pop(("done", msg_id), (None, 0.0))[0]
        summary = _summarize(kind, method, message, elapsed)
        raw = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        self.add(level, kind, summary, direction=direction, method=method, msg_id=msg_id,
                 elapsed_ms=elapsed, raw=raw)

    def _classify(self, direction: str, message: dict[str, Any]) -> tuple[str, str | None, str]:
        method = message.get("method")
        if method is None:
            level = "error" if "error" in message else "debug"
            return "response", None, level
        if "id" in message:
            self._started[(direction, message["id"])] = (method, time.monotonic())
            return "request", method, "debug"
        update = (message.get("params") or {}).get("update") or {}
        level = "trace" if update.get("sessionUpdate") in STREAMING_UPDATES else "debug"
        return "notification", method, level

    def _elapsed(self, direction: str, kind: str, method: str | None, msg_id: Any) -> float | None:
        if kind != "response":
            return None
        requester = "in" if direction == "out" else "out"
        started = self._started.pop((requester, msg_id), None)
        if started is None:
            return None
        self._started[("done", msg_id)] = (started[0], 0.0)
        return round((time.monotonic() - started[1]) * 1000, 1)


def _summarize(kind: str, method: str | None, message: dict[str, Any], elapsed: float | None) -> str:
    parts = [kind, method or "?"]
    if "id" in message:
        parts.append(f"#{message['id']}")
    if elapsed is not None:
        parts.append(f"{elapsed:g}ms")
    params = message.get("params") or {}
    update = params.get("update") if isinstance(params, dict) else None
    if isinstance(update, dict) and "sessionUpdate" in update:
        parts.append(update["sessionUpdate"])
    if "error" in message:
        parts.append(f"error {message['error'].get('code')}: {message['error'].get('message')}")
    return " ".join(str(p) for p in parts)
