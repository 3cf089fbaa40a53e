"""Blocking disk access for the fs methods; callers run these through ``asyncio.to_thread``.

Files are opened with ``O_NOFOLLOW`` and checked with ``fstat`` after opening, so a path
swapped for a symlink or a FIFO after the policy check is refused rather than followed.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from acp import RequestError

from .paths import PathRefused, file_error

MAX_FILE_BYTES = 32 * 1024 * 1024
NOT_FOUND = -32002

_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A file's content at one moment: ``exists`` False for a missing file, ``text`` None if unreadable."""

    exists: bool
    text: str | None


def read_text(path: Path, cap: int = MAX_FILE_BYTES) -> str:
    """The file's text; a RequestError naming the problem when it cannot be served."""
    name = str(path)
    with os.fdopen(_open(path, _READ_FLAGS), "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise PathRefused(name, "not a regular file (device, FIFO or socket)")
        if info.st_size > cap:
            raise _too_large(name, info.st_size, cap)
        data = handle.read(cap + 1)
    if len(data) > cap:
        raise _too_large(name, len(data), cap)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise file_error(name, f"not valid UTF-8 text (invalid byte at offset {exc.start})") from None


def write_text(path: Path, content: str) -> None:
    """Write ``content`` as UTF-8, creating parent folders; never through a symlink."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode("utf-8")
    fd = _open(path, _WRITE_FLAGS, 0o666)
    with os.fdopen(fd, "wb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise PathRefused(str(path), "not a regular file (device, FIFO or socket)")
        handle.write(data)


def make_parents(path: Path) -> None:
    """Create the folders above ``path`` (a buffer write needs them too)."""
    path.parent.mkdir(parents=True, exist_ok=True)


def snapshot(path: Path) -> Snapshot:
    """The file's current content for a changeset, never raising."""
    try:
        return Snapshot(True, read_text(path))
    except RequestError as exc:
        return Snapshot(exc.code != NOT_FOUND, None)
    except OSError:
        return Snapshot(True, None)


def fingerprint(text: str | None) -> tuple[int, int]:
    """A cheap fingerprint of a file's content (None: missing) to skip work already done."""
    return (-1, 0) if text is None else (len(text), hash(text))


def stat_key(path: Path) -> tuple[int, int] | None:
    """(mtime in ns, size), or None when the file is missing: enough to notice a change."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size)


def remove(path: Path) -> None:
    """Delete a file the agent created (reverting it); a missing file is fine."""
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def _open(path: Path, flags: int, mode: int = 0o777) -> int:
    name = str(path)
    try:
        fd = os.open(path, flags, mode)
    except FileNotFoundError:
        raise file_error(name, "no such file", NOT_FOUND) from None
    except IsADirectoryError:
        raise file_error(name, "is a directory, not a file") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise PathRefused(name, "is a symlink (it changed after the path check)") from None
        raise file_error(name, exc.strerror or str(exc)) from None
    if stat.S_ISDIR(os.fstat(fd).st_mode):
        os.close(fd)
        raise file_error(name, "is a directory, not a file")
    return fd


def _too_large(name: str, size: int, cap: int) -> RequestError:
    return file_error(name, f"file too large ({size} bytes; the limit is {cap} bytes)")
