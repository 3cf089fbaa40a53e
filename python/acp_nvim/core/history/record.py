"""One session's record: what ``:Ai resume`` lists and what the chat shows as history."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import cast

from pydantic import BaseModel, ConfigDict, Field

try:
    import orjson
except ImportError:  # optional speed-up (pip install orjson)
    orjson = None  # type: ignore[assignment]

FORMAT = 2
"""JSON Lines: a header line, then one ``[kind, text]`` or ``[kind, text, message id]`` line per entry,
oldest first (format 1, one JSON object holding ``[kind, text]`` entries, is still read)."""
ENTRY_KINDS = ("heading", "user", "agent", "thought", "tool", "plan", "notice", "info", "error", "turn_end",
               "agent_notice", "compaction")
"""Transcript block kinds a record keeps (every kind the chat draws)."""
KIND_SET = frozenset(ENTRY_KINDS)


class HistorySettings(BaseModel):
    """``history = { max_sessions, max_bytes }`` of setup(); ``history = false`` turns it off."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(default=True, json_schema_extra={"internal": True})
    """False when setup() says ``history = false``."""
    max_sessions: int = Field(default=200, ge=1, description=(
        "Records kept per working directory (every agent together); the oldest go first."))
    max_bytes: int = Field(default=2 * 1024 * 1024, ge=1024, json_schema_extra={"unit": "bytes"}, description=(
        "One record's size on disk; the oldest turns of a longer session are dropped."))


@dataclass(slots=True)
class Entry:
    """One transcript block: its kind, its whole text, and the agent's id of its message (if any)."""

    kind: str
    text: str
    message_id: str | None = None

    def to_list(self) -> list[str]:
        """``[kind, text]``, or ``[kind, text, message id]``."""
        return [self.kind, self.text] if self.message_id is None else [self.kind, self.text, self.message_id]


@dataclass(slots=True)
class SessionRecord:
    """A past session as kept on disk."""

    agent: str
    cwd: str
    session_id: str
    created: float
    updated: float
    title: str = ""
    first_prompt: str = ""
    entries: list[Entry] = field(default_factory=list)
    dropped: int = 0
    """Entries cut from the start to keep the record under ``max_bytes``."""
    older: int = 0
    """Entries the file holds before these (a record read from its newest entries only)."""

    def _header(self, count: int) -> str:
        return json.dumps({
            "format": FORMAT, "agent": self.agent, "cwd": self.cwd, "session_id": self.session_id,
            "created": self.created, "updated": self.updated, "title": self.title,
            "first_prompt": self.first_prompt, "dropped": self.dropped, "count": count,
        }, ensure_ascii=False)

    def to_json(self, max_bytes: int | None = None) -> str:
        """The record as JSON Lines; with ``max_bytes``, its oldest entries dropped (and counted in
        ``dropped``) until it fits (the header always stays)."""
        lines = [json.dumps(e.to_list(), ensure_ascii=False) for e in self.entries]
        if max_bytes is not None:
            size = len(self._header(len(lines)).encode()) + sum(len(line.encode()) + 1 for line in lines)
            cut = 0
            while cut < len(lines) and size > max_bytes:
                size -= len(lines[cut].encode()) + 1
                cut += 1
            if cut:
                del self.entries[:cut], lines[:cut]
                self.dropped += cut
        return "\n".join([self._header(len(lines)), *lines]) + "\n"

    def fit(self, max_bytes: int) -> None:
        """Drop the oldest entries until the record fits ``max_bytes`` (the header always stays)."""
        self.to_json(max_bytes)

    @classmethod
    def from_json(cls, text: str | bytes) -> SessionRecord:
        """Parse a record (its text, or its UTF-8 bytes: a long one parses in a fraction of the time
        without the decoding); ValueError (with the reason) for anything that is not one."""
        raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
        head, _, body = raw.partition(b"\n")
        data = _loads(head)
        if not isinstance(data, dict) or data.get("format") not in (1, FORMAT):
            raise ValueError("not a session record of this version")
        if data["format"] == 1:  # one object, its entries inside
            entries = data.get("entries")
            if not isinstance(entries, list) or body.strip():
                raise ValueError("entries is not a list")
            return cls.from_header(data, _entries(entries, ids=False))
        return cls.from_header(data, _entries([_loads(line) for line in body.splitlines() if line.strip()]))

    @classmethod
    def from_header(cls, data: dict[str, object], entries: list[Entry], older: int = 0) -> SessionRecord:
        """A record of header ``data`` (a format 2 header line, or a format 1 object) with ``entries``."""
        return cls(
            agent=_str(data, "agent"), cwd=_str(data, "cwd"), session_id=_str(data, "session_id"),
            created=_num(data, "created"), updated=_num(data, "updated"), title=_str(data, "title"),
            first_prompt=_str(data, "first_prompt"), dropped=int(_num(data, "dropped")),
            entries=entries, older=older)

    @classmethod
    def newest_of(cls, head: bytes, tail_lines: list[bytes]) -> SessionRecord:
        """A format 2 record from its header line and its last entry lines (``older`` counts the rest)."""
        data = _loads(head)
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError("not a session record of this version")
        entries = _entries([_loads(line) for line in tail_lines if line.strip()])
        count = int(_num(data, "count"))
        if count < len(entries):
            raise ValueError("the header counts fewer entries than the file holds")
        return cls.from_header(data, entries, count - len(entries))


def _loads(text: str | bytes) -> object:
    """JSON, with orjson when installed (a 50 MB record in a third of the time); what orjson refuses
    (a lone surrogate) is read by ``json``."""
    if orjson is not None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)


def _entries(items: list[object], ids: bool = True) -> list[Entry]:
    """Every ``[kind, text]`` or (``ids``: format 2) ``[kind, text, message id]`` item as an entry, checked
    at C speed where it can be (40,000 entries of a long session in milliseconds); ValueError names the
    first one that is not."""
    try:
        entries = [Entry(*cast(list[str], item)) for item in items] \
            if all(type(item) is list for item in items) else []
    except TypeError:  # too few or too many parts
        entries = []
    if len(entries) != len(items) or not all(
            type(e.kind) is str and type(e.text) is str and (e.message_id is None or type(e.message_id) is str)
            for e in entries):
        return [_entry(item, ids) for item in items]  # the slow way names what is wrong
    if not {e.kind for e in entries} <= KIND_SET or (not ids and any(e.message_id is not None for e in entries)):
        return [_entry(item, ids) for item in items]
    return entries


def _str(data: dict[str, object], key: str) -> str:
    value = data.get(key, "")
    if not isinstance(value, str):
        raise ValueError(f"{key} is not a string")
    return value


def _num(data: dict[str, object], key: str) -> float:
    value = data.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{key} is not a number")
    return float(value)


def _entry(item: object, ids: bool = True) -> Entry:
    if (not isinstance(item, list) or len(item) not in ((2, 3) if ids else (2,))
            or not all(isinstance(part, str) for part in cast(list[object], item))):
        raise ValueError("an entry is not [kind, text] or [kind, text, message id]" if ids
                         else "an entry is not [kind, text]")
    kind, text, *message_id = cast(list[str], item)
    if kind not in ENTRY_KINDS:
        raise ValueError(f"unknown entry kind {kind!r}")
    return Entry(kind, text, message_id[0] if message_id else None)
