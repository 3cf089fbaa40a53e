"""What a checkpoint holds: per file, its content before the turn and after it, by reference.

A ``Ref`` names one state of a file: its content kept in the store (``kept``, with the sha256
of its bytes), or why there is no content to put back: the file did not exist (``absent``),
its content was never seen (``unknown``), or it was larger than ``checkpoints.max_file_bytes``
(``too_large``), or it could not be read (``unreadable``: a hard-linked file, a folder in the
way). A ``Checkpoint`` is one turn: the prompt, when it ran, where the conversation stood, and
its files in the order the turn first touched them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, cast

from .errors import CheckpointCorrupt

FORMAT = 1
KEPT, ABSENT, UNKNOWN, TOO_LARGE, UNREADABLE = "kept", "absent", "unknown", "too_large", "unreadable"
STATES = (KEPT, ABSENT, UNKNOWN, TOO_LARGE, UNREADABLE)
RUNNING, DONE, UNDONE = "running", "done", "undone"


@dataclass(frozen=True, slots=True)
class Ref:
    """One state of a file: ``kept`` (``digest`` names its bytes in the store) or why it is not."""

    state: str
    digest: str = ""
    size: int = 0

    @property
    def kept(self) -> bool:
        return self.state == KEPT

    @property
    def restorable(self) -> bool:
        """A rewind can make the file this again (put the content back, or remove the file)."""
        return self.state in (KEPT, ABSENT)

    def why_not(self) -> str:
        """Why a rewind cannot bring this state back (for a state that is not ``restorable``)."""
        return {UNKNOWN: "its content before the turn is unknown",
                TOO_LARGE: f"it was larger than checkpoints.max_file_bytes ({self.size} bytes): noted, not kept",
                UNREADABLE: "it could not be read when the turn changed it"}.get(self.state, "")

    def to_json(self) -> list[object]:
        return [self.state, self.digest, self.size]

    @staticmethod
    def from_json(value: object) -> Ref:
        if not isinstance(value, list) or len(value) != 3:
            raise CheckpointCorrupt("a file state is not [state, digest, size]")
        state, digest, size = cast(list[object], value)
        if state not in STATES or not isinstance(digest, str) or not isinstance(size, int):
            raise CheckpointCorrupt(f"a file state is malformed: {value!r:.80}")
        if state == KEPT and not _is_digest(digest):
            raise CheckpointCorrupt(f"a kept file state names no content: {digest!r:.80}")
        return Ref(state, digest, size)


ABSENT_REF = Ref(ABSENT)
UNKNOWN_REF = Ref(UNKNOWN)


@dataclass(slots=True)
class FileEntry:
    """One file a turn changed: before it (first touch), after it (the turn's end), and how."""

    path: str
    before: Ref
    after: Ref | None = None
    via: str = "fs"
    """``fs`` (through the editor), ``disk`` (the agent wrote it itself) or ``command`` (a command it ran)."""
    unsaved: bool = False
    """Its buffer had unsaved changes when the turn began."""

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "before": self.before.to_json(),
                "after": self.after.to_json() if self.after else None, "via": self.via, "unsaved": self.unsaved}

    @staticmethod
    def from_json(value: object) -> FileEntry:
        if not isinstance(value, dict):
            raise CheckpointCorrupt("a file entry is not an object")
        data = cast(dict[str, object], value)
        path, via = data.get("path"), data.get("via", "fs")
        if not isinstance(path, str) or not path.startswith("/") or not isinstance(via, str):
            raise CheckpointCorrupt("a file entry has no absolute path")
        after = data.get("after")
        return FileEntry(path, Ref.from_json(data.get("before")), None if after is None else Ref.from_json(after),
                         via, data.get("unsaved") is True)


