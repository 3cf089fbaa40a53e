"""One session's knowledge of its files, shared by the fs methods and the reconciler.

What the agent last read of each file (and the buffer's changedtick at that moment), the
disk content each buffer is known to agree with, which files have a three-way view open,
and one lock per file that serialises writes and reconciles. ``FileService`` and
``Reconciler`` both keep their file state here and never look at each other.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import dataclass

Fingerprint = tuple[int, int]


@dataclass(frozen=True, slots=True)
class ReadRecord:
    """What the agent last read of a file: the buffer's changedtick (None: from disk) and the text."""

    tick: int | None
    text: str


class FileLedger:
    """Per-file state of one session, keyed by resolved path."""

    def __init__(self) -> None:
        self._reads: dict[str, ReadRecord] = {}
        self._known: dict[str, Fingerprint] = {}
        self._views: set[str] = set()
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)

    def lock(self, path: str) -> asyncio.Lock:
        """Serialises writes and reconciles of one file."""
        return self._locks[path]

    # -- what the agent read ---------------------------------------------------------

    def last_read(self, path: str) -> ReadRecord | None:
        return self._reads.get(path)

    def note_read(self, path: str, tick: int | None, text: str) -> None:
        """The agent read (or wrote) ``text``; ``tick`` is the buffer's changedtick (None: the disk)."""
        self._reads[path] = ReadRecord(tick, text)

    def forget_read(self, path: str) -> None:
        """The buffer holds text the agent has not read (its next write must not go through unseen)."""
        self._reads.pop(path, None)

    # -- what the disk holds ---------------------------------------------------------

    def agrees_with_disk(self, path: str, fingerprint: Fingerprint) -> bool:
        """Whether the buffer is known to hold the disk content with this fingerprint."""
        return self._known.get(path) == fingerprint

    def note_disk(self, path: str, fingerprint: Fingerprint) -> None:
        """The buffer and the disk agree on the content with this fingerprint."""
        self._known[path] = fingerprint

    # -- three-way views ---------------------------------------------------------------

    def view_open(self, path: str) -> bool:
        """Whether a three-way view for ``path`` waits for the user."""
        return path in self._views

    def open_view(self, path: str) -> None:
        self._views.add(path)

    def close_view(self, path: str) -> None:
        self._views.discard(path)
