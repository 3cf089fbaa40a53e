"""Files that configure code execution: they always get a review of their own.

A change to one of them runs code later without another question (git hooks and ``fsmonitor``,
direnv's ``.envrc``, Neovim's ``exrc`` files, editor task files, an executable script), so no
policy (``auto-edit``, ``trust``) and no remembered allow rule lets it through unseen.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

FOLDERS = (".git", ".vscode", ".idea")
"""Anything below one of these folders, wherever it lies in the workspace."""
NAMES = (".envrc", ".nvim.lua", ".exrc")
"""Files with one of these names, in any folder."""
EXEC_BITS = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH


def configures_execution(path: str | Path, roots: Sequence[Path] = ()) -> bool:
    """Whether ``path`` (absolute, resolved) is such a file: by its name, its folders below a
    root, or an exec bit on the existing file."""
    where = Path(path)
    parts = _below_root(where, roots)
    if where.name in NAMES or any(part in FOLDERS for part in parts[:-1]):
        return True
    try:
        info = os.lstat(where)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and bool(info.st_mode & EXEC_BITS)


def _below_root(path: Path, roots: Sequence[Path]) -> tuple[str, ...]:
    for root in roots:
        if root in path.parents:
            return path.relative_to(root).parts
    return path.parts
