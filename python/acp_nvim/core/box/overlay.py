"""The agent's writable view of the workspace: an overlay whose upper folder acp.nvim owns.

Each workspace root is shown in the box as an overlay (bubblewrap ≥ 0.10: ``--overlay-src root
--overlay upper work root``): the agent reads the user's tree and its own writes, and every write
lands in ``upper``, never in the user's tree. ``changes`` reads ``upper`` as proposals: a regular
file that differs from the user's (content or exec bit), a whiteout (a character device 0:0, or a
file marked ``overlay.whiteout``) for a deleted file, an opaque folder (``overlay.opaque = y``:
the agent removed the folder and made it again) for every file of the user's folder it no longer
holds. ``MergedView`` changes the agent's view after a decision through the box's own mount
(``/proc/<pid>/root``), never behind the kernel's back: a file changed in ``upper`` or in the
user's tree while the overlay is mounted is not seen again by a process that looked at it before.
Nothing here imports pynvim or the rest of acp_nvim.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import os
import secrets
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

MAX_PROPOSED_BYTES = 16 * 1024 * 1024
"""A file of the agent's larger than this is proposed as too large (never read whole)."""
_OPAQUE = ("user.overlay.opaque", "trusted.overlay.opaque")
_WHITEOUT = ("user.overlay.whiteout", "trusted.overlay.whiteout")
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
EXEC_BITS = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
TEMP_PREFIX = ".acp-nvim-overlay-"
"""The files acp.nvim writes into the agent's view before renaming them: never proposed."""


@dataclass(frozen=True, slots=True)
class Layer:
    """One workspace root shown as an overlay: the agent's writes go to ``upper``."""

    root: str
    upper: str
    work: str


@dataclass(frozen=True, slots=True)
class Change:
    """One change the agent made in its view of the user's tree."""

    path: str
    """Absolute, in the user's tree."""
    data: bytes | None
    """The new content; None: the agent deleted the file."""
    executable: bool = False
    """The agent's file has an exec bit."""
    kind: str = "file"
    """``file``, ``deleted``, ``symlink`` (the agent made a symlink: never carried over) or ``large``."""

    @property
    def text(self) -> str | None:
        """The content as UTF-8 text; None for a deletion, binary or too large content."""
        if self.data is None or self.kind != "file":
            return None
        try:
            return self.data.decode("utf-8")
        except UnicodeDecodeError:
            return None


class Overlay:
    """The overlay layers of one boxed agent process, in a private folder removed at exit."""

    def __init__(self, roots: Sequence[str], parent: str | None = None) -> None:
        self.folder = tempfile.mkdtemp(prefix="acp-nvim-overlay-", dir=parent)
        layers = []
        for index, root in enumerate(dict.fromkeys(roots)):
            upper, work = os.path.join(self.folder, str(index), "upper"), os.path.join(self.folder, str(index), "work")
            os.makedirs(upper, mode=0o700)
            os.makedirs(work, mode=0o700)
            layers.append(Layer(root, upper, work))
        self.layers: tuple[Layer, ...] = tuple(layers)
        self.synced: dict[str, bytes] = {}
        """Path -> ``fingerprint`` of what acp.nvim put in the agent's view there (the user's file):
        an upper file that still holds it is no change of the agent's."""
        atexit.register(self.discard)

    def mount(self, argv: Sequence[str]) -> list[str]:
        """bubblewrap's ``argv`` with each read-write bind of a root replaced by its overlay."""
        by_root = {layer.root: layer for layer in self.layers}
        out: list[str] = []
        index = 0
        while index < len(argv):
            arg = argv[index]
            if arg in ("--bind", "--bind-try") and index + 2 < len(argv) and argv[index + 1] in by_root \
                    and argv[index + 2] == argv[index + 1]:
                layer = by_root[argv[index + 1]]
                out += ["--overlay-src", layer.root, "--overlay", layer.upper, layer.work, layer.root]
                index += 3
                continue
            if arg == "--":
                out += list(argv[index:])
                break
            out.append(arg)
            index += 1
        return out

    def changes(self) -> list[Change]:
        """Every change in the upper folders, as proposals for the user's tree (blocking)."""
        found: list[Change] = []
        roots = [layer.root for layer in self.layers]
        for layer in self.layers:
            nested = [r for r in roots if r != layer.root and r.startswith(layer.root.rstrip("/") + "/")]
            found += [c for c in scan(layer.upper, layer.root)
                      if not any(c.path == r or c.path.startswith(r + "/") for r in nested)]
        return found

    def layer_of(self, path: str) -> Layer | None:
        """The innermost layer whose root holds ``path``."""
        best = None
        for layer in self.layers:
            if path.startswith(layer.root.rstrip("/") + "/") and (best is None or len(layer.root) > len(best.root)):
                best = layer
        return best

    def discard(self) -> None:
        """Remove the layers (the agent's unproposed writes with them)."""
        remove_tree(self.folder)


