"""The one way in to a file the plugin opens for an agent: a walk down from a workspace root.

Every path is opened from its workspace root, one component at a time, never following a
symlink (``O_NOFOLLOW|O_DIRECTORY`` relative to the parent's descriptor; the root itself is
reached the same way from ``/``, along its real path). A symlink met during the walk means
the tree changed after the path was checked (``PathPolicy.check`` resolves the symlinks of
the workspace first): it is refused, never followed. So is anything but a regular file —
FIFOs, devices and sockets are refused from ``lstat`` before any open, and every open is
``O_NONBLOCK`` in case one is swapped in — and so is a file with more than one hard link
for reading (another name of it may lie outside the workspace). Reads are size-capped.

Writes replace the file: a temporary file in the same folder (made through the same folder
descriptor), written, ``fsync``ed and renamed over the name, with the old file's mode (and
owner, where allowed). A failed write leaves the old file whole; a hard link's other names
keep the old content; a read-only file (no write permission bit, or one the system refuses)
is never written.

Every function here blocks: callers run them through ``asyncio.to_thread``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from acp import RequestError

from ..port import NEW_FILE, FileId, Stamp
from .paths import PathRefused, file_error

MAX_FILE_BYTES = 32 * 1024 * 1024
NOT_FOUND = -32002
INTERNAL = -32603

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_PROBE_FLAGS = os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_WRITE_BITS = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
TEMP_PREFIX = ".acp-nvim-"


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A file's content at one moment: ``exists`` False for a missing file, ``text`` None if it
    cannot be read as text (or may not be: outside the roots, hard-linked, not a regular file)."""

    exists: bool
    text: str | None
    stamp: Stamp | None = None
    """The identity of what was read (None: missing or unread)."""


@dataclass(frozen=True, slots=True)
class Located:
    """Where a path leads as the no-follow walk finds it: the real path, the identity (st_dev,
    st_ino) of the deepest folder that exists on the way, and the rest of the path below it
    (the leaf name, with the missing folders before it). A file's own inode is no key: an
    atomic replace gives it a new one at every write."""

    path: Path
    folder: tuple[int, int]
    rest: str

    @property
    def key(self) -> tuple[int, int, str]:
        """What decisions about a file are keyed by."""
        return (*self.folder, self.rest)


@dataclass(frozen=True, slots=True)
class Replaced:
    """What a replacing write did: the new file's stamp and the old file's link count (0: new)."""

    stamp: Stamp
    old_links: int


class DiskChanged(RequestError):
    """The file is not the one the caller expected (it changed since it was looked at)."""

    def __init__(self, path: str) -> None:
        super().__init__(INTERNAL, f"{path}: not written: the file changed on disk meanwhile",
                         {"path": path, "reason": "changed on disk"})


