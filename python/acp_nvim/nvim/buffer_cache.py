"""Copies of buffers' lines kept up to date by deltas (acp_nvim.buffers.read_delta).

Reading a 100,000-line buffer line by line costs Neovim tens of milliseconds; an agent
reads the same file again and again while the user changes a few lines. Neovim tracks
which lines changed since the last read (``nvim_buf_attach``), so only those travel.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.port import BufferState

BOM = "\ufeff"


@dataclass(slots=True)
class _Copy:
    tracker: int
    version: int
    lines: list[str]


class BufferCache:
    """The last lines seen of each buffer, by path."""

    def __init__(self) -> None:
        self._copies: dict[str, _Copy] = {}

    def since(self, path: str) -> tuple[int | None, int | None]:
        """(tracker, version) to send with the next read_delta of ``path``."""
        copy = self._copies.get(path)
        return (copy.tracker, copy.version) if copy else (None, None)

    def apply(self, path: str, raw: dict[str, Any] | None) -> BufferState | None:
        """Fold a read_delta answer into the copy; the buffer's state, or None (not loaded or
        the delta does not fit the copy: the caller asks again for every line)."""
        if raw is None:
            self._copies.pop(path, None)
            return None
        lines = self._merged(path, raw)
        if len(lines) != raw["count"]:
            self._copies.pop(path, None)
            return None
        self._copies[path] = _Copy(raw["tracker"], raw["version"], lines)
        return BufferState(path, _text(lines, raw), int(raw["tick"]), bool(raw["modified"]))

    def forget(self, path: str) -> None:
        self._copies.pop(path, None)

    def _merged(self, path: str, raw: dict[str, Any]) -> list[str]:
        first, tail, middle = raw["first"], raw["tail"], raw["lines"]
        copy = self._copies.get(path)
        if first == 0 and tail == 0:
            return middle
        if copy is None or copy.tracker != raw["tracker"] or len(copy.lines) < first + tail:
            return []
        copy.lines[first : len(copy.lines) - tail] = middle  # in place: no copy of 100k references
        return copy.lines


def _text(lines: list[str], raw: dict[str, Any]) -> str:
    prefix = BOM if raw["bom"] else ""
    if raw["empty"]:
        return prefix
    newline = raw["newline"]
    return prefix + newline.join(lines) + (newline if raw["eol"] else "")
