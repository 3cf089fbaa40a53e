"""Files only the user may read, written whole: the history's records, the checkpoints' packs and
manifests."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def write_private(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Write ``data`` to ``path`` (its folder exists) atomically, mode 0600: a reader sees the old
    file or the new one, never half of one. ``durable``: on disk before the rename (fsync)."""
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
