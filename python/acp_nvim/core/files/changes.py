"""The changeset of each turn: every file the agent changed and its content before the turn.

The "before" of a file is fixed by the first change of the turn, from the best source at
hand: the client's own write (the text it replaced), a snapshot taken before the agent
touched the file (a clean buffer, or the disk at turn start or when a tool call named it),
or the ``oldText`` of a whole-file diff.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .opener import Snapshot

MAX_TURNS = 20


@dataclass(slots=True)
class FileChange:
    """One changed file. ``before`` None: the file did not exist (unless ``known`` is False)."""

    path: str
    before: str | None
    known: bool
    after: str | None
    via: str
    """``fs`` (through the client) or ``disk`` (the agent wrote it itself)."""


Listener = Callable[[int, FileChange], None]
"""Told (turn, change) at every change of a file in a turn (the write gate follows disk writers)."""


@dataclass(slots=True)
class ChangeSet:
    """The files changed in one turn, in the order they were first changed."""

    turn: int
    files: dict[str, FileChange] = field(default_factory=dict)
    baselines: dict[str, Snapshot] = field(default_factory=dict)
    listeners: list[Listener] = field(default_factory=list)

    def note_baseline(self, path: str, snap: Snapshot) -> None:
        """Remember ``path`` as it was before any change of this turn (first note wins)."""
        if path not in self.files and path not in self.baselines:
            self.baselines[path] = snap

    def baseline(self, path: str) -> Snapshot | None:
        return self.baselines.get(path)

    def record(self, path: str, after: str | None, via: str, before: Snapshot | None = None) -> None:
        """A change of ``path`` to ``after``; ``before`` is used only for its first change."""
        entry = self.files.get(path)
        if entry is not None:
            if entry.after != after:
                entry.after, entry.via = after, via
                self._tell(entry)
            return
        snap = before or self.baselines.get(path)
        if snap is not None and snap.exists and snap.text is None:
            snap = None
        known = snap is not None
        before_text = snap.text if snap is not None else None
        if known and before_text == after:
            return
        self._tell(self.files.setdefault(path, FileChange(path, before_text, known, after, via)))

    def _tell(self, change: FileChange) -> None:
        for listener in self.listeners:
            listener(self.turn, change)


class ChangeLog:
    """The changesets of the last turns of one session."""

    def __init__(self) -> None:
        self.turns: list[ChangeSet] = []
        self.listeners: list[Listener] = []
        """Shared with every changeset (also those made before a listener was added)."""

    def begin_turn(self) -> ChangeSet:
        number = self.turns[-1].turn + 1 if self.turns else 1
        self.turns = [*self.turns[-(MAX_TURNS - 1) :], ChangeSet(number, listeners=self.listeners)]
        return self.turns[-1]

    @property
    def current(self) -> ChangeSet:
        """The running (or last) turn's changeset; a first one if no turn ran yet."""
        return self.turns[-1] if self.turns else self.begin_turn()

    def latest(self) -> ChangeSet | None:
        """The most recent changeset that changed a file."""
        return next((cs for cs in reversed(self.turns) if cs.files), None)
