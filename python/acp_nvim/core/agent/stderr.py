"""The agent's stderr, read in chunks and cut into bounded lines.

The SDK never reads stderr, and an agent blocks once the pipe is full, so it is drained for the
whole life of the process. A line-based reader ends at the first line over its limit (a ``\\r``
progress bar is one endless "line"); this one reads chunks, keeps at most ``LINE_MAX`` bytes of
each line and counts the bytes it dropped. A carriage return starts the line over, as on a
terminal, so a progress bar leaves its last state.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

CHUNK = 64 * 1024
LINE_MAX = 64 * 1024
"""Bytes of one stderr line that are kept; the rest is counted, not stored."""

Line = tuple[str, int]
"""A line's text and the bytes of it that were dropped (over the limit, or overwritten by ``\\r``)."""


class LineCutter:
    """Turns a byte stream into bounded lines."""

    def __init__(self, limit: int = LINE_MAX) -> None:
        self._limit = limit
        self._parts: list[bytes] = []
        self._size = 0
        self._dropped = 0
        self._return_pending = False
        """The last byte seen was ``\\r``: a line break if ``\\n`` follows, else the line starts over."""

    def feed(self, data: bytes) -> list[Line]:
        """The lines ``data`` completes (the unfinished one waits for more)."""
        pieces = data.split(b"\n")
        lines = []
        for piece in pieces[:-1]:
            self._add(piece)
            lines.append(self._take())
        self._add(pieces[-1])
        return lines

    def flush(self) -> Line | None:
        """The unfinished line at the end of the stream, if any."""
        if not self._parts and not self._dropped:
            return None
        return self._take()

    def _add(self, piece: bytes) -> None:
        if not piece:
            return
        if self._return_pending:
            self._restart()
        self._return_pending = piece.endswith(b"\r")
        body = piece[:-1] if self._return_pending else piece
        cut = body.rfind(b"\r")
        if cut >= 0:
            self._dropped += cut + 1
            self._restart()
            body = body[cut + 1:]
        room = self._limit - self._size
        if len(body) > room:
            self._dropped += len(body) - max(room, 0)
            body = body[:max(room, 0)]
        if body:
            self._parts.append(body)
            self._size += len(body)

    def _restart(self) -> None:
        """A carriage return: what the line held so far is overwritten."""
        self._dropped += self._size
        self._parts, self._size = [], 0

    def _take(self) -> Line:
        line = b"".join(self._parts).decode("utf-8", "replace"), self._dropped
        self._parts, self._size, self._dropped, self._return_pending = [], 0, 0, False
        return line


async def drain(stream: asyncio.StreamReader, on_line: Callable[[str, int], None]) -> None:
    """Read ``stream`` to its end, calling ``on_line(text, dropped_bytes)`` for each line."""
    cutter = LineCutter()
    while chunk := await stream.read(CHUNK):
        for text, dropped in cutter.feed(chunk):
            on_line(text, dropped)
    last = cutter.flush()
    if last is not None:
        on_line(*last)
