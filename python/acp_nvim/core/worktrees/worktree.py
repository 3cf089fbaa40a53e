"""Worktrees made for sessions: made from HEAD on a branch of their own, found again, their changes
against the commit they started from, and their removal (which keeps the branch).

Where a worktree started is kept beside git's own record of it (``<git dir>/worktrees/<id>/acp-nvim.json``):
the folder git removes with the worktree, never a file in the checkout.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from . import git, names
from .names import Status, WorktreeError
from .settings import WorktreeSettings

META = "acp-nvim.json"
PLAIN_DIFF = ("--no-color", "--no-ext-diff", "--no-textconv")
"""The diff git computes itself: no external diff program, no text conversion a .gitattributes names."""
MAX_DIFF_BYTES = 16 * 1024 * 1024
MAX_NEW_FILES = 500
"""New files shown in full in a diff; the rest are counted."""
"""The most of a diff shown at once; a longer one is cut, and says so."""


@dataclass(frozen=True, slots=True)
class Repo:
    """The checkout a command runs in."""

    top: str
    common: str
    """The git folder every worktree of the repository shares."""
    branch: str
    """Its checked-out branch ('' when detached)."""


@dataclass(frozen=True, slots=True)
class Worktree:
    """One worktree of a session: its folder, its branch, and the commit and branch it started from."""

    name: str
    path: str
    branch: str
    base: str
    source: str = ""
    agent: str = ""


async def open_repo(cwd: str) -> Repo:
    """The checkout ``cwd`` is in; a clear error outside a git repository."""
    if not os.path.isdir(cwd):
        raise WorktreeError(f"{cwd} is not a folder")
    try:
        found = await git.run(cwd, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir")
    except WorktreeError:
        raise WorktreeError(f"{cwd} is not in a git repository: a worktree needs one (git init, or :cd into a "
                            "checkout)") from None
    top, common = found.text.splitlines()[:2]
    branch = await git.run(top, "symbolic-ref", "--quiet", "--short", "HEAD", ok=(0, 1))
    return Repo(top, common, branch.text.strip())


def root(repo: Repo, settings: WorktreeSettings) -> str:
    return names.folder(settings.folder, repo.top, repo.common)


async def create(repo: Repo, name: str | None, agent: str, settings: WorktreeSettings) -> Worktree:
    """A new worktree on a new branch (``branch_prefix`` + name) from HEAD; an error, with nothing made,
    when the name, its folder or its branch is taken."""
    folder = root(repo, settings)
    branches = await _branches(repo)
    prefix = settings.branch_prefix
    if name is None:
        taken = [*_folders(folder), *(b.removeprefix(prefix) for b in branches if b.startswith(prefix))]
        name = names.default_name(agent, taken)
    path, branch = os.path.join(folder, names.check_name(name)), prefix + name
    if os.path.lexists(path):
        raise WorktreeError(f"a worktree named {name} exists already ({path}): give another name, or none "
                            "for a new one")
    if branch in branches:
        raise WorktreeError(f"the branch {branch} exists already: give the worktree another name")
    head = await git.run(repo.top, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", ok=(0, 1))
    if not head.text.strip():
        raise WorktreeError(f"{repo.top} has no commit yet: a worktree starts from HEAD (commit first)")
    await asyncio.to_thread(os.makedirs, folder, exist_ok=True)
    await git.run(repo.top, "worktree", "add", "--quiet", "-b", branch, "--", path, head.text.strip())
    made = Worktree(name, path, branch, head.text.strip(), repo.branch, agent)
    await _save_meta(made)
    return made


async def list_all(repo: Repo, settings: WorktreeSettings) -> list[Worktree]:
    """The worktrees in the folder of ``settings`` (made by acp.nvim, or by hand there)."""
    folder = os.path.realpath(root(repo, settings))
    listed = names.parse_list((await git.run(repo.top, "worktree", "list", "--porcelain")).text)
    found = []
    for entry in listed:
        if os.path.dirname(os.path.realpath(entry.path)) == folder:
            found.append(await _read(repo, entry))
    return found


async def find(repo: Repo, settings: WorktreeSettings, name: str) -> Worktree:
    """The worktree called ``name``; an error naming the folder when there is none."""
    for worktree in await list_all(repo, settings):
        if worktree.name == name:
            return worktree
    raise WorktreeError(f"no worktree named {name} in {root(repo, settings)} (:Ai worktree lists them)")


async def dirty(worktree: Worktree) -> list[Status]:
    """Its uncommitted changes, untracked files included (what removing it would lose)."""
    raw = await git.run(worktree.path, "status", "--porcelain=v1", "-z", "--untracked-files=all")
    return names.parse_status(raw.out)


async def diff(worktree: Worktree) -> str:
    """The worktree as it is now (commits and uncommitted changes) against the commit it started from,
    new files included; cut at ``MAX_DIFF_BYTES``."""
    tracked = await git.run(worktree.path, "diff", *PLAIN_DIFF, "--no-renames", worktree.base)
    parts = [tracked.out]
    size = len(tracked.out)
    new_files = await untracked(worktree)
    for count, path in enumerate(new_files):
        if size > MAX_DIFF_BYTES or count >= MAX_NEW_FILES:
            parts.append(f"\n… and {len(new_files) - count} more new file(s)\n".encode())
            break
        new = await git.run(worktree.path, "diff", *PLAIN_DIFF, "--no-index", "--",
                            os.devnull, path, ok=(0, 1))
        parts.append(new.out)
        size += len(new.out)
    text = b"".join(parts).decode("utf-8", "replace")
    if len(text) > MAX_DIFF_BYTES:
        text = text[:MAX_DIFF_BYTES] + f"\n… (cut at {MAX_DIFF_BYTES // (1024 * 1024)} MiB)\n"
    return text


async def untracked(worktree: Worktree) -> list[str]:
    """Its new files that git does not ignore (paths relative to the worktree)."""
    raw = await git.run(worktree.path, "ls-files", "--others", "--exclude-standard", "-z")
    return [part.decode("utf-8", "surrogateescape") for part in raw.out.split(b"\0") if part]


async def changed(worktree: Worktree) -> list[tuple[str, str]]:
    """(letter, path) of every file that differs from where it started: A added, M changed, D deleted,
    T type changed; new untracked files are A."""
    raw = await git.run(worktree.path, "diff", *PLAIN_DIFF, "--name-status", "--no-renames", "-z",
                        worktree.base)
    found = names.parse_name_status(raw.out)
    return found + [("A", path) for path in await untracked(worktree)]


async def text_at(worktree: Worktree, path: str) -> bytes | None:
    """The file as it was where the worktree started (None when it did not exist there)."""
    shown = await git.run(worktree.path, "cat-file", "blob", f"{worktree.base}:{path}", ok=(0, 128))
    return shown.out if shown.code == 0 else None


async def remove(repo: Repo, worktree: Worktree, force: bool = False) -> None:
    """Remove the worktree's folder (its branch stays); ``force`` also when it has uncommitted changes."""
    await git.run(repo.top, "worktree", "remove", *(["--force"] if force else []), "--", worktree.path)


