"""Local history of the sessions: each watched session's record is saved after every turn.

A session reopened from its record (``:Ai resume``) keeps the record's entries and adds its
new blocks after the ones that showed the history, so the record never holds a turn twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from .. import tasks
from ..connection.past import now
from ..history.record import ENTRY_KINDS, Entry, HistorySettings, SessionRecord
from ..history.store import HistoryStore
from ..port import EditorPort
from ..transcript.blocks import Block
from ..worktrees.settings import WorktreeSettings
from ..worktrees.worktree import session_folders
from .session import Session

SAVED_STATES = ("idle", "closed", "failed")
"""A turn is over (or the session is): the moments a record is written."""
USER_HEADING = "## You\n"
NOTICES = ("notice", "info", "error")
"""Trailing notices are not saved alone: "agent exited" as Neovim quits is no part of the conversation."""
FIRST_PROMPT_CHARS = 500
READ_FACTOR = 2
ENTRY_OVERHEAD = 8
"""Reading a record's entries stops at READ_FACTOR x ``history.max_bytes`` of text: an entry's JSON
is at least its length, so older ones could not fit (the slack covers what redaction shortens)."""


@dataclass(slots=True)
class _Watched:
    created: float
    prefix: list[Entry] = field(default_factory=list)
    shown: int = 0
    """The last transcript block that showed the history (by id; those are not recorded again)."""
    loading: bool = False
    """The prefix's older entries are still being read (``prefix_loaded``): nothing is saved meanwhile,
    a save would cut them off."""
    title: str = ""
    """The record's title until the agent sends one."""
    saved: tuple[object, ...] = ()
    saving: asyncio.Task[None] | None = None
    again: bool = False


