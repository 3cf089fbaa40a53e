"""Per-session protocol log: a ring bounded by entry count and bytes, with levels.

Entries come from the raw wire (each JSON-RPC message, as sent or received), the
agent's stderr, non-JSON lines on its stdout, and lifecycle events. Every text is
redacted before anything reads it, so the log buffer and exports never see a secret.
A wire entry keeps its line as it arrived and builds its summary and redacted text
on first read: at level trace a streamed chunk then costs about a microsecond.
"""

from __future__ import annotations

import itertools
import json
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping

from .summary import summarize

LOG_LEVELS = ("trace", "debug", "info", "warn", "error")
"""Lowest first; a ring keeps the entries at or above its level."""
LEVEL_RANK = {name: rank for rank, name in enumerate(LOG_LEVELS)}
TRACE_RANK = LEVEL_RANK["trace"]
STREAMING_UPDATES = frozenset({"agent_message_chunk", "agent_thought_chunk", "user_message_chunk"})
WIRE_KINDS = frozenset({"request", "response", "notification"})
ENTRY_OVERHEAD = 256
"""Bytes charged per entry beyond its texts (the entry object and its fields)."""
MAX_PENDING = 4096
"""Requests remembered for time-to-response; an agent that never answers must not grow this."""
EXPORT_FORMAT = "acp.nvim log"
EXPORT_VERSION = 1
SUMMARY_ESTIMATE = 100
"""Bytes charged for a summary not built yet."""

Redact = Callable[[str], str]
Raw = str | bytes | memoryview
"""A message as it crossed the wire: text, or its UTF-8 bytes (a view of the line written, for a large
answer: kept without a copy, decoded only when the entry is read)."""
Record = tuple[int, float, str, str, str, str | None, object, float | None, int, str | None, Raw | None]
"""(seq, time, level, direction, kind, method, msg_id, elapsed_ms, size, summary, text); a wire entry
has summary None and its text as it crossed the wire, unredacted until read."""


class LogEntry:
    """One entry as read from the ring: a line of the log buffer, with the full message.

    ``direction``: "out" (client → agent), "in" (agent → client), or "" for local events;
    ``kind``: request | response | notification | stderr | stdout | lifecycle | error.
    """

    __slots__ = ("_raw", "_redact", "_summary", "direction", "elapsed_ms", "kind", "level", "method", "msg_id",
                 "seq", "size", "time")

    seq: int
    time: float
    level: str
    direction: str
    kind: str
    method: str | None
    msg_id: object
    elapsed_ms: float | None
    size: int
    _summary: str | None
    _raw: Raw | None

    def __init__(self, record: Record, redact: Redact) -> None:
        (self.seq, self.time, self.level, self.direction, self.kind, self.method, self.msg_id, self.elapsed_ms,
         self.size, self._summary, self._raw) = record
        self._redact: Redact | None = redact if self._summary is None else None

    @property
    def summary(self) -> str:
        """The one-line summary (redacted)."""
        if self._redact is not None:
            self._materialize(self._redact)
        return self._summary or ""

    @property
    def raw(self) -> str | None:
        """The full message or text (redacted), None when there is none."""
        if self._redact is not None:
            self._materialize(self._redact)
        raw = self._raw
        return raw if raw is None or isinstance(raw, str) else str(raw, "utf-8", "replace")

    def _materialize(self, redact: Redact) -> None:
        """Build the summary and redact the text of a wire entry recorded as it arrived."""
        raw = self._raw
        text = raw if isinstance(raw, str) else str(raw or b"", "utf-8", "replace")
        clean = redact(text)
        try:
            summary = summarize(self.kind, self.method, json.loads(text), self.elapsed_ms)
        except (ValueError, RecursionError):
            summary = f"{self.kind} {self.method or '?'}"
        if clean is not text:  # the summary quotes the message: clean it only when the message had a secret
            summary = redact(summary)
        self._raw, self._summary, self._redact = clean, summary, None

    def __repr__(self) -> str:
        return f"LogEntry(#{self.seq} {self.level} {self.direction} {self.kind} {self.summary!r})"

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


