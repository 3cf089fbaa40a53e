"""The checkpoint store of one working directory: contents by their hash, in packs, and manifests.

``<state>/acp_nvim/checkpoints/<cwd name>-<hash>/``:

- ``packs/<time>-<random>.pack``: contents, each kept once however many turns and sessions name
  it (content-addressed by the sha256 of its bytes; a read checks the hash). A pack is written
  whole, at once, by one batch of contents (a turn's texts before or after it): one file per
  batch, not per content, as creating a file costs more than writing it. A record is a header
  line, ``<sha256 hex> <length hex>\n``, then the zlib-compressed bytes.
- ``manifests/<time>-<session>-<what>.json``: a checkpoint or an undo record, naming the
  contents it needs (``model.py``).

Every file is written privately (mode 0600, folders 0700) to a temporary name and renamed, so a
reader never sees half of one. A turn's files are written without waiting for the disk; ``sync``
puts every one written so far on disk (fsync of each pack and manifest, then of their folders, so
the renames hold too) before a rewind relies on them. What a rewind keeps for its undo is written
durably at once. The store is bounded (``prune``): contents no manifest names go
first, then the oldest manifests with the contents only they named, until it fits; a pack that
holds more dead contents than live ones is written again with its live ones. A pack written in
the last ``GRACE`` seconds that holds a content no manifest names yet is left to a later prune
(and not counted): the manifest that will name it is being written (a turn in progress, another
session or Neovim on the same folder); a running turn writes its manifest as it goes.

Every function blocks on the disk: the async callers run them through ``asyncio.to_thread``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import threading
import time
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..private_files import sync_file, sync_folder, write_private
from .errors import CheckpointCorrupt, CheckpointError, CheckpointGone
from .model import refs_of

ROOT = ("acp_nvim", "checkpoints")
GRACE = 600.0
"""Seconds a new pack with a content no manifest names yet is left alone by ``prune``."""
HEADER = 64 + 1 + 16 + 1
"""A record's header: the digest in hex, a space, the length in 16 hex digits, a newline."""
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True)
class _Where:
    """Where a content lies: its pack and the offset and length of its compressed bytes."""

    pack: str
    offset: int
    length: int


@dataclass(slots=True)
class Batch:
    """Contents put together (``CheckpointStore.batch``): the new ones go into one pack at the end."""

    store: CheckpointStore
    new: dict[str, bytes] = field(default_factory=dict)
    touched: set[str] = field(default_factory=set)

    def put(self, data: bytes) -> str:
        """Keep ``data`` (once); its digest."""
        digest = digest_of(data)
        if digest not in self.new and not self.store.known(digest, self.touched):
            self.new[digest] = zlib.compress(data, 1)
        return digest