def remove_tree(top: str) -> None:
    """Remove ``top`` and everything below it, however deep (``shutil.rmtree`` recurses), never
    following a symlink; what cannot be removed is left."""
    folders = [top]
    while folders:
        folder = folders[-1]
        try:
            entries = list(os.scandir(folder))
        except OSError:
            entries = []
        deeper = [e.path for e in entries if e.is_dir(follow_symlinks=False)]
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
        if deeper:
            folders += deeper
            continue
        folders.pop()
        with contextlib.suppress(OSError):
            os.rmdir(folder)


def fingerprint(data: bytes | None, executable: bool) -> bytes:
    """What identifies a file's content and exec bit (None: no file)."""
    if data is None:
        return b"none"
    return hashlib.sha256(data).digest() + (b"x" if executable else b"-")


def scan(upper: str, root: str) -> list[Change]:
    """The changes ``upper`` holds over the user's folder ``root``."""
    found: list[Change] = []
    _scan_folder(upper, root, found)
    return sorted(found, key=lambda change: change.path)


def _scan_folder(top: str, root: str, found: list[Change]) -> None:
    """Folder by folder (a stack, not recursion: the agent decides how deep its folders go)."""
    folders = [(top, root)]
    while folders:
        upper, lower = folders.pop()
        try:
            names = sorted(os.listdir(upper))
        except OSError:
            continue
        if _opaque(upper):
            found += [Change(path, None, kind="deleted") for path in _lower_files(lower, set(names))]
        for name in names:
            if name.startswith(TEMP_PREFIX):
                continue  # acp.nvim's own file, being put in the agent's view
            above, below = os.path.join(upper, name), os.path.join(lower, name)
            try:
                info = os.lstat(above)
            except OSError:
                continue
            if _is_whiteout(above, info):
                found += [Change(path, None, kind="deleted") for path in _lower_files(below)]
            elif stat.S_ISDIR(info.st_mode):
                if (os.path.lexists(below) and not os.path.isdir(below)) or os.path.islink(below):
                    found += [Change(path, None, kind="deleted") for path in _lower_files(below)]
                folders.append((above, below))
            elif stat.S_ISLNK(info.st_mode):
                if not (os.path.islink(below) and os.readlink(below) == os.readlink(above)):
                    found.append(Change(below, None, kind="symlink"))
            elif stat.S_ISREG(info.st_mode):
                change = _file_change(above, below, info)
                if change is not None:
                    found.append(change)


def _file_change(above: str, below: str, info: os.stat_result) -> Change | None:
    executable = bool(info.st_mode & EXEC_BITS)
    if info.st_size > MAX_PROPOSED_BYTES:
        return Change(below, None, executable, kind="large")
    data = _read(above)
    if data is None:
        return None
    try:
        lower = os.lstat(below)
    except OSError:
        lower = None
    if lower is not None and stat.S_ISREG(lower.st_mode) and bool(lower.st_mode & EXEC_BITS) == executable \
            and lower.st_size == len(data) and _read(below) == data:
        return None  # copied up unchanged (a chmod undone, an accepted change)
    return Change(below, data, executable)


def _read(path: str) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read(MAX_PROPOSED_BYTES + 1)


def _is_whiteout(path: str, info: os.stat_result) -> bool:
    if stat.S_ISCHR(info.st_mode) and info.st_rdev == 0:
        return True
    return stat.S_ISREG(info.st_mode) and info.st_size == 0 and any(_xattr(path, name) is not None
                                                                    for name in _WHITEOUT)


def _opaque(path: str) -> bool:
    return any(_xattr(path, name) == b"y" for name in _OPAQUE)


def _xattr(path: str, name: str) -> bytes | None:
    try:
        return os.getxattr(path, name, follow_symlinks=False)
    except OSError:
        return None


