"""Files only the user may read, written whole: the history's records, the checkpoints' packs and
manifests."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_private(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Write ``data`` to ``path`` (its folder exists) atomically, mode 0600: a reader sees the old
    file or the new one, never half of one. ``durable``: on disk before the rename (fsync), and the
    rename on disk too (fsync of the folder): a crash of the machine keeps the new file whole."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")  # mkstemp: mode 0600
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    if durable:
        sync_folder(path.parent)


def sync_file(path: Path) -> None:
    """``path``'s bytes on disk (fsync); FileNotFoundError when it is gone."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_folder(folder: Path) -> None:
    """The names in ``folder`` on disk (fsync of the folder: a rename or a new file survives a crash)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
