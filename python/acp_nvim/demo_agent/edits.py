"""Deterministic text transforms used by the demo agent's edit scenarios.

The marks the demo writes are comments in the file's language (chosen by its extension), so an
edited ``hello.py`` still runs; a file of unknown type gets the plain words.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath

EDIT_WORDS = "edited by demo"
ADDED_WORDS = "added by the demo agent"
CREATED_WORDS = "created by the demo agent"

_HASH = ("py", "pyi", "sh", "bash", "zsh", "fish", "rb", "pl", "r", "toml", "yaml", "yml", "cfg", "conf", "ini",
         "mk", "cmake", "nix", "ex", "exs", "jl", "tf", "ps1")
_DASHES = ("lua", "sql", "hs", "elm", "ada", "vhd")
_SLASHES = ("js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "go",
            "rs", "java", "kt", "kts", "scala", "swift", "cs", "dart", "zig", "php", "groovy", "proto", "v", "sv")
COMMENT_LEADERS: dict[str, str] = {
    **dict.fromkeys(_HASH, "#"),
    **dict.fromkeys(_DASHES, "--"),
    **dict.fromkeys(_SLASHES, "//"),
    "vim": '"',
    "el": ";",
    "lisp": ";",
    "clj": ";",
    "scm": ";",
    "tex": "%",
    "erl": "%",
    "m": "%",
}
"""Line-comment syntax by file extension (lower case, without the dot)."""
MAKEFILE_NAMES = {"makefile", "gnumakefile", "dockerfile", "justfile"}


def comment_leader(path: str) -> str | None:
    """The line-comment syntax of ``path``'s language, or None for a type the demo does not know."""
    name = PurePath(path).name.lower()
    if name in MAKEFILE_NAMES:
        return "#"
    return COMMENT_LEADERS.get(PurePath(name).suffix.lstrip("."))


def edit_mark(path: str) -> str:
    """What the demo appends to line 1 of ``path``: a trailing comment, or the plain words."""
    leader = comment_leader(path)
    return f" {leader} {EDIT_WORDS}" if leader else f" {EDIT_WORDS}"


def added_line(path: str) -> str:
    """The line the demo appends at the end of ``path``."""
    leader = comment_leader(path)
    return f"{leader} {ADDED_WORDS}" if leader else ADDED_WORDS


def new_file_text(path: str) -> str:
    """The text of a file the demo creates at ``path``."""
    leader = comment_leader(path)
    return (f"{leader} {CREATED_WORDS}" if leader else CREATED_WORDS) + "\n"


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


def snippet_edit(text: str, path: str) -> str:
    """Return ``text`` with only line 1 changed (what ``edit-snippet`` applies)."""
    parts = split_text(text)
    lines = [parts.lines[0] + edit_mark(path), *parts.lines[1:]]
    return SplitText(lines, parts.newline, parts.trailing).join()


def demo_edit(text: str, path: str) -> str:
    """Return the demo transform: mark line 1 and append a new last line.

    For files with more than a handful of lines this yields two separate hunks.
    """
    parts = split_text(text)
    lines = [parts.lines[0] + edit_mark(path), *parts.lines[1:], added_line(path)]
    return SplitText(lines, parts.newline, parts.trailing).join()
