"""Deterministic text transforms used by the demo agent's edit scenarios."""

from __future__ import annotations

from dataclasses import dataclass

EDIT_MARK = " // edited by demo"
ADDED_LINE = "added by the demo agent"
NEW_FILE_TEXT = "created by the demo agent\n"


@dataclass(frozen=True)
class SplitText:
    """A text split into lines, remembering its newline style and trailing newline."""

    lines: list[str]
    newline: str
    trailing: bool

    def join(self) -> str:
        """Reassemble the text with the original newline style."""
        body = self.newline.join(self.lines)
        return body + self.newline if self.trailing else body


def split_text(text: str) -> SplitText:
    """Split ``text`` into lines without losing CRLF or the final newline."""
    newline = "\r\n" if "\r\n" in text else "\n"
    trailing = text.endswith(newline)
    body = text[: -len(newline)] if trailing else text
    return SplitText(body.split(newline), newline, trailing)


def first_line(text: str) -> str:
    """Return line 1 of ``text`` without its line terminator."""
    return split_text(text).lines[0]


def snippet_edit(text: str) -> str:
    """Return ``text`` with only line 1 changed (what ``edit-snippet`` applies)."""
    parts = split_text(text)
    lines = [parts.lines[0] + EDIT_MARK, *parts.lines[1:]]
    return SplitText(lines, parts.newline, parts.trailing).join()


def demo_edit(text: str) -> str:
    """Return the demo transform: mark line 1 and append a new last line.

    For files with more than a handful of lines this yields two separate hunks.
    """
    parts = split_text(text)
    lines = [parts.lines[0] + EDIT_MARK, *parts.lines[1:], ADDED_LINE]
    return SplitText(lines, parts.newline, parts.trailing).join()
