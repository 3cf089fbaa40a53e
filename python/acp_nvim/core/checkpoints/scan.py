"""What a command changed: the files of the workspace roots before and after it, by their stamps.

A scan lists the regular files under the roots, breadth first (so a project's own files come
before deep dependency trees), without following a symlink, skipping the folders of version
control and of caches that tools rebuild (``SKIP``), and stops at ``limit`` files (the scan
says it was cut). Two scans compare by stamp (inode, size, mtime): a file whose stamp changed,
appeared or disappeared is what ran in between changed.

Every function blocks on the disk: the async callers run them through ``asyncio.to_thread``.
"""

from __future__ import annotations

import os
import stat
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..files.opener import stamp_of
from ..port import Stamp

SKIP = frozenset({".git", ".hg", ".svn", ".jj", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache",
                  ".ruff_cache", ".tox", ".venv"})
"""Folders a scan does not enter."""


@dataclass(slots=True)
class Scan:
    """The files under the roots at one moment: resolved path -> stamp; ``cut`` when ``limit`` stopped it."""

    files: dict[str, Stamp] = field(default_factory=dict)
    cut: bool = False


@dataclass(frozen=True, slots=True)
class Changed:
    """What differs between two scans: changed, created and removed files (each sorted)."""

    changed: list[str]
    created: list[str]
    removed: list[str]

    def __bool__(self) -> bool:
        return bool(self.changed or self.created or self.removed)


def scan(roots: Sequence[Path], limit: int) -> Scan:
    """The regular files under ``roots`` (at most ``limit`` of them)."""
    found = Scan()
    seen: set[str] = set()
    queue = deque(str(root) for root in roots)
    while queue:
        folder = queue.popleft()
        if folder in seen:
            continue
        seen.add(folder)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode):
                if entry.name not in SKIP:
                    queue.append(entry.path)
            elif stat.S_ISREG(info.st_mode):
                if len(found.files) >= limit:
                    found.cut = True
                    return found
                found.files[entry.path] = stamp_of(info)
    return found


def compare(before: Scan, after: Scan) -> Changed:
    """The files that changed between two scans (a file a cut scan did not reach counts for neither)."""
    changed = sorted(p for p, s in after.files.items() if p in before.files and before.files[p] != s)
    created = sorted(p for p in after.files if p not in before.files and not before.cut)
    removed = sorted(p for p in before.files if p not in after.files and not after.cut)
    return Changed(changed, created, removed)
