"""A terminal's retained output: the newest bytes up to a limit, cut at a character boundary."""

from __future__ import annotations

import re

ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
"""CSI, OSC and two-byte escape sequences (stripped from the chat's preview, not from the agent's output)."""


TAIL_BYTES = 64 * 1024


class OutputRing:
    """Keeps at most ``limit`` bytes of output, dropping the oldest; remembers that it dropped."""

    def __init__(self, limit: int) -> None:
        self.limit = max(0, limit)
        self._data = bytearray()
        self.truncated = False
        self.total = 0
        """Every byte ever written (the agent sees at most ``limit`` of them)."""
        self._kept: list[str] | None = None
        """After :meth:`release`: the last lines the chat's preview shows (the bytes are gone)."""

    def write(self, data: bytes) -> None:
        """Append output; the front is dropped when the limit is passed."""
        if self._kept is not None:
            return
        self.total += len(data)
        self._data += data
        excess = len(self._data) - self.limit
        if excess > 0:
            del self._data[:excess]
            self.truncated = True

    def text(self) -> str:
        """The retained output as text, starting at a character boundary (never half a character)."""
        data = bytes(self._data)
        if self.truncated:
            data = _from_character_start(data)
        text = data.decode("utf-8", "replace").replace("\r\n", "\n")
        while len(text.encode("utf-8")) > self.limit:  # replacement characters outgrew the bytes
            text = text[max(1, (len(text.encode("utf-8")) - self.limit) // 3):]
            self.truncated = True
        return text

    def release(self, lines: int) -> None:
        """The terminal was released: keep only its last ``lines`` lines (for the chat), drop the
        bytes (up to ``limit`` each, for every terminal of a long session), ignore what comes later."""
        self._kept = self.tail_lines(lines)
        self._data = bytearray()

    @property
    def size(self) -> int:
        """Bytes retained now."""
        return len(self._data)

    def tail_lines(self, count: int) -> list[str]:
        """The last ``count`` lines, escape sequences removed (the chat's preview, redrawn often:
        only the last ``TAIL_BYTES`` are decoded, however large the ring)."""
        if self._kept is not None:
            return self._kept[-count:] if count else []
        data = _from_character_start(bytes(self._data[-TAIL_BYTES:]))
        text = ANSI.sub("", data.decode("utf-8", "replace")).replace("\r", "")
        lines = text.rstrip("\n").split("\n") if text.strip() else []
        return lines[-count:] if count else []


def _from_character_start(data: bytes) -> bytes:
    """Drop UTF-8 continuation bytes at the front (at most 3: a longer run is not UTF-8 anyway)."""
    skip = 0
    while skip < min(3, len(data)) and data[skip] & 0xC0 == 0x80:
        skip += 1
    return data[skip:]
