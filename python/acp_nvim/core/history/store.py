"""Session records on disk: ``<state>/acp_nvim/history/<cwd>/<agent>/<id hash>.json``.

Every file is written atomically (a private temporary file, then a rename) with mode 0600, in
folders of mode 0700; texts pass through the session's redactor first. The store is bounded:
``max_sessions`` records per cwd (the least recently updated go), ``max_bytes`` per record.
The methods block on the disk: the async callers run them through ``asyncio.to_thread``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ..private_files import write_private
from .record import Entry, HistorySettings, SessionRecord

ROOT = ("acp_nvim", "history")
Redact = Callable[[str], str]


class HistoryStore:
    """Reads and writes the records under one state folder."""

    def __init__(self, state_dir: str, settings: HistorySettings) -> None:
        self.root = Path(state_dir, *ROOT)
        self.settings = settings

    def folder(self, cwd: str) -> Path:
        """The folder of one cwd: a readable name plus a hash (two cwds never share one)."""
        return self.root / f"{_slug(Path(cwd).name or 'root')}-{_digest(cwd)[:12]}"

    def path(self, cwd: str, agent: str, session_id: str) -> Path:
        return self.folder(cwd) / _agent_dir(agent) / f"{_digest(session_id)[:32]}.json"

    def save(self, record: SessionRecord, redact: Redact) -> None:
        """Write ``record`` (redacted, fitted to ``max_bytes``), then prune the cwd to ``max_sessions``."""
        clean = _redacted(record, redact)
        path = self.path(record.cwd, record.agent, record.session_id)
        _write_private(path, clean.to_json(self.settings.max_bytes))
        self.prune(record.cwd)

    def load(self, cwd: str, agent: str, session_id: str) -> SessionRecord | None:
        """The record of one session, or None (missing or unreadable)."""
        return _read(self.path(cwd, agent, session_id))

    def find(self, cwd: str, session_id: str) -> list[SessionRecord]:
        """The records of ``session_id`` in ``cwd`` (every agent's), without reading the others."""
        folder = self.folder(cwd)
        if not folder.is_dir():
            return []
        name = self.path(cwd, "", session_id).name
        found = [r for p in folder.glob(f"*/{name}") if (r := _read(p)) is not None
                 and r.cwd == cwd and r.session_id == session_id]
        return sorted(found, key=lambda r: r.updated, reverse=True)

    def find_newest(self, cwd: str, session_id: str, count: int) -> list[SessionRecord]:
        """As ``find``, with only the newest ``count`` entries of each record read (from the end of
        its file: a record of 10,000 turns opens in the time a page takes); ``older`` says how many
        more it holds (``load`` reads them all)."""
        folder = self.folder(cwd)
        if not folder.is_dir():
            return []
        name = self.path(cwd, "", session_id).name
        found = [r for p in folder.glob(f"*/{name}") if (r := _read_newest(p, count)) is not None
                 and r.cwd == cwd and r.session_id == session_id]
        return sorted(found, key=lambda r: r.updated, reverse=True)

    def records(self, cwd: str) -> list[SessionRecord]:
        """Every readable record of ``cwd``, most recently updated first (unreadable files are skipped)."""
        found = [r for p in self._files(cwd) if (r := _read(p)) is not None and r.cwd == cwd]
        return sorted(found, key=lambda r: r.updated, reverse=True)

    def recent(self, cwd: str, count: int) -> list[SessionRecord]:
        """The ``count`` most recently written readable records of ``cwd``, newest first (only those are
        read: a workspace's whole history is not, for a glance at it)."""
        found: list[SessionRecord] = []
        for path in sorted(self._files(cwd), key=_mtime, reverse=True):
            record = _read(path)
            if record is not None and record.cwd == cwd:
                found.append(record)
                if len(found) >= count:
                    break
        return sorted(found, key=lambda r: r.updated, reverse=True)

    def delete(self, cwd: str, agent: str, session_id: str) -> bool:
        """Remove one record; False when there was none."""
        try:
            self.path(cwd, agent, session_id).unlink()
        except FileNotFoundError:
            return False
        return True

    def prune(self, cwd: str) -> None:
        """Keep the ``max_sessions`` most recently written records of ``cwd``."""
        files = sorted(self._files(cwd), key=_mtime, reverse=True)
        for stale in files[self.settings.max_sessions:]:
            with contextlib.suppress(OSError):
                stale.unlink()

    def _files(self, cwd: str) -> list[Path]:
        folder = self.folder(cwd)
        return list(folder.glob("*/*.json")) if folder.is_dir() else []


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _agent_dir(agent: str) -> str:
    return f"{_slug(agent)}-{_digest(agent)[:8]}"


def _slug(text: str) -> str:
    return re.sub(r"[^\w.-]+", "-", text)[:40]


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _redacted(record: SessionRecord, redact: Redact) -> SessionRecord:
    return replace(record, title=redact(record.title), first_prompt=redact(record.first_prompt),
                   entries=[Entry(e.kind, redact(e.text), e.message_id) for e in record.entries])


def _read(path: Path) -> SessionRecord | None:
    try:
        return SessionRecord.from_json(path.read_bytes())
    except (OSError, ValueError, TypeError):
        return None


TAIL_BLOCK = 256 * 1024
"""Bytes read at a time from the end of a record for its newest entries."""


def _read_newest(path: Path, count: int) -> SessionRecord | None:
    """The record at ``path`` with only its newest ``count`` entries (a format 1 record whole)."""
    try:
        with path.open("rb") as file:
            head = file.readline()
            if b'"format":2' not in head and b'"format": 2' not in head:
                return SessionRecord.from_json(head + file.read())
            start = file.tell()
            end = file.seek(0, os.SEEK_END)
            tail, position = b"", end
            while position > start and tail.count(b"\n") <= count:
                step = min(TAIL_BLOCK, position - start)
                position -= step
                file.seek(position)
                tail = file.read(step) + tail
            lines = tail.split(b"\n")
            if position > start:
                lines = lines[1:]  # the first piece began mid-line
            lines = [line for line in lines if line.strip()][-count:] if count else []
            return SessionRecord.newest_of(head, lines)
    except (OSError, ValueError, TypeError):
        return None


def _write_private(path: Path, text: str) -> None:
    """Atomic write, mode 0600: a reader sees the old record or the new one, never half of one."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_private(path, text.encode("utf-8"))