class Recorder:
    """Keeps the records of the sessions it watches; lists, loads and deletes records of a cwd."""

    def __init__(self, editor: EditorPort, settings: Callable[[], HistorySettings],
                 report: tasks.ErrorReporter, worktrees: Callable[[], WorktreeSettings] | None = None) -> None:
        self._editor = editor
        self._settings = settings
        self._report = report
        self._worktrees = worktrees
        """Where the sessions of ``--worktree`` worked: their records are a cwd's too (None: only the cwd's)."""
        self._watched: dict[str, _Watched] = {}

    async def store(self) -> HistoryStore | None:
        """The store (None when ``history = false`` or the editor keeps no state)."""
        settings = self._settings()
        if not settings.enabled:
            return None
        state_dir = await self._editor.state_dir()
        return HistoryStore(state_dir, settings) if state_dir else None

    def watch(self, session: Session, created: float | None = None, prefix: list[Entry] | None = None,
              title: str = "", loading: bool = False) -> None:
        """Record ``session`` from now on; a reopened one keeps its ``created`` time and the entries
        (``prefix``) its chat shows now, which are not recorded a second time. ``loading``: the
        prefix's older entries come later (``prefix_loaded``); nothing is saved until then."""
        blocks = session.transcript.blocks
        self._watched[session.key] = _Watched(created=created or now(), prefix=list(prefix or []),
                                              shown=blocks[-1].id if blocks else 0, title=title, loading=loading)
        session.watchers.append(lambda: self._changed(session))

    def prefix_loaded(self, session: Session, older: list[Entry]) -> None:
        """The older entries of a reopened record were read: they go before the prefix, and saving
        resumes (what changed meanwhile is saved now)."""
        watched = self._watched.get(session.key)
        if watched is None:
            return
        watched.prefix[0:0] = older
        watched.loading = False
        self._changed(session)

    def _changed(self, session: Session) -> None:
        watched = self._watched.get(session.key)
        if watched is None or watched.loading or session.state not in SAVED_STATES or session.session_id is None:
            return
        mark = _mark(session)
        if mark == watched.saved or not any(b.kind == "user" for b in session.transcript.blocks):
            return
        if watched.saving is not None and not watched.saving.done():
            watched.again = True
            return
        watched.saved = mark
        watched.saving = tasks.spawn(self._save(session, watched), self._report, f"{session.key} history")

    async def _save(self, session: Session, watched: _Watched) -> None:
        store = await self.store()
        if store is not None:
            record = self.record_of(session, watched)
            await asyncio.to_thread(store.save, record, session.redact)
        if watched.again:
            watched.again = False
            watched.saving = None
            self._changed(session)

    def record_of(self, session: Session, watched: _Watched) -> SessionRecord:
        """The session's record: only its newest entries that can fit ``history.max_bytes`` are
        read (a long session's blocks are not all decompressed and copied to be cut after)."""
        blocks = [b for b in _content(session) if b.id > watched.shown and b.kind in ENTRY_KINDS]
        budget = READ_FACTOR * self._settings().max_bytes
        newest: list[Entry] = []
        for block in reversed(blocks):
            budget -= block.size() + ENTRY_OVERHEAD
            if budget < 0:
                break
            newest.append(Entry(block.kind, session.transcript.entry_text(block), block.message_id))
        skipped = len(blocks) - len(newest)
        older = watched.prefix if not skipped else []
        entries = [*older, *reversed(newest)]
        first = first_prompt([*watched.prefix, *_first_user(blocks)])
        return SessionRecord(agent=session.agent_name, cwd=session.cwd, session_id=session.session_id or "",
                             created=watched.created, updated=now(), title=_title(session, watched),
                             first_prompt=first, entries=entries,
                             dropped=skipped + (len(watched.prefix) if skipped else 0))

    async def folders(self, cwd: str) -> list[str]:
        """``cwd`` and the folders of its repository's session worktrees (|acp_nvim-worktrees|): a session
        that ran in a worktree is found from the main folder too."""
        if self._worktrees is None:
            return [cwd]
        return [cwd, *(f for f in await session_folders(cwd, self._worktrees()) if f != cwd)]

    async def records(self, cwd: str) -> list[SessionRecord]:
        """The records of ``cwd`` and of its session worktrees, most recently updated first."""
        store = await self.store()
        if store is None:
            return []
        folders = await self.folders(cwd)
        found = await asyncio.to_thread(lambda: [r for folder in folders for r in store.records(folder)])
        return sorted(found, key=lambda r: r.updated, reverse=True)

    async def recent(self, cwd: str, count: int) -> list[SessionRecord]:
        """The ``count`` newest records of ``cwd`` and its session worktrees (the board's past sessions)."""
        store = await self.store()
        if store is None:
            return []
        folders = await self.folders(cwd)
        found = await asyncio.to_thread(lambda: [r for folder in folders for r in store.recent(folder, count)])
        return sorted(found, key=lambda r: r.updated, reverse=True)[:count]

    async def find(self, cwd: str, session_id: str, newest: int | None = None) -> list[SessionRecord]:
        """The records of ``session_id`` in ``cwd``, else in one of its session worktrees (one per agent
        that kept it), read alone; with
        ``newest``, only that many of their newest entries (``older`` counts the rest)."""
        store = await self.store()
        if store is None:
            return []
        for folder in await self.folders(cwd):
            if newest is None:
                found = await asyncio.to_thread(store.find, folder, session_id)
            else:
                found = await asyncio.to_thread(store.find_newest, folder, session_id, newest)
            if found:
                return found
        return []

    async def load(self, cwd: str, agent: str, session_id: str) -> SessionRecord | None:
        """One record whole (None: gone or unreadable)."""
        store = await self.store()
        return await asyncio.to_thread(store.load, cwd, agent, session_id) if store is not None else None

    async def delete(self, cwd: str, agent: str, session_id: str) -> bool:
        store = await self.store()
        return await asyncio.to_thread(store.delete, cwd, agent, session_id) if store is not None else False


def first_prompt(entries: list[Entry]) -> str:
    """The text of the first user entry (its heading removed)."""
    for entry in entries:
        if entry.kind == "user":
            return entry.text.removeprefix(USER_HEADING)[:FIRST_PROMPT_CHARS]
    return ""


def _first_user(blocks: list[Block]) -> list[Entry]:
    """The first user block as an entry (none when there is none)."""
    return next(([Entry(b.kind, b.text(), b.message_id)] for b in blocks if b.kind == "user"), [])


def _content(session: Session) -> list[Block]:
    """The transcript's blocks without the notices at its end."""
    blocks = session.transcript.blocks
    end = len(blocks)
    while end and blocks[end - 1].kind in NOTICES:
        end -= 1
    return blocks[:end]


def _mark(session: Session) -> tuple[object, ...]:
    """Changes when there is something new to write."""
    blocks = _content(session)
    last = blocks[-1] if blocks else None
    return (len(blocks), last.size() if last else 0, session.details.title, session.session_id)


def _title(session: Session, watched: _Watched) -> str:
    """The agent's title; the record's own only while the agent sent none ("": the agent cleared it)."""
    title = session.details.title
    return title if title is not None else watched.title