@dataclass(slots=True)
class Checkpoint:
    """One turn of a session, as a rewind needs it."""

    turn: int
    prompt: str
    started: float
    """Wall-clock time the prompt was sent."""
    first_block: int
    """The transcript block of the turn's prompt (``## You``): the turn's blocks start there."""
    session_id: str | None = None
    """The ACP session the turn ran in."""
    message_id: str | None = None
    """The turn's first ``messageId`` (None: the agent sent none)."""
    last_message_id: str | None = None
    """The last ``messageId`` of the agent's answer: a fork there keeps this turn and those before."""
    files: dict[str, FileEntry] = field(default_factory=dict)
    state: str = RUNNING
    """``running``, ``done``, or ``undone`` (a rewind took it back)."""
    last_block: int = 0
    """The turn's last transcript block (its end), once it ended."""
    name: str = ""
    """Its manifest in the store ('' before it was written)."""
    pending: set[str] = field(default_factory=set)
    """Contents of a scan around a running command, kept until the command ended (the store's
    pruning must not take them meanwhile)."""
    notes: list[str] = field(default_factory=list)
    """What the checkpoint could not see (a scan cut at ``scan_max_files``)."""
    undone_by: int = 0
    """The turn a rewind went back to before, when it took this one back."""
    pruned: bool = False
    """Its manifest was pruned from the store (``checkpoints.max_bytes``): a rewind to it cannot be done."""
    writer: str = ""
    """The recorder that made it (one per session object: a session reopened in another Neovim has another)."""
    continues: dict[str, int] = field(default_factory=dict)
    """The writers whose turns its session took over when it was reopened, each up to that turn
    (``history.py``: how a reopened session finds the turns before the ones it ran)."""

    @property
    def live(self) -> bool:
        return self.state != UNDONE

    def to_json(self, session: str) -> str:
        return json.dumps({
            "format": FORMAT, "session": session, "turn": self.turn, "prompt": self.prompt,
            "started": self.started, "first_block": self.first_block, "last_block": self.last_block,
            "session_id": self.session_id, "message_id": self.message_id, "last_message_id": self.last_message_id,
            "state": self.state, "undone_by": self.undone_by,
            "files": [entry.to_json() for entry in self.files.values()],
            "pending": sorted(self.pending), "notes": self.notes, "writer": self.writer,
            "continues": self.continues,
        }, ensure_ascii=False)

    @staticmethod
    def from_json(text: str, name: str) -> Checkpoint:
        """A stored checkpoint (its manifest ``name``); CheckpointCorrupt when it is not one."""
        refs_of(text)  # the shape of its files and contents
        data = cast(dict[str, Any], json.loads(text))
        try:
            files = [FileEntry.from_json(item) for item in data.get("files") or []]
            checkpoint = Checkpoint(
                int(data["turn"]), str(data["prompt"]), float(data["started"]), int(data["first_block"]),
                _text_or_none(data.get("session_id")), _text_or_none(data.get("message_id")),
                _text_or_none(data.get("last_message_id")), {f.path: f for f in files},
                data["state"] if data.get("state") in (RUNNING, DONE, UNDONE) else DONE,
                int(data.get("last_block") or 0), name, set(data.get("pending") or []),
                [str(n) for n in data.get("notes") or []], int(data.get("undone_by") or 0),
                writer=str(data.get("writer") or ""),
                continues={str(k): int(v) for k, v in dict(data.get("continues") or {}).items()})
        except (KeyError, TypeError, ValueError) as exc:
            raise CheckpointCorrupt(f"checkpoint {name} is malformed: {exc}") from None
        return checkpoint

    def refs(self) -> set[str]:
        """Every content this checkpoint needs from the store."""
        found = {d for e in self.files.values() for r in (e.before, e.after) if r is not None and (d := r.digest)}
        return found | self.pending


def refs_of(text: str) -> set[str]:
    """The contents a stored manifest (a checkpoint or an undo record) needs; CheckpointCorrupt when
    it is not one."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise CheckpointCorrupt(f"not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointCorrupt("not a checkpoint of this version")
    found: set[str] = set()
    for item in cast(list[object], data.get("files") or []):
        entry = FileEntry.from_json(item)
        found |= {r.digest for r in (entry.before, entry.after) if r is not None and r.digest}
    pending = data.get("pending") or []
    if not isinstance(pending, list) or not all(isinstance(p, str) and _is_digest(p) for p in pending):
        raise CheckpointCorrupt("pending is not a list of contents")
    return found | set(cast(list[str], pending))


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _is_digest(text: str) -> bool:
    return len(text) == 64 and all(c in "0123456789abcdef" for c in text)