async def _branches(repo: Repo) -> set[str]:
    listed = await git.run(repo.top, "for-each-ref", "--format=%(refname:short)", "refs/heads/")
    return set(listed.text.split())


def _folders(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


async def _admin(path: str) -> Path:
    found = await git.run(path, "rev-parse", "--absolute-git-dir")
    return Path(found.text.strip())


async def _save_meta(worktree: Worktree) -> None:
    meta = {"base": worktree.base, "source": worktree.source, "agent": worktree.agent, "created": time.time()}
    target = await _admin(worktree.path) / META
    await asyncio.to_thread(target.write_text, json.dumps(meta), "utf-8")


async def _read(repo: Repo, entry: names.Listed) -> Worktree:
    name = os.path.basename(entry.path)
    meta: dict[str, object] = {}
    try:
        text = await asyncio.to_thread((await _admin(entry.path) / META).read_text, "utf-8")
        loaded = json.loads(text)
        meta = loaded if isinstance(loaded, dict) else {}
    except (OSError, ValueError, WorktreeError):
        pass
    base = meta.get("base")
    if not isinstance(base, str) or not base:  # made by hand: where its branch left the checkout's
        found = await git.run(repo.top, "merge-base", "HEAD", entry.head, ok=(0, 1))
        base = found.text.strip() or entry.head
    source, agent = meta.get("source"), meta.get("agent")
    return Worktree(name, entry.path, entry.branch, base, source if isinstance(source, str) else "",
                    agent if isinstance(agent, str) else "")


async def session_folders(cwd: str, settings: WorktreeSettings) -> list[str]:
    """The folders of the worktrees in the folder of ``settings`` of the repository ``cwd`` is in: where
    sessions started with ``--worktree`` worked (none outside a repository, or when git cannot tell).
    Each as ``create`` named it and as git lists it (a session's folder is the first)."""
    try:
        repo = await open_repo(cwd)
        listed = names.parse_list((await git.run(repo.top, "worktree", "list", "--porcelain")).text)
    except WorktreeError:
        return []
    folder = root(repo, settings)
    found: list[str] = []
    for entry in listed:
        if os.path.dirname(os.path.realpath(entry.path)) == os.path.realpath(folder):
            made = os.path.join(folder, os.path.basename(entry.path))
            found += [path for path in dict.fromkeys((made, entry.path)) if path not in found]
    return found


async def at(path: str, settings: WorktreeSettings) -> Worktree | None:
    """The worktree whose folder is ``path`` (None: it is none, or it is gone)."""
    try:
        repo = await open_repo(path)
        return next((w for w in await list_all(repo, settings) if os.path.realpath(w.path) == os.path.realpath(path)),
                    None)
    except WorktreeError:
        return None