class CheckpointStore:
    """Contents and manifests of one working directory (safe to use from several threads)."""

    def __init__(self, state_dir: str, cwd: str) -> None:
        self.state_dir = Path(state_dir)
        self.folder = Path(state_dir, *ROOT, f"{_slug(Path(cwd).name or 'root')}-{_digest_text(cwd)[:12]}")
        self.packs = self.folder / "packs"
        self.manifests = self.folder / "manifests"
        self.estimate: int | None = None
        """The store's size as this process knows it (None: not measured yet): what it wrote since the
        last prune, added to what that prune left (another Neovim's writes are seen at the next prune)."""
        self._index: dict[str, _Where] = {}
        self._indexed: set[str] = set()
        self._loaded = False
        self._lock = threading.RLock()
        self._unsynced: set[Path] = set()
        """Packs and manifests written without fsync, not synced since (``sync``)."""

    # -- contents --------------------------------------------------------------------

    @contextlib.contextmanager
    def batch(self, *, durable: bool = False) -> Iterator[Batch]:
        """Put contents together: the new ones are written as one pack when the block ends."""
        batch = Batch(self)
        yield batch
        if batch.new:
            self._write_pack(batch.new, durable)

    def put(self, data: bytes, *, durable: bool = False) -> str:
        """Keep one content (a pack of its own when it is new); its digest."""
        with self.batch(durable=durable) as batch:
            return batch.put(data)

    def known(self, digest: str, touched: set[str] | None = None) -> bool:
        """Whether the store holds ``digest``; its pack is marked fresh once per ``touched`` (a batch)."""
        with self._lock:
            if not self._loaded:
                self._scan()
            where = self._index.get(digest)
        if where is None:
            return False
        if touched is not None and where.pack not in touched:
            touched.add(where.pack)
            try:
                os.utime(self.packs / where.pack)
            except FileNotFoundError:  # pruned meanwhile (another Neovim): keep the content again
                with self._lock:
                    self._forget_pack(where.pack)
                return False
        return True

    def has(self, digest: str) -> bool:
        return self.known(digest)

    def get(self, digest: str) -> bytes:
        """The content ``digest`` names; CheckpointGone or CheckpointCorrupt when it cannot be had."""
        if not re.fullmatch(r"[0-9a-f]{64}", digest):
            raise CheckpointCorrupt(f"not a content digest: {digest!r:.80}")
        if not self.known(digest):
            with self._lock:
                self._scan()  # written by another Neovim since this one looked?
            if digest not in self._index:
                raise CheckpointGone(f"content {digest[:12]} is no longer in the checkpoint store "
                                     "(pruned: checkpoints.max_bytes, or removed)")
        where = self._index[digest]
        try:
            raw = self._read(where.pack, where.offset, where.length)
        except FileNotFoundError:
            with self._lock:
                self._forget_pack(where.pack)
            raise CheckpointGone(f"content {digest[:12]} is no longer in the checkpoint store (its pack was "
                                 "removed)") from None
        except OSError as exc:
            raise CheckpointCorrupt(f"content {digest[:12]} cannot be read: {exc.strerror or exc}") from None
        try:
            data = zlib.decompress(raw)
        except zlib.error:
            raise CheckpointCorrupt(f"content {digest[:12]} in the checkpoint store is corrupt") from None
        if digest_of(data) != digest:
            raise CheckpointCorrupt(f"content {digest[:12]} in the checkpoint store is corrupt (its hash differs)")
        return data

    def location(self, digest: str) -> tuple[Path, int, int] | None:
        """The pack file, offset and length of ``digest``'s compressed bytes (None: not held)."""
        if not self.known(digest):
            return None
        where = self._index[digest]
        return self.packs / where.pack, where.offset, where.length

    def _read(self, pack: str, offset: int, length: int) -> bytes:
        fd = os.open(self.packs / pack, _READ_FLAGS)
        with os.fdopen(fd, "rb") as handle:
            handle.seek(offset)
            return handle.read(length)

    def _write_pack(self, records: dict[str, bytes], durable: bool, *, moved: bool = False) -> None:
        """Write ``records`` (compressed contents by digest) as one new pack and index them (``moved``:
        they were in another pack, which is about to go)."""
        name = f"{time.time_ns():020d}-{secrets.token_hex(4)}.pack"
        parts: list[bytes] = []
        places: dict[str, _Where] = {}
        offset = 0
        for digest, packed in records.items():
            parts.append(f"{digest} {len(packed):016x}\n".encode("ascii"))
            places[digest] = _Where(name, offset + HEADER, len(packed))
            parts.append(packed)
            offset += HEADER + len(packed)
        self._write(self.packs / name, b"".join(parts), durable)
        with self._lock:
            self._indexed.add(name)
            for digest, where in places.items():
                if moved:
                    self._index[digest] = where
                else:
                    self._index.setdefault(digest, where)
        self._grew(offset)

    def _scan(self) -> None:
        """Index the packs not indexed yet (written by another Neovim, or before this one started)."""
        self._loaded = True
        try:
            names = sorted(e.name for e in os.scandir(self.packs) if e.name.endswith(".pack")
                           and not e.name.startswith(".") and e.is_file(follow_symlinks=False))
        except FileNotFoundError:
            return
        for name in names:
            if name not in self._indexed:
                self._indexed.add(name)
                for digest, where in _records(self.packs / name, name):
                    self._index.setdefault(digest, where)

    def _forget_pack(self, name: str) -> None:
        self._indexed.discard(name)
        for digest in [d for d, w in self._index.items() if w.pack == name]:
            del self._index[digest]
        self._scan()  # its contents may live on in a pack that replaced it

    # -- manifests -------------------------------------------------------------------

    def write_manifest(self, name: str, text: str, *, durable: bool = False) -> None:
        data = text.encode("utf-8")
        self._write(self._manifest(name), data, durable)
        self._grew(len(data))

    def _write(self, path: Path, data: bytes, durable: bool) -> None:
        _write_private(self.state_dir, path, data, durable)
        if not durable:
            with self._lock:
                self._unsynced.add(path)

    def sync(self) -> int:
        """Every pack and manifest written so far without fsync on disk, then the folders that name
        them; how many files it synced (one pruned or replaced meanwhile needs none)."""
        with self._lock:
            paths, self._unsynced = self._unsynced, set()
        synced = [path for path in sorted(paths) if _synced(path)]
        for folder in sorted({path.parent for path in synced}):
            sync_folder(folder)
        return len(synced)

    def _grew(self, size: int) -> None:
        if self.estimate is not None:
            self.estimate += size

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
        """Bytes the store holds (packs and manifests)."""
        return sum(size for size, _ in self._pack_stats().values()) + sum(self._manifest_sizes().values())

    def prune(self, max_bytes: int, now: float | None = None) -> list[str]:
        """Bring the store within ``max_bytes``: contents nobody names go first, then the oldest
        manifests and the contents only they named. Returns the manifests removed."""
        now = time.time() if now is None else now
        with self._lock:
            self._index, self._indexed = {}, set()  # another Neovim may have pruned or repacked
            self._scan()
            packs = self._pack_stats()
            sizes = self._manifest_sizes()
            refs = {name: self._refs(name) for name in sizes}
            count: Counter[str] = Counter(d for names in refs.values() for d in names)
            live = {pack: 0 for pack in packs}
            waiting: set[str] = set()
            """New packs with contents no manifest names yet: their manifest is being written."""
            for digest, where in self._index.items():
                if where.pack not in live:
                    continue
                if count[digest]:
                    live[where.pack] += HEADER + where.length
                elif now - packs[where.pack][1] <= GRACE:
                    waiting.add(where.pack)
            dropped: list[str] = []
            manifests = sum(sizes.values())
            for name in sorted(sizes):
                if sum(live.values()) + manifests <= max_bytes:
                    break
                self.remove_manifest(name)
                manifests -= sizes[name]
                dropped.append(name)
                for digest in refs[name]:
                    count[digest] -= 1
                    place = self._index.get(digest)
                    if count[digest] == 0 and place is not None and place.pack in live:
                        live[place.pack] -= HEADER + place.length
            total = manifests
            for pack, (size, _) in packs.items():
                spared = pack in waiting  # what no manifest names yet is not counted
                total += self._settle(pack, size, live[pack], spared, count) - (size - live[pack] if spared else 0)
            self.estimate = total
            return dropped

    def _settle(self, pack: str, size: int, live: int, spared: bool, count: Counter[str]) -> int:
        """Remove a dead pack, write a mostly dead one again with its live contents; its size now."""
        if spared:
            return size
        if live == 0:
            with contextlib.suppress(FileNotFoundError):
                (self.packs / pack).unlink()
            self._forget_pack(pack)
            return 0
        if live * 2 >= size:
            return size
        keep = {d: w for d, w in self._index.items() if w.pack == pack and count[d]}
        try:
            records = {d: self._read(pack, w.offset, w.length) for d, w in keep.items()}
        except OSError:
            return size
        self._write_pack(records, durable=True, moved=True)
        with contextlib.suppress(FileNotFoundError):
            (self.packs / pack).unlink()
        self._forget_pack(pack)
        return sum(HEADER + len(r) for r in records.values())

    def _refs(self, name: str) -> set[str]:
        try:
            return refs_of(self.read_manifest(name))
        except CheckpointError:
            return set()  # unreadable: it names nothing a rewind could use

    def _pack_stats(self) -> dict[str, tuple[int, float]]:
        found: dict[str, tuple[int, float]] = {}
        try:
            entries = list(os.scandir(self.packs))
        except FileNotFoundError:
            return found
        for entry in entries:
            if entry.name.endswith(".pack") and not entry.name.startswith(".") and entry.is_file(follow_symlinks=False):
                info = entry.stat(follow_symlinks=False)
                found[entry.name] = (info.st_size, info.st_mtime)
        return found

    def _manifest_sizes(self) -> dict[str, int]:
        sizes: dict[str, int] = {}
        for name in self.manifest_names():
            with contextlib.suppress(FileNotFoundError):
                sizes[name] = self._manifest(name).stat().st_size
        return sizes


