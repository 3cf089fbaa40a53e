"""Looking at a folder the way the attack tests compare it before and after."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def tree(folder: Path) -> dict[str, tuple[str, int, int, int]]:
    """Every entry below ``folder`` (no symlink followed): its bytes or kind, mode, inode, mtime."""
    found = {}
    for base, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(base) / name
            info = path.lstat()
            body = path.read_bytes().hex() if stat.S_ISREG(info.st_mode) else stat.filemode(info.st_mode)
            found[str(path.relative_to(folder))] = (body, info.st_mode, info.st_ino, info.st_mtime_ns)
    return found
