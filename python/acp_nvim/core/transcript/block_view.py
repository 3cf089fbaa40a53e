"""Bounded views of transcript blocks: what the chat shows of a block that may be huge.

The transcript keeps every block's full text; the chat shows at most ``max_lines`` lines
per block, and breaks lines longer than ``max_line_chars`` (a 10 MB single-line chunk
must not become one 10 MB buffer line). What is cut is counted so the chat can say
"… N more lines" and offer the full text.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_LINE_CHARS = 1000
MARKER_STEP = 64 * 1024
"""While a clipped block keeps streaming, refresh its marker every this many hidden chars."""


@dataclass(frozen=True, slots=True)
class ViewLimits:
    """How much of one block the chat shows."""

    max_lines: int = DEFAULT_MAX_LINES
    max_line_chars: int = DEFAULT_MAX_LINE_CHARS


class StreamView:
    """Incremental projection of a streamed block: feed text, get the part to append."""

    __slots__ = ("_ends_newline", "_next_mark", "_starts_newline", "hidden_chars", "hidden_lines", "limits",
                 "line_len", "lines")

    def __init__(self, limits: ViewLimits) -> None:
        self.limits = limits
        self.lines = 1
        self.line_len = 0
        self.hidden_chars = 0
        self.hidden_lines = 0
        self._next_mark = 0
        self._starts_newline = False
        self._ends_newline = False

    @property
    def clipped(self) -> bool:
        return self.hidden_chars > 0

    def feed(self, text: str) -> str:
        """The part of ``text`` the chat should append ('' once the block is clipped)."""
        if self.hidden_chars:
            self._hide(text)
            return ""
        if "\n" not in text and self.line_len + len(text) <= self.limits.max_line_chars:
            self.line_len += len(text)  # the streaming fast path
            return text
        return self._feed_slow(text)

    def _feed_slow(self, text: str) -> str:
        out: list[str] = []
        pos, size, width = 0, len(text), self.limits.max_line_chars
        while pos < size:
            newline = text.find("\n", pos)
            end = size if newline < 0 else newline
            room = width - self.line_len
            if end - pos > room:  # break the over-long line
                out.append(text[pos : pos + room])
                pos += room
                if not self._new_line(out):
                    break
                continue
            out.append(text[pos:end])
            self.line_len += end - pos
            pos = end
            if newline >= 0:
                if not self._new_line(out):
                    break
                pos += 1
        if pos < size:
            self._hide(text[pos:])
        return "".join(out)

    def _new_line(self, out: list[str]) -> bool:
        if self.lines >= self.limits.max_lines:
            return False
        out.append("\n")
        self.lines += 1
        self.line_len = 0
        return True

    def _hide(self, text: str) -> None:
        if not text:
            return
        if not self.hidden_chars:
            self._starts_newline = text[0] == "\n"
        self.hidden_chars += len(text)
        self.hidden_lines += text.count("\n")
        self._ends_newline = text[-1] == "\n"

    def marker_due(self) -> bool:
        """Whether the "… more" marker should be (re)drawn now (first clip, then every step)."""
        if self.hidden_chars < self._next_mark or not self.hidden_chars:
            return False
        self._next_mark = self.hidden_chars + MARKER_STEP
        return True

    def marker(self) -> str:
        lines = self.hidden_lines + (not self._starts_newline) - self._ends_newline
        return marker_text(max(1, lines), self.hidden_chars)


def project(text: str, limits: ViewLimits) -> tuple[list[str], str | None]:
    """The lines shown for ``text`` and the marker for what is cut (None when nothing is)."""
    view = StreamView(limits)
    shown = view.feed(text)
    return shown.split("\n"), (view.marker() if view.clipped else None)


def clip_lines(lines: list[str], limits: ViewLimits) -> list[str]:
    """Cap a rendered block (tool call, plan): long lines cut, the excess replaced by a marker line."""
    width = limits.max_line_chars
    shown = [line if len(line) <= width else line[:width] + "…" for line in lines[: limits.max_lines]]
    if len(lines) > limits.max_lines:
        hidden = lines[limits.max_lines :]
        shown.append(marker_text(len(hidden), sum(len(line) + 1 for line in hidden)))
    return shown


def marker_text(lines: int, chars: int) -> str:
    """'… 12,345 more lines (1.2 MB)' for a cut of ``lines`` lines and ``chars`` characters."""
    noun = "line" if lines == 1 else "lines"
    return f"… {lines:,} more {noun} ({human_size(chars)})"


def human_size(chars: int) -> str:
    for unit, size in (("MB", 1 << 20), ("kB", 1 << 10)):
        if chars >= size:
            return f"{chars / size:.1f} {unit}"
    return f"{chars} chars"
