"""Workspace confinement: which paths an agent may read or write.

A path is allowed when it is absolute, its lexical form stays inside a root (no ``..``
escape), and its real path (every symlink resolved) is inside a root too. Devices, FIFOs
and sockets are refused, and so are directories (the fs methods read and write files).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from acp import RequestError

REFUSED = -32602
"""JSON-RPC code of a refused path (invalid params): the request named a path it may not use."""


class PathRefused(RequestError):
    """A path outside the workspace roots (or not a regular file); the message says why."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(REFUSED, f"acp.nvim refused {path!r}: {reason}", {"path": path, "reason": reason})
        self.path = path
        self.reason = reason


def file_error(path: str, reason: str, code: int = REFUSED) -> RequestError:
    """A JSON-RPC error whose message names the path and the reason (not a confinement refusal)."""
    return RequestError(code, f"{path}: {reason}", {"path": path, "reason": reason})


class PathPolicy:
    """Allows absolute paths that resolve (symlinks included) inside one of the roots."""

    def __init__(self, roots: list[str]) -> None:
        given = [os.path.normpath(os.path.abspath(os.path.expanduser(r))) for r in roots]
        self.roots = list(dict.fromkeys(Path(os.path.realpath(r)) for r in given))
        self._spellings = list(dict.fromkeys([*self.roots, *(Path(r) for r in given)]))

    @classmethod
    def for_workspace(cls, cwd: str, extra: list[str] | None = None) -> PathPolicy:
        """The cwd plus the configured extra roots (``~`` expanded, relative ones taken from the cwd)."""
        return cls([cwd, *(os.path.join(cwd, os.path.expanduser(root)) for root in extra or [])])

    def check(self, path: str) -> Path:
        """Return the resolved path, or raise PathRefused saying why it is refused."""
        if not isinstance(path, str) or not path or "\0" in path:
            raise PathRefused(str(path), "not a valid path")
        if not os.path.isabs(path):
            raise PathRefused(path, "path must be absolute")
        if not _below(Path(os.path.normpath(path)), self._spellings):
            raise PathRefused(path, f"outside the workspace roots ({self.describe()})")
        resolved = Path(os.path.realpath(path))
        if not self.contains(resolved):
            raise PathRefused(path, f"resolves to {resolved}, outside the workspace roots ({self.describe()})")
        _check_kind(path, resolved)
        return resolved

    def contains(self, path: Path) -> bool:
        """Whether ``path`` (already resolved) is one of the roots or below one."""
        return _below(path, self.roots)

    def describe(self) -> str:
        return ", ".join(str(r) for r in self.roots)


def _below(path: Path, roots: list[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def _check_kind(path: str, resolved: Path) -> None:
    try:
        mode = resolved.stat().st_mode
    except FileNotFoundError:
        return  # a new file: the fs methods decide what a missing file means
    except OSError as exc:
        raise PathRefused(path, f"cannot stat: {exc.strerror or exc}") from None
    if stat.S_ISDIR(mode):
        raise file_error(path, "is a directory, not a file")
    if not stat.S_ISREG(mode):
        raise PathRefused(path, "not a regular file (device, FIFO or socket)")