def _lower_files(path: str, keep: set[str] | None = None) -> list[str]:
    """The user's files at or below ``path`` (a folder: every file in it, but the names in ``keep``)."""
    if os.path.islink(path) or os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        return []
    files: list[str] = []
    for name in sorted(os.listdir(path)):
        if keep is not None and name in keep:
            continue
        files += _lower_files(os.path.join(path, name))
    return files


# -- the agent's view, changed through the box's own mount -------------------------------


def box_pid(bwrap_pid: int) -> int | None:
    """A process inside the box bubblewrap ``bwrap_pid`` made (its first child), or None."""
    try:
        with open(f"/proc/{bwrap_pid}/task/{bwrap_pid}/children") as handle:
            children = handle.read().split()
    except OSError:
        children = []
    if not children:
        children = [pid for pid in _pids() if _parent_of(pid) == bwrap_pid]
    return int(children[0]) if children else None


def _pids() -> list[str]:
    try:
        return [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def _parent_of(pid: str) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return int(handle.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


class MergedView:
    """The agent's view of one root, reached through a process of its box: a change here is the
    one the agent's processes see. Every folder on the way is opened without following a symlink
    (the agent may have put one there)."""

    def __init__(self, pid: int, layer: Layer) -> None:
        self.base = f"/proc/{pid}/root{layer.root}"
        self.root = layer.root

    def put(self, path: str, data: bytes, mode: int) -> None:
        """The agent sees ``data`` (with ``mode``) at ``path`` from now on."""
        with self._folder(path, create=True) as (folder, leaf):
            temp = f"{TEMP_PREFIX}{secrets.token_hex(6)}.tmp"
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                         dir_fd=folder)
            try:
                with os.fdopen(fd, "wb", closefd=False) as handle:
                    handle.write(data)
                os.fchmod(fd, stat.S_IMODE(mode))
            finally:
                os.close(fd)
            try:
                os.rename(temp, leaf, src_dir_fd=folder, dst_dir_fd=folder)
            except OSError:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=folder)
                raise

    def read(self, path: str) -> tuple[bytes, bool] | None:
        """What the agent sees at ``path`` (content and exec bit); None: no regular file there."""
        try:
            with self._folder(path, create=False) as (folder, leaf):
                fd = os.open(leaf, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
                with os.fdopen(fd, "rb") as handle:
                    info = os.fstat(handle.fileno())
                    if not stat.S_ISREG(info.st_mode):
                        return None
                    return handle.read(MAX_PROPOSED_BYTES + 1), bool(info.st_mode & EXEC_BITS)
        except OSError:
            return None

    def remove(self, path: str) -> None:
        """The agent no longer sees a file at ``path`` (a folder there is left)."""
        try:
            with self._folder(path, create=False) as (folder, leaf):
                if not stat.S_ISDIR(os.lstat(leaf, dir_fd=folder).st_mode):
                    os.unlink(leaf, dir_fd=folder)
        except FileNotFoundError:
            return

    @contextlib.contextmanager
    def _folder(self, path: str, *, create: bool) -> Iterator[tuple[int, str]]:
        parts = Path(path).relative_to(self.root).parts
        if not parts or any(part in ("..", ".") for part in parts):
            raise ValueError(f"{path}: not a file below {self.root}")
        fd = os.open(self.base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for part in parts[:-1]:
                try:
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    os.mkdir(part, 0o755, dir_fd=fd)
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = child
            yield fd, parts[-1]
        finally:
            os.close(fd)


PROBE_TIMEOUT = 10.0


@functools.cache
def works(bwrap: str) -> str:
    """'' when ``bwrap`` mounts an overlay whose upper folder is in the temporary folder, else why
    not (one line; cached: the probe starts a process)."""
    folder = tempfile.mkdtemp(prefix="acp-nvim-overlay-probe-")
    try:
        lower, upper, work = (os.path.join(folder, name) for name in ("lower", "upper", "work"))
        for path in (lower, upper, work):
            os.mkdir(path)
        argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid",
                "--overlay-src", lower, "--overlay", upper, work, lower, "--", "/bin/sh", "-c", f": > {lower}/probe"]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT, env={"PATH": os.defpath})
        except (OSError, subprocess.SubprocessError) as exc:
            return str(exc)
        if done.returncode == 0 and os.path.exists(os.path.join(upper, "probe")) \
                and not os.path.exists(os.path.join(lower, "probe")):
            return ""
        lines = done.stderr.strip().splitlines()
        return lines[0] if lines else f"exit {done.returncode}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