def stamp_of(info: os.stat_result) -> Stamp:
    """(inode, size, mtime s, mtime ns) as Neovim's ``vim.uv.fs_stat`` sees them (an inode goes
    through a double there, so it is rounded the same way here)."""
    return (int(float(info.st_ino)), info.st_size, info.st_mtime_ns // 10**9, info.st_mtime_ns % 10**9)


def file_id_of(info: os.stat_result) -> FileId:
    """(device, inode) as Neovim's ``vim.uv.fs_stat`` sees them (both go through a double there)."""
    return (int(float(info.st_dev)), int(float(info.st_ino)))


class Opener:
    """Opens, reads, replaces and removes files below ``roots`` (real paths) without following
    any symlink and without blocking on anything that is not a regular file."""

    def __init__(self, roots: Sequence[Path]) -> None:
        self.roots = sorted((Path(r) for r in roots), key=lambda r: len(r.parts), reverse=True)

    # -- reading ---------------------------------------------------------------------

    def read_bytes(self, path: Path, cap: int = MAX_FILE_BYTES) -> tuple[bytes, Stamp]:
        """The file's bytes and stamp; a RequestError naming the problem when it cannot be served."""
        name = str(path)
        with self._folder(path, create=False) as (folder, leaf), self._open_regular(folder, leaf, name) as fd:
            info = os.fstat(fd)
            _check_readable(name, info, cap)
            data = _read_up_to(fd, cap + 1)
        if len(data) > cap:
            raise _too_large(name, len(data), cap)
        return data, stamp_of(info)

    def read_text(self, path: Path, cap: int = MAX_FILE_BYTES) -> str:
        """The file's UTF-8 text (see ``read_bytes``)."""
        return decode(str(path), self.read_bytes(path, cap)[0])

    def snapshot(self, path: Path) -> Snapshot:
        """The file's current content for a changeset or a reconcile, never raising."""
        try:
            data, stamp = self.read_bytes(path)
            return Snapshot(True, decode(str(path), data), stamp)
        except RequestError as exc:
            return Snapshot(exc.code != NOT_FOUND, None)
        except OSError:
            return Snapshot(True, None)

    def stamp(self, path: Path) -> Stamp | None:
        """The stamp of the regular file at ``path``; None when it is missing."""
        name = str(path)
        try:
            with self._folder(path, create=False) as (folder, leaf):
                return stamp_of(_lstat_regular(folder, leaf, name))
        except RequestError as exc:
            if exc.code == NOT_FOUND:
                return None
            raise

    def identity(self, path: Path, *, links_ok: bool = False) -> FileId:
        """(device, inode) of the file at ``path`` as a read would find it: a regular file with one
        link (any number with ``links_ok``: Neovim may load it, its text is not for the agent),
        reached without a symlink; else the usual RequestError (missing, refused, ...)."""
        return file_id_of(self._regular_info(path, links_ok))

    def _regular_info(self, path: Path, links_ok: bool = False) -> os.stat_result:
        name = str(path)
        with self._folder(path, create=False) as (folder, leaf):
            info = _lstat_regular(folder, leaf, name)
        if not links_ok:
            _check_links(name, info)
        return info

    def source_of(self, path: Path) -> FileId | None:
        """The source a buffer of ``path`` must have to be served as the file: ``identity``,
        ``NEW_FILE`` when no file is there, None when what is there may not be read (never raising)."""
        return self.source_and_stamp(path)[0]

    def source_and_stamp(self, path: Path) -> tuple[FileId | None, Stamp | None]:
        """``source_of`` and the file's stamp (None without a readable file), from one ``lstat``."""
        try:
            info = self._regular_info(path)
        except RequestError as exc:
            return (NEW_FILE if exc.code == NOT_FOUND else None), None
        except OSError:
            return None, None
        return file_id_of(info), stamp_of(info)

    def stamp_or_none(self, path: Path) -> Stamp | None:
        """``stamp``, with None also for a path that may not be used (never raising)."""
        try:
            return self.stamp(path)
        except (RequestError, OSError):
            return None

    def locate(self, path: Path) -> Located:
        """The file ``path`` names, found by the no-follow walk (a RequestError when the walk is refused)."""
        name = str(path)
        root, parts = self._split(path)
        fd = _walk(os.open("/", _DIR_FLAGS), root.parts[1:], name, create=False, root=root)
        try:
            depth = 0
            for part in parts[:-1]:
                try:
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    break
                except OSError as exc:
                    raise _folder_error(name, part, exc, None) from None
                os.close(fd)
                fd, depth = child, depth + 1
            info = os.fstat(fd)
        finally:
            os.close(fd)
        return Located(path, (info.st_dev, info.st_ino), "/".join(parts[depth:]))

    # -- writing ---------------------------------------------------------------------

    def replace(self, path: Path, data: bytes, expect: Stamp | bool | None = True) -> Replaced:
        """Replace (or create) the file with ``data`` atomically, creating missing folders.

        ``expect``: the stamp the file must still have (None: it must not exist); True: any.
        """
        name = str(path)
        with self._folder(path, create=True) as (folder, leaf):
            old = _writable_or_missing(folder, leaf, name)
            if expect is not True and (stamp_of(old) if old else None) != expect:
                raise DiskChanged(name)
            stamp = _write_temp_and_rename(folder, leaf, name, data, old)
        return Replaced(stamp, old.st_nlink if old else 0)

    def remove(self, path: Path) -> None:
        """Delete the regular file at ``path`` (a missing one is fine)."""
        name = str(path)
        try:
            with self._folder(path, create=False) as (folder, leaf):
                _lstat_regular(folder, leaf, name)
                os.unlink(leaf, dir_fd=folder)
        except FileNotFoundError:
            return
        except RequestError as exc:
            if exc.code != NOT_FOUND:
                raise

    # -- the walk --------------------------------------------------------------------

    @contextlib.contextmanager
    def _folder(self, path: Path, *, create: bool) -> Iterator[tuple[int, str]]:
        """A descriptor of the folder holding ``path`` (reached without following a symlink) and the leaf name."""
        name = str(path)
        root, parts = self._split(path)
        fd = _walk(os.open("/", _DIR_FLAGS), root.parts[1:], name, create=False, root=root)
        fd = _walk(fd, parts[:-1], name, create=create)
        try:
            yield fd, parts[-1]
        finally:
            os.close(fd)

    def _split(self, path: Path) -> tuple[Path, list[str]]:
        name = str(path)
        if not path.is_absolute() or any(p in ("..", ".") for p in path.parts):
            raise PathRefused(name, "not a resolved absolute path")
        for root in self.roots:
            if root == path:
                raise file_error(name, "is a directory, not a file")
            if root in path.parents:
                return root, list(path.relative_to(root).parts)
        raise PathRefused(name, f"outside the workspace roots ({', '.join(map(str, self.roots))})")

    @contextlib.contextmanager
    def _open_regular(self, folder: int, leaf: str, name: str) -> Iterator[int]:
        before = _lstat_regular(folder, leaf, name)
        try:
            fd = os.open(leaf, _READ_FLAGS, dir_fd=folder)
        except OSError as exc:
            raise _os_error(name, exc) from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or (info.st_dev, info.st_ino) != (before.st_dev, before.st_ino):
                raise PathRefused(name, "the file changed while it was being opened")
            yield fd
        finally:
            os.close(fd)


def decode(name: str, data: bytes) -> str:
    """UTF-8 text, or a RequestError that says where it is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise file_error(name, f"not valid UTF-8 text (invalid byte at offset {exc.start})") from None


def _walk(fd: int, parts: Sequence[str], name: str, *, create: bool, root: Path | None = None) -> int:
    """Open the folders ``parts`` one below the other from ``fd``, following no symlink; the last
    one's descriptor. Every descriptor but the one returned is closed, also on failure."""
    try:
        for part in parts:
            child = _open_dir(fd, part, name, create, root)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_dir(fd: int, part: str, name: str, create: bool, root: Path | None) -> int:
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        if root is not None:
            raise PathRefused(name, f"the workspace root {root} does not exist") from None
        if not create:
            raise file_error(name, "no such file", NOT_FOUND) from None
    except OSError as exc:
        raise _folder_error(name, part, exc, root) from None
    try:
        os.mkdir(part, 0o777, dir_fd=fd)
    except FileExistsError:
        pass
    except OSError as exc:
        raise file_error(name, f"cannot create the folder {part!r}: {exc.strerror or exc}") from None
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=fd)
    except OSError as exc:
        raise _folder_error(name, part, exc, root) from None


