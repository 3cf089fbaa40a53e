"""The checkpoint store of one working directory: contents by their hash, and manifests.

``<state>/acp_nvim/checkpoints/<cwd name>-<hash>/``:

- ``blobs/ab/<sha256>``: one file's bytes, zlib-compressed, named by the sha256 of the bytes
  (so a content is kept once, however many turns and sessions name it); a read checks the hash.
- ``manifests/<time>-<session>-<what>.json``: a checkpoint or an undo record, naming the
  contents it needs (``model.py``).

Every file is written privately (mode 0600, folders 0700) to a temporary name and renamed, so a
reader never sees half of one. The store is bounded (``prune``): contents no manifest names go
first, then the oldest manifests with the contents only they name, until it fits. A content
written in the last ``GRACE`` seconds that no manifest names yet is left to a later prune: the
manifest that will name it is being written (a turn in progress, another Neovim on the same
folder); a running turn writes its manifest as it goes, so its contents are named.

Every function blocks on the disk: the async callers run them through ``asyncio.to_thread``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
import time
import zlib
from collections import Counter
from pathlib import Path

from .errors import CheckpointCorrupt, CheckpointError, CheckpointGone
from .model import refs_of

ROOT = ("acp_nvim", "checkpoints")
GRACE = 600.0
"""Seconds a content nobody names yet is kept by ``prune``."""
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class CheckpointStore:
    """Contents and manifests of one working directory."""

    def __init__(self, state_dir: str, cwd: str) -> None:
        self.state_dir = Path(state_dir)
        self.folder = Path(state_dir, *ROOT, f"{_slug(Path(cwd).name or 'root')}-{_digest_text(cwd)[:12]}")
        self.blobs = self.folder / "blobs"
        self.manifests = self.folder / "manifests"

    # -- contents --------------------------------------------------------------------

    def put(self, data: bytes, *, durable: bool = False) -> str:
        """Keep ``data`` (once: a content already kept is only marked fresh); its digest."""
        digest = digest_of(data)
        path = self._blob(digest)
        try:
            os.utime(path)
            return digest
        except FileNotFoundError:
            pass
        _write_private(self.state_dir, path, zlib.compress(data, 1), durable)
        return digest

    def has(self, digest: str) -> bool:
        return self._blob(digest).is_file()

    def get(self, digest: str) -> bytes:
        """The content ``digest`` names; CheckpointGone or CheckpointCorrupt when it cannot be had."""
        path = self._blob(digest)
        try:
            fd = os.open(path, _READ_FLAGS)
        except FileNotFoundError:
            raise CheckpointGone(f"content {digest[:12]} is no longer in the checkpoint store "
                                 "(pruned: checkpoints.max_bytes, or removed)") from None
        except OSError as exc:
            raise CheckpointCorrupt(f"content {digest[:12]} cannot be read: {exc.strerror or exc}") from None
        with os.fdopen(fd, "rb") as handle:
            raw = handle.read()
        try:
            data = zlib.decompress(raw)
        except zlib.error:
            raise CheckpointCorrupt(f"content {digest[:12]} in the checkpoint store is corrupt") from None
        if digest_of(data) != digest:
            raise CheckpointCorrupt(f"content {digest[:12]} in the checkpoint store is corrupt (its hash differs)")
        return data

    def _blob(self, digest: str) -> Path:
        if not re.fullmatch(r"[0-9a-f]{64}", digest):
            raise CheckpointCorrupt(f"not a content digest: {digest!r:.80}")
        return self.blobs / digest[:2] / digest

    # -- manifests -------------------------------------------------------------------

    def write_manifest(self, name: str, text: str, *, durable: bool = False) -> None:
        _write_private(self.state_dir, self._manifest(name), text.encode("utf-8"), durable)

    def read_manifest(self, name: str) -> str:
        try:
            return self._manifest(name).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise CheckpointGone(f"checkpoint {name} is no longer in the store (pruned)") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise CheckpointCorrupt(f"checkpoint {name} cannot be read: {exc}") from None

    def has_manifest(self, name: str) -> bool:
        return self._manifest(name).is_file()

    def remove_manifest(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._manifest(name).unlink()

    def manifest_names(self) -> list[str]:
        """Every manifest, oldest first (their names start with the time they were made)."""
        try:
            return sorted(e.name for e in os.scandir(self.manifests) if e.name.endswith(".json")
                          and e.is_file(follow_symlinks=False))
        except FileNotFoundError:
            return []

    def _manifest(self, name: str) -> Path:
        if not re.fullmatch(r"[\w.-]+\.json", name) or name.startswith("."):
            raise CheckpointError(f"not a checkpoint name: {name!r:.80}")
        return self.manifests / name

    # -- the bound ---------------------------------------------------------------------

    def size(self) -> int:
        """Bytes the store holds (contents and manifests)."""
        blobs = self._blob_stats()
        return sum(size for size, _ in blobs.values()) + sum(self._manifest_sizes().values())

    def prune(self, max_bytes: int, now: float | None = None) -> list[str]:
        """Bring the store within ``max_bytes``: contents nobody names go first, then the oldest
        manifests and the contents only they named. Returns the manifests removed."""
        now = time.time() if now is None else now
        blobs = self._blob_stats()
        sizes = self._manifest_sizes()
        refs = {name: self._refs(name) for name in sizes}
        count: Counter[str] = Counter(d for names in refs.values() for d in names)
        total = sum(size for size, _ in blobs.values()) + sum(sizes.values())
        budget = max_bytes
        for digest, (size, mtime) in list(blobs.items()):
            if count[digest] == 0:
                if now - mtime > GRACE:
                    total -= self._drop_blob(digest, size)
                else:
                    budget += size  # named by a manifest being written: not this prune's to take
        dropped: list[str] = []
        for name in sorted(sizes):
            if total <= budget:
                break
            self.remove_manifest(name)
            total -= sizes[name]
            dropped.append(name)
            for digest in refs[name]:
                count[digest] -= 1
                if count[digest] == 0 and digest in blobs:
                    total -= self._drop_blob(digest, blobs[digest][0])
        return dropped

    def _refs(self, name: str) -> set[str]:
        try:
            return refs_of(self.read_manifest(name))
        except CheckpointError:
            return set()  # unreadable: it names nothing a rewind could use

    def _drop_blob(self, digest: str, size: int) -> int:
        with contextlib.suppress(FileNotFoundError):
            self._blob(digest).unlink()
        return size

    def _blob_stats(self) -> dict[str, tuple[int, float]]:
        found: dict[str, tuple[int, float]] = {}
        try:
            folders = [e for e in os.scandir(self.blobs) if e.is_dir(follow_symlinks=False)]
        except FileNotFoundError:
            return found
        for folder in folders:
            for entry in os.scandir(folder.path):
                if entry.is_file(follow_symlinks=False) and re.fullmatch(r"[0-9a-f]{64}", entry.name):
                    info = entry.stat(follow_symlinks=False)
                    found[entry.name] = (info.st_size, info.st_mtime)
        return found

    def _manifest_sizes(self) -> dict[str, int]:
        sizes: dict[str, int] = {}
        for name in self.manifest_names():
            with contextlib.suppress(FileNotFoundError):
                sizes[name] = self._manifest(name).stat().st_size
        return sizes


def _write_private(base: Path, path: Path, data: bytes, durable: bool) -> None:
    """Write ``data`` to ``path`` atomically with mode 0600 (folders below ``base``: 0700)."""
    _private_folders(base, path.parent)
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


def _private_folders(base: Path, folder: Path) -> None:
    """Create ``folder`` and the folders between it and ``base``, each mode 0700."""
    base.mkdir(mode=0o700, parents=True, exist_ok=True)
    missing: list[Path] = []
    current = folder
    while not current.is_dir() and current != base and base in current.parents:
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=0o700)
    if not folder.is_dir():
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)


def _digest_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _slug(text: str) -> str:
    return re.sub(r"[^\w.-]+", "-", text)[:40]


def manifest_name(session: str, what: str, now_ns: int | None = None) -> str:
    """A manifest's name: its time (so names sort oldest first), its session and what it is."""
    stamp = time.time_ns() if now_ns is None else now_ns
    return f"{stamp:020d}-{_digest_text(session)[:12]}-{_slug(what)}.json"