def _records(path: Path, name: str) -> Iterator[tuple[str, _Where]]:
    """The records of a pack, by their headers (a pack cut short or not a pack yields what is whole)."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return
    with os.fdopen(fd, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        offset = 0
        while offset + HEADER <= size:
            handle.seek(offset)
            header = handle.read(HEADER)
            match = re.fullmatch(rb"([0-9a-f]{64}) ([0-9a-f]{16})\n", header)
            if match is None:
                return
            length = int(match.group(2), 16)
            if offset + HEADER + length > size:
                return
            yield match.group(1).decode("ascii"), _Where(name, offset + HEADER, length)
            offset += HEADER + length


def _write_private(base: Path, path: Path, data: bytes, durable: bool) -> None:
    """Write ``data`` to ``path`` atomically with mode 0600 (folders below ``base``: 0700)."""
    _private_folders(base, path.parent)
    write_private(path, data, durable=durable)


def _synced(path: Path) -> bool:
    try:
        sync_file(path)
    except FileNotFoundError:
        return False
    return True


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


def tag(text: str) -> str:
    """The short digest a manifest's name carries of its writer and of its ACP session."""
    return _digest_text(text)[:12]


def turn_manifest_name(writer: str, turn: int, session_id: str | None, now_ns: int | None = None) -> str:
    """A turn's manifest name: ``<time>-<writer tag>-turn-<n>-<session tag>.json``, so the turns of an
    ACP session, and those of a writer, are found by name (``history.py``)."""
    return manifest_name(writer, f"turn-{turn}-{tag(session_id or '')}", now_ns)
