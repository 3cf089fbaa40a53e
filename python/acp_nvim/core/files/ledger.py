"""One session's knowledge of its files, shared by the fs methods and the reconciler.

What the agent last read of each file (the buffer's changedtick at that moment, and the text
while it fits a byte budget), the disk content each buffer is known to agree with, which files
have a three-way view open, and one lock per file that serialises writes and reconciles.
``FileService`` and ``Reconciler`` both keep their file state here and never look at each
other. Everything is bounded: least recently used entries go first.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import TypeVar

V = TypeVar("V")
Fingerprint = tuple[int, int]

MAX_FILES = 4096
"""Files whose read tick and disk fingerprint are remembered."""
MAX_TEXT_CHARS = 8 * 1024 * 1024
"""Characters of read texts kept (the base of a three-way view; a forgotten one is read from disk)."""


def fingerprint(text: str | None) -> Fingerprint:
    """A cheap fingerprint of a file's content (None: missing) to skip work already done."""
    return (-1, 0) if text is None else (len(text), hash(text))


@dataclass(frozen=True, slots=True)
class ReadRecord:
    """What the agent last read of a file: the buffer's changedtick (None: from disk) and the
    text (None once it no longer fits the budget)."""

    tick: int | None
    text: str | None


class FileLedger:
    """Per-file state of one session, keyed by resolved path."""

    def __init__(self, max_files: int = MAX_FILES, max_text_chars: int = MAX_TEXT_CHARS) -> None:
        self._ticks: OrderedDict[str, int | None] = OrderedDict()
        self._texts: OrderedDict[str, str] = OrderedDict()
        self._text_chars = 0
        self._known: OrderedDict[str, Fingerprint] = OrderedDict()
        self._views: set[str] = set()
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self._max_files = max_files
        self._max_text_chars = max_text_chars

    def lock(self, path: str) -> asyncio.Lock:
        """Serialises writes and reconciles of one file (kept while anyone holds or awaits it)."""
        lock = self._locks.get(path)
        if lock is None:
            lock = self._locks[path] = asyncio.Lock()
        return lock

    # -- what the agent read ---------------------------------------------------------

    def last_read(self, path: str) -> ReadRecord | None:
        if path not in self._ticks:
            return None
        return ReadRecord(self._ticks[path], self._texts.get(path))

    def note_read(self, path: str, tick: int | None, text: str) -> None:
        """The agent read (or wrote) ``text``; ``tick`` is the buffer's changedtick (None: the disk)."""
        _put(self._ticks, path, tick, self._max_files)
        self._drop_text(path)
        if len(text) <= self._max_text_chars:
            self._texts[path] = text
            self._text_chars += len(text)
            while self._text_chars > self._max_text_chars:
                self._drop_text(next(iter(self._texts)))

    def forget_read(self, path: str) -> None:
        """The buffer holds text the agent has not read (its next write must not go through unseen)."""
        self._ticks.pop(path, None)
        self._drop_text(path)

    def _drop_text(self, path: str) -> None:
        text = self._texts.pop(path, None)
        if text is not None:
            self._text_chars -= len(text)

    @property
    def sizes(self) -> tuple[int, int, int]:
        """(files with a read record, read texts kept, their characters): for tests and figures."""
        return len(self._ticks), len(self._texts), self._text_chars

    # -- what the disk holds ---------------------------------------------------------

    def agrees_with_disk(self, path: str, fingerprint: Fingerprint) -> bool:
        """Whether the buffer is known to hold the disk content with this fingerprint."""
        return self._known.get(path) == fingerprint

    def note_disk(self, path: str, fingerprint: Fingerprint) -> None:
        """The buffer and the disk agree on the content with this fingerprint."""
        _put(self._known, path, fingerprint, self._max_files)

    # -- three-way views ---------------------------------------------------------------

    def view_open(self, path: str) -> bool:
        """Whether a three-way view for ``path`` waits for the user."""
        return path in self._views

    def open_view(self, path: str) -> None:
        self._views.add(path)

    def close_view(self, path: str) -> None:
        self._views.discard(path)


def _put(table: OrderedDict[str, V], key: str, value: V, limit: int) -> None:
    table[key] = value
    table.move_to_end(key)
    while len(table) > limit:
        table.popitem(last=False)
