"""Files' contents kept in a session's checkpoint store: read from the disk (a scan's files, each
file after a turn) or given as texts (a file's first change), each as a reference (``model.Ref``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from acp import RequestError

from ..files.opener import NOT_FOUND, Opener
from .model import ABSENT_REF, KEPT, TOO_LARGE, UNKNOWN_REF, UNREADABLE, Ref
from .scan import Scan, scan
from .settings import CheckpointSettings
from .store import CheckpointStore

Put = Callable[[bytes], str]
"""Keeps a content in the store (within a batch); its digest."""


class ContentKeeper:
    """Reads files through the session's opener and keeps their contents (at most ``max_file_bytes``
    each); remembers what a scan kept, so an unchanged file is not read again."""

    def __init__(self, opener: Opener, settings: CheckpointSettings) -> None:
        self._opener = opener
        self.settings = settings
        self._index: dict[str, tuple[tuple[int, int, int, int], Ref]] = {}
        """Scans' contents by path: the stamp they were read at and their reference."""

    def scan_and_keep(self, store: CheckpointStore, roots: list[Path], limit: int) -> tuple[Scan, dict[str, Ref]]:
        """Scan the roots and keep every file's content (those kept at the same stamp before are not read again)."""
        found = scan(roots, limit)
        refs: dict[str, Ref] = {}
        self._index = {p: self._index[p] for p in found.files if p in self._index}  # only files still there
        with store.batch() as batch:
            for path, stamp in list(found.files.items()):
                known = self._index.get(path)
                if known is not None and known[0] == stamp and (
                        not known[1].kept or store.known(known[1].digest, batch.touched)):
                    refs[path] = known[1]
                    continue
                ref, read_stamp = self.read_and_keep(batch.put, path, stamp[1])
                if read_stamp is not None:
                    found.files[path] = stamp = read_stamp  # what was read is what a later scan compares with
                refs[path] = ref
                self._index[path] = (stamp, ref)
        return found, refs

    def read_and_keep(self, put: Put, path: str, size: int
                      ) -> tuple[Ref, tuple[int, int, int, int] | None]:
        cap = self.settings.max_file_bytes
        if size > cap:
            return Ref(TOO_LARGE, size=size), None
        try:
            data, stamp = self._opener.read_bytes(Path(path), cap)
        except RequestError as exc:
            if "too large" in str(exc):
                return Ref(TOO_LARGE, size=size or _size_of(path)), None
            return (ABSENT_REF if exc.code == NOT_FOUND else Ref(UNREADABLE)), None
        except OSError:
            return Ref(UNREADABLE), None
        return Ref(KEPT, put(data), len(data)), stamp

    def read_all(self, store: CheckpointStore, paths: list[str]) -> list[Ref]:
        with store.batch() as batch:
            return [self.read_and_keep(batch.put, path, 0)[0] for path in paths]


def _size_of(path: str) -> int:
    try:
        return Path(path).stat().st_size
    except OSError:
        return 0


def keep_texts(store: CheckpointStore, texts: list[tuple[bool, str | None]], cap: int) -> list[Ref]:
    """Texts as references, their new contents in one pack."""
    with store.batch() as batch:
        return [_keep_text(batch.put, known, text, cap) for known, text in texts]


def _keep_text(put: Put, known: bool, text: str | None, cap: int) -> Ref:
    """A text as a reference: kept (bytes up to ``cap``), absent, unknown or too large."""
    if not known:
        return UNKNOWN_REF
    if text is None:
        return ABSENT_REF
    data = text.encode("utf-8", "surrogatepass")
    if len(data) > cap:
        return Ref(TOO_LARGE, size=len(data))
    return Ref(KEPT, put(data), len(data))
