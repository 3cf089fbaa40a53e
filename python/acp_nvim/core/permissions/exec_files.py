"""Files that configure code execution: they always get a review of their own.

A change to one of them runs code later without another question (git hooks and ``fsmonitor``,
direnv's ``.envrc``, Neovim's ``exrc`` files, editor task files, an executable script), so no
policy (``auto-edit``, ``trust``) and no remembered allow rule lets it through unseen.

A linked worktree's ``.git`` is a *file* whose ``gitdir:`` line names the git folder git uses
there: the file itself, and everything in the folder it names (or any folder shaped like a git
folder), configure execution as much as ``.git/**`` does: git reads its ``config`` (``fsmonitor``,
hooks) from there.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

FOLDERS = (".git", ".vscode", ".idea")
"""Anything below one of these folders, wherever it lies in the workspace."""
NAMES = (".envrc", ".nvim.lua", ".exrc", ".git")
"""Files with one of these names, in any folder (``.git`` as a file: a worktree's pointer to its git folder)."""
GITDIR_PREFIX = "gitdir:"
MAX_POINTER_BYTES = 4096
"""A ``.git`` file longer than this is no pointer git would follow."""
EXEC_BITS = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH


def configures_execution(path: str | Path, roots: Sequence[Path] = ()) -> bool:
    """Whether ``path`` (absolute, resolved) is such a file: by its name, its folders below a
    root, or an exec bit on the existing file."""
    where = Path(path)
    parts = _below_root(where, roots)
    if where.name in NAMES or any(part in FOLDERS for part in parts[:-1]):
        return True
    if _in_a_git_folder(where, len(parts)):
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


def _in_a_git_folder(path: Path, depth: int) -> bool:
    """Whether a folder above ``path``, up to its root (``depth`` folders), is a git folder: one a
    ``.git`` file there points to, or one shaped like a git folder (a ``HEAD`` file beside
    ``objects/`` or ``commondir``, what git itself checks), whichever ``.git`` file names it."""
    for folder in list(path.parents)[:depth]:
        pointed = _gitdir_of(folder / ".git")
        if pointed is not None and (pointed == path or pointed in path.parents):
            return True
        if _looks_like_a_git_folder(folder):
            return True
    return False


def _gitdir_of(dot_git: Path) -> Path | None:
    """The folder a ``.git`` *file* names (resolved, relative to the file's folder), or None."""
    try:
        info = os.lstat(dot_git)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_POINTER_BYTES:
            return None
        with open(dot_git, "rb") as handle:
            first = handle.read(MAX_POINTER_BYTES).decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    if not first or not first[0].startswith(GITDIR_PREFIX):
        return None
    named = first[0][len(GITDIR_PREFIX):].strip()
    if not named:
        return None
    return Path(os.path.realpath(os.path.join(dot_git.parent, named)))


def _looks_like_a_git_folder(folder: Path) -> bool:
    try:
        return (os.path.isfile(folder / "HEAD") and not os.path.islink(folder / "HEAD")
                and (os.path.isdir(folder / "objects") or os.path.isfile(folder / "commondir")))
    except OSError:
        return False
