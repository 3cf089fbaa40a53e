"""The pure part of worktrees: names, where they live, and what git prints about them.

Nothing here runs git (``git.py`` does): each function takes git's output or a path and
answers, so it is checked without a process.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import AcpNvimError

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
"""A worktree's name: a folder name and, after the prefix, a branch name git takes as it is."""
GIT_FOLDER = ".git"


class WorktreeError(AcpNvimError):
    """A worktree could not be made, found, merged or removed; the message says why."""


@dataclass(frozen=True, slots=True)
class Listed:
    """One entry of ``git worktree list --porcelain``."""

    path: str
    head: str
    branch: str
    """The branch without ``refs/heads/`` ('' when detached)."""


@dataclass(frozen=True, slots=True)
class Status:
    """One entry of ``git status --porcelain=v1 -z``: its two-letter code and path."""

    code: str
    path: str

    @property
    def untracked(self) -> bool:
        return self.code == "??"


def check_name(name: str) -> str:
    """``name`` if it can name a worktree folder and a branch; a clear error otherwise."""
    if not NAME.fullmatch(name) or ".." in name or name.endswith((".lock", ".")):
        raise WorktreeError(f"{name!r} cannot name a worktree: use letters, digits, '.', '_' and '-' "
                            "(at most 64, starting with a letter or digit)")
    return name


def default_name(agent: str, taken: Iterable[str]) -> str:
    """``<agent>-<n>`` with the first n no worktree folder or branch has."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", agent).strip("-.") or "agent"
    used = set(taken)
    number = 1
    while f"{stem}-{number}" in used:
        number += 1
    return check_name(f"{stem}-{number}"[:64])


def folder(setting: str, top: str, common: str) -> str:
    """The folder of the worktrees: ``.git/…`` inside the common git folder (also from a linked
    worktree, where ``.git`` is a file), ``~`` expanded, other relative paths from ``top``."""
    parts = setting.replace("\\", "/").split("/")
    if parts[0] == GIT_FOLDER:
        return os.path.normpath(os.path.join(common, *parts[1:]))
    return os.path.normpath(os.path.join(top, os.path.expanduser(setting)))


def parse_list(text: str) -> list[Listed]:
    """The entries of ``git worktree list --porcelain`` (blank-line separated stanzas)."""
    found = []
    for stanza in text.split("\n\n"):
        fields = dict(_field(line) for line in stanza.splitlines() if line)
        if "worktree" in fields:
            branch = fields.get("branch", "").removeprefix("refs/heads/")
            found.append(Listed(fields["worktree"], fields.get("HEAD", ""), branch))
    return found


def _field(line: str) -> tuple[str, str]:
    key, _, value = line.partition(" ")
    return key, value


def parse_status(raw: bytes) -> list[Status]:
    """The entries of ``git status --porcelain=v1 -z`` (a rename's second, old path is skipped)."""
    items = raw.decode("utf-8", "surrogateescape").split("\0")
    found, skip = [], False
    for item in items:
        if skip:
            skip = False
            continue
        if len(item) < 4:
            continue
        code, path = item[:2], item[3:]
        found.append(Status(code, path))
        skip = "R" in code or "C" in code
    return found


def parse_name_status(raw: bytes) -> list[tuple[str, str]]:
    """(letter, path) of ``git diff --name-status --no-renames -z``: A, M, D, T."""
    items = [part.decode("utf-8", "surrogateescape") for part in raw.split(b"\0") if part]
    return [(items[i][:1], items[i + 1]) for i in range(0, len(items) - 1, 2)]


def summary(entries: list[Status], limit: int = 8) -> str:
    """``M a.py, ?? notes.txt, … (12 in all)``: what a removal would lose, in a line."""
    shown = ", ".join(f"{e.code.strip()} {e.path}" for e in entries[:limit])
    return shown + (f", … ({len(entries)} in all)" if len(entries) > limit else "")