def _folder_error(name: str, part: str, exc: OSError, root: Path | None) -> RequestError:
    where = f"the workspace root {root}" if root is not None else f"the folder {part!r}"
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        return PathRefused(name, f"{where} is a symlink or not a folder (it changed after the path check)")
    return file_error(name, f"{where} cannot be opened: {exc.strerror or exc}")


def _lstat_regular(folder: int, leaf: str, name: str) -> os.stat_result:
    """``lstat`` the leaf: only a regular file passes (nothing is opened to find out)."""
    try:
        info = os.stat(leaf, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        raise file_error(name, "no such file", NOT_FOUND) from None
    except OSError as exc:
        raise _os_error(name, exc) from None
    _check_kind(name, info)
    return info


def _check_kind(name: str, info: os.stat_result) -> None:
    mode = info.st_mode
    if stat.S_ISLNK(mode):
        raise PathRefused(name, "is a symlink (it changed after the path check)")
    if stat.S_ISDIR(mode):
        raise file_error(name, "is a directory, not a file")
    if not stat.S_ISREG(mode):
        raise PathRefused(name, "not a regular file (device, FIFO or socket)")


def _check_links(name: str, info: os.stat_result) -> None:
    if info.st_nlink > 1:
        raise PathRefused(name, f"has {info.st_nlink} hard links: another name of it may be outside the "
                          "workspace, so acp.nvim does not read it for the agent")


def _check_readable(name: str, info: os.stat_result, cap: int) -> None:
    _check_links(name, info)
    if info.st_size > cap:
        raise _too_large(name, info.st_size, cap)


def _read_up_to(fd: int, limit: int) -> bytes:
    chunks, left = [], limit
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _writable_or_missing(folder: int, leaf: str, name: str) -> os.stat_result | None:
    """The file to replace (None: there is none), refused when it may not be written."""
    try:
        info = _lstat_regular(folder, leaf, name)
    except RequestError as exc:
        if exc.code == NOT_FOUND:
            return None
        raise
    if not info.st_mode & _WRITE_BITS:
        raise file_error(name, f"not written: the file is read-only (mode {stat.S_IMODE(info.st_mode):04o})")
    try:
        os.close(os.open(leaf, _PROBE_FLAGS, dir_fd=folder))  # the system's say: ACLs, immutable, read-only fs
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ETXTBSY):
            raise file_error(name, f"not written: the file is read-only ({exc.strerror})") from None
        raise _os_error(name, exc) from None
    return info