class LogRing:
    """A bounded, levelled ring of log entries; capacity 0 (entries or bytes) turns it off.

    Entries are stored as plain tuples of strings and numbers: the garbage collector
    stops tracking those, so thousands of kept entries cost it nothing (objects would
    make every collection of a busy host slower).
    """

    def __init__(self, max_entries: int = 5000, max_bytes: int = 8 << 20, level: str = "debug",
                 redact: Redact | None = None) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.level = _checked(level)
        self._rank = LEVEL_RANK[level]
        self.redact: Redact = redact or (lambda text: text)
        self._records: deque[Record] = deque()
        self._bytes = 0
        self._seq = 0
        self._listeners: list[Listener] = []
        self._started: dict[tuple[str, int | str], tuple[str, float]] = {}

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
        return [LogEntry(record, self.redact) for record in self._records]

    def since(self, seq: int) -> list[LogEntry]:
        """Entries newer than ``seq``, oldest first (cheap when few are new)."""
        newer: list[LogEntry] = []
        for record in reversed(self._records):
            if record[0] <= seq:
                break
            newer.append(LogEntry(record, self.redact))
        newer.reverse()
        return newer

    def older(self, seq: int) -> Iterator[LogEntry]:
        """Entries older than ``seq``, newest first (read it before the ring changes again). Kept
        entries have consecutive numbers: the newer ones are skipped at C speed, not looked at."""
        records = self._records
        newer = max(0, self._seq - seq + 1) if records else 0
        for record in itertools.islice(reversed(records), newer, None):
            if record[0] < seq:
                yield LogEntry(record, self.redact)

    @property
    def first_seq(self) -> int:
        """Sequence number of the oldest kept entry (one past the last when empty)."""
        return self._records[0][0] if self._records else self._seq + 1

    @property
    def last_seq(self) -> int:
        return self._seq

    @property
    def total_bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._records)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` for each kept entry; returns the unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def export(self, header: Mapping[str, object]) -> Iterator[str]:
        """JSONL lines: a header object, then every kept entry (see :meth:`LogEntry.export_line`)."""
        meta = {"format": EXPORT_FORMAT, "version": EXPORT_VERSION, "exported": time.time(), **header}
        yield self.redact(json.dumps(meta, ensure_ascii=False))
        for record in list(self._records):
            yield LogEntry(record, self.redact).export_line()

    # -- writing -------------------------------------------------------------------

    def add(self, level: str, kind: str, summary: str, *, direction: str = "", method: str | None = None,
            msg_id: object = None, elapsed_ms: float | None = None, raw: str | None = None) -> LogEntry | None:
        """Append an entry if its level passes the filter, trimming the oldest beyond the bounds."""
        if not self.enabled_for(level):
            return None
        summary = self.redact(summary)
        text = self.redact(raw) if raw is not None else None
        size = len(summary) + (len(text) if text is not None else 0)
        return LogEntry(self._append(level, direction, kind, method, msg_id, elapsed_ms, size, summary, text),
                        self.redact)

    def _append(self, level: str, direction: str, kind: str, method: str | None, msg_id: object,
                elapsed_ms: float | None, size: int, summary: str | None, text: Raw | None) -> Record:
        self._seq += 1
        size += ENTRY_OVERHEAD
        record: Record = (self._seq, time.time(), level, direction, kind, method, msg_id, elapsed_ms, size, summary,
                          text)
        self._records.append(record)
        self._bytes += size
        while len(self._records) > self.max_entries or self._bytes > self.max_bytes:
            self._bytes -= self._records.popleft()[8]
        if self._listeners:
            entry = LogEntry(record, self.redact)
            for listener in list(self._listeners):
                listener(entry)
        return record

    def take(self, other: LogRing) -> None:
        """Append ``other``'s entries (a warm agent's story before a session took it), oldest first, with
        their times; requests it waits on are timed here from now on."""
        for record in list(other._records):
            self._seq += 1
            moved: Record = (self._seq, *record[1:])
            self._records.append(moved)
            self._bytes += record[8]
        while len(self._records) > self.max_entries or self._bytes > self.max_bytes:
            self._bytes -= self._records.popleft()[8]
        self._started.update(other._started)

    def record_message(self, direction: str, message: Mapping[str, object], raw: Raw | None = None) -> None:
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
        self._append(level, direction, kind, method, message.get("id"), elapsed, len(raw) + SUMMARY_ESTIMATE,
                     None, raw)

    def record_streamed(self, direction: str, raw: bytes) -> None:
        """A ``session/update`` the wire found to be a streamed text chunk: what ``record_message``
        keeps of it (level trace), without classifying it again."""
        if self._rank > TRACE_RANK or not self.enabled:
            return
        self._append("trace", direction, "notification", "session/update", None, None, len(raw) + SUMMARY_ESTIMATE,
                     None, raw)

    def record_stdout(self, line: str) -> LogEntry | None:
        """A line on the agent's stdout that is not a JSON-RPC message (kept as such)."""
        return self.add("warn", "stdout", f"stdout (not JSON-RPC): {line[:300]}", direction="in", raw=line)

    def _remember(self, direction: str, msg_id: object, method: str) -> None:
        if len(self._started) >= MAX_PENDING:
            self._started.pop(next(iter(self._started)))
        self._started[(direction, _key(msg_id))] = (method, time.monotonic())

    def _answered(self, direction: str, msg_id: object) -> tuple[str | None, float | None]:
        requester = "in" if direction == "out" else "out"
        started = self._started.pop((requester, _key(msg_id)), None)
        if started is None:
            return None, None
        return started[0], round((time.monotonic() - started[1]) * 1000, 1)


def _classify(message: Mapping[str, object]) -> tuple[str, str | None, str]:
    raw_method = message.get("method")
    if raw_method is None:
        return "response", None, "warn" if "error" in message else "debug"
    method = raw_method if isinstance(raw_method, str) else str(raw_method)
    if "id" in message:
        return "request", method, "debug"
    params = message.get("params")
    update = params.get("update") if isinstance(params, dict) else None
    kind = update.get("sessionUpdate") if isinstance(update, dict) else None
    streaming = isinstance(kind, str) and kind in STREAMING_UPDATES
    return "notification", method, "trace" if streaming else "debug"


def _key(msg_id: object) -> int | str:
    return msg_id if isinstance(msg_id, (int, str)) else repr(msg_id)


def _checked(level: str) -> str:
    if level not in LEVEL_RANK:
        raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
    return level
