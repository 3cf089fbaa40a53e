"""Copies of buffers' lines kept up to date by deltas (acp_nvim.host.buffers.read_delta).

Reading a 100,000-line buffer line by line costs Neovim tens of milliseconds; an agent
reads the same file again and again while the user changes a few lines. Neovim tracks
which lines changed since the last read (``nvim_buf_attach``), so only those travel.

The text of a copy is joined once per changedtick: while neither the buffer's lines nor its
changedtick moved, a read hands out the same string (``nvim/files/editor.py`` asks Neovim with one
``nvim_buf_get_lines`` of the changed lines, none at all then; the wire keeps that string's JSON).

The copies are bounded: the least recently read go first once there are more than
``MAX_COPIES`` or their lines hold more than ``MAX_CHARS`` characters, and the copy of a
buffer that was wiped or unloaded is dropped (``forget_trackers``). A dropped copy costs
only one full read the next time.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from ...core.port import BufferState, FileId, Stamp

BOM = "\ufeff"
MAX_COPIES = 32
MAX_CHARS = 64 * 1024 * 1024


@dataclass(slots=True)
class _Copy:
    tracker: int
    version: int
    lines: list[str]
    chars: int
    text: str | None = None
    """The lines joined as the buffer would be written, for ``text_key``."""
    text_key: tuple[object, ...] = ()
    """(changedtick, newline, eol, bom, empty) of ``text``."""


class BufferCache:
    """The last lines seen of each buffer, by path (least recently read first)."""

    def __init__(self, max_copies: int = MAX_COPIES, max_chars: int = MAX_CHARS) -> None:
        self._copies: OrderedDict[str, _Copy] = OrderedDict()
        self._chars = 0
        self._max_copies = max_copies
        self._max_chars = max_chars

    def since(self, path: str) -> tuple[int | None, int | None]:
        """(tracker, version) to send with the next read_delta of ``path``."""
        copy = self._copies.get(path)
        return (copy.tracker, copy.version) if copy else (None, None)

    def apply(self, path: str, raw: dict[str, Any] | None) -> BufferState | None:
        """Fold a read_delta answer into the copy; the buffer's state, or None (not loaded or
        the delta does not fit the copy: the caller asks again for every line)."""
        if raw is None:
            self.forget(path)
            return None
        merged = self._merged(path, raw)
        if merged is None or len(merged.lines) != raw["count"]:
            self.forget(path)
            return None
        key = (int(raw["tick"]), raw["newline"], bool(raw["eol"]), bool(raw["bom"]), bool(raw["empty"]))
        if merged.text is None or merged.text_key != key:
            grown = -len(merged.text or "")
            merged.text, merged.text_key = _text(merged.lines, raw), key
            grown += len(merged.text)
            merged.chars += grown
            if self._copies.get(path) is merged:  # kept already: counted in place (else _keep counts it)
                self._chars += grown
        self._keep(path, merged)
        return BufferState(path, merged.text, int(raw["tick"]), bool(raw["modified"]),
                           stamp_from(raw.get("disk")), source_from(raw.get("source")))

    def forget(self, path: str) -> None:
        copy = self._copies.pop(path, None)
        if copy is not None:
            self._chars -= copy.chars

    def forget_trackers(self, trackers: list[int]) -> None:
        """Drop the copies of buffers that were wiped or unloaded (by their tracker ids)."""
        gone = set(trackers)
        for path in [p for p, copy in self._copies.items() if copy.tracker in gone]:
            self.forget(path)

    @property
    def sizes(self) -> tuple[int, int]:
        """(copies, characters held): for tests and figures."""
        return len(self._copies), self._chars

    def _keep(self, path: str, copy: _Copy) -> None:
        old = self._copies.pop(path, None)
        if old is not copy:  # a delta already counted its characters in place
            self._chars += copy.chars - (old.chars if old is not None else 0)
        self._copies[path] = copy
        while self._copies and (len(self._copies) > self._max_copies or self._chars > self._max_chars):
            self.forget(next(iter(self._copies)))

    def _merged(self, path: str, raw: dict[str, Any]) -> _Copy | None:
        first, tail, middle = raw["first"], raw["tail"], raw["lines"]
        tracker, version = raw["tracker"], raw["version"]
        copy = self._copies.get(path)
        if first == 0 and tail == 0:
            return _Copy(tracker, version, middle, _chars(middle))
        if copy is None or copy.tracker != tracker or len(copy.lines) < first + tail:
            return None
        end = len(copy.lines) - tail
        if middle or end != first:  # lines changed: the joined text is stale whatever the tick says
            grown = _chars(middle) - _chars(copy.lines[first:end]) - len(copy.text or "")
            copy.chars += grown
            self._chars += grown
            copy.lines[first:end] = middle  # in place: no copy of 100k references
            copy.text, copy.text_key = None, ()
        copy.version = version
        return copy


def stamp_from(raw: object) -> Stamp | None:
    """A disk stamp sent by Lua ({ inode, size, mtime s, mtime ns }), or None."""
    if not isinstance(raw, list | tuple) or len(raw) != 4:
        return None
    ino, size, sec, nsec = (int(x) for x in raw)
    return (ino, size, sec, nsec)


def source_from(raw: object) -> FileId | None:
    """A buffer's source sent by Lua ({ dev, ino }; { 0, 0 }: a new file), or None (unknown)."""
    if not isinstance(raw, list | tuple) or len(raw) != 2:
        return None
    dev, ino = (int(x) for x in raw)
    return (dev, ino)


def _chars(lines: list[str]) -> int:
    return sum(len(line) for line in lines) + len(lines)


def _text(lines: list[str], raw: dict[str, Any]) -> str:
    prefix = BOM if raw["bom"] else ""
    if raw["empty"]:
        return prefix
    newline = raw["newline"]
    return prefix + newline.join(lines) + (newline if raw["eol"] else "")