def _write_temp_and_rename(folder: int, leaf: str, name: str, data: bytes, old: os.stat_result | None) -> Stamp:
    temp = f"{TEMP_PREFIX}{secrets.token_hex(6)}.tmp"
    try:
        fd = os.open(temp, _TEMP_FLAGS, 0o600 if old else 0o666, dir_fd=folder)
    except OSError as exc:
        raise file_error(name, f"not written: cannot create a file in its folder ({exc.strerror or exc})",
                         INTERNAL) from None
    try:
        try:
            _write_all(fd, data)
            _keep_owner_and_mode(fd, old)
            os.fsync(fd)
            info = os.fstat(fd)
        finally:
            os.close(fd)
        os.rename(temp, leaf, src_dir_fd=folder, dst_dir_fd=folder)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=folder)
        raise file_error(name, f"not written: {exc.strerror or exc}; the file was left as it was", INTERNAL) from None
    with contextlib.suppress(OSError):
        os.fsync(folder)
    return stamp_of(info)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _keep_owner_and_mode(fd: int, old: os.stat_result | None) -> None:
    if old is None:
        return
    info = os.fstat(fd)
    if (info.st_uid, info.st_gid) != (old.st_uid, old.st_gid):
        with contextlib.suppress(OSError):
            os.fchown(fd, old.st_uid, old.st_gid)
    os.fchmod(fd, stat.S_IMODE(old.st_mode))


def _os_error(name: str, exc: OSError) -> RequestError:
    if exc.errno == errno.ELOOP:
        return PathRefused(name, "is a symlink (it changed after the path check)")
    if exc.errno == errno.ENOTDIR:
        return PathRefused(name, "a folder on its path is not a folder (it changed after the path check)")
    return file_error(name, exc.strerror or str(exc))


def _too_large(name: str, size: int, cap: int) -> RequestError:
    return file_error(name, f"file too large ({size} bytes; the limit is {cap} bytes)")
