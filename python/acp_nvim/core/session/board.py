"""The board's data (``:Ai board``): every session of this editor as one row, and the past ones of
the workspace from the local history.

A row is what a person running several agents needs at a glance: which agent, what it works on,
whether it waits for them (and on what), how long its turn runs, when it last spoke, what it cost,
which files it changed and on which branch. ``Book`` is the manager's memory of each session that
the session itself does not keep: the order it was made in, every file it changed (all turns, not
just the changelog's last ones) and its worktree.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..files.changes import FileChange
from ..history.record import SessionRecord
from ..questions import PERMISSION, QUESTION, REVIEW, THREE_WAY, Questions
from ..worktrees.worktree import Worktree
from .session import Session
from .view import SessionView

WAITING_WORDS = {REVIEW: "review", PERMISSION: "prompt", QUESTION: "question", THREE_WAY: "conflict"}
"""What a session waits on, as the board says it (a three-way view: the agent's write against your edits)."""
MAX_FILES = 1000
"""Changed files remembered per session (the first ones are kept: the count goes on)."""
FILES_SHOWN = 3
"""Changed files a row names (the count says how many in all)."""
PAST = "past"


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the board."""

    key: str
    """The session key, or the ACP session id of a past session."""
    agent: str
    state: str
    """starting, idle, running, waiting, failed, closed, or ``past``."""
    title: str = ""
    waiting: tuple[str, ...] = ()
    """What waits for the user: review, prompt, question, conflict."""
    queued: int = 0
    failure: str = ""
    """Why it failed: the failed prompt's class (usage limit, login, …) or why the agent stopped."""
    turn_started: float | None = None
    """When the running turn began (epoch seconds)."""
    activity: float | None = None
    """When the agent last wrote to us (epoch seconds)."""
    tokens: str = ""
    limits: str = ""
    """The usage meter (``SessionView.limits``)."""
    files: tuple[str, ...] = ()
    """The first files it changed (``FILES_SHOWN`` at most), as paths are shown."""
    changed: int = 0
    """Files changed in all."""
    branch: str = ""
    order: int = 0
    session_id: str = ""
    current: bool = False
    subagents: tuple[str, ...] = ()
    """A line per subagent still running (``subagents.board_lines``), drawn under the row."""

    def as_table(self) -> dict[str, object]:
        """The row as Lua reads it (``lua/acp_nvim/board/init.lua``)."""
        return {"key": self.key, "agent": self.agent, "state": self.state, "title": self.title,
                "waiting": list(self.waiting), "queued": self.queued, "failure": self.failure,
                "turn_started": self.turn_started or False, "activity": self.activity or False,
                "tokens": self.tokens, "limits": self.limits, "files": list(self.files), "changed": self.changed,
                "branch": self.branch,
                "order": self.order, "session_id": self.session_id, "current": self.current,
                "subagents": list(self.subagents)}


@dataclass(slots=True)
class Entry:
    """What the book keeps of one session."""

    order: int
    worktree: Worktree | None = None
    files: dict[str, None] = field(default_factory=dict)
    changed: int = 0

    def note(self, _turn: int, change: FileChange) -> None:
        if change.path in self.files:
            return
        self.changed += 1
        if len(self.files) < MAX_FILES:
            self.files[change.path] = None


class Book:
    """The manager's part that remembers, per session, what its row shows besides the session's view."""

    def __init__(self) -> None:
        self.entries: dict[str, Entry] = {}
        self._next = 0

    def watch(self, session: Session, worktree: Worktree | None = None) -> None:
        """Follow ``session`` from its creation: its order, its changed files, its worktree."""
        self._next += 1
        entry = self.entries[session.key] = Entry(self._next, worktree)
        session.files.changes.listeners.append(entry.note)

    def forget(self, key: str) -> None:
        self.entries.pop(key, None)

    def worktree(self, key: str) -> Worktree | None:
        entry = self.entries.get(key)
        return entry.worktree if entry is not None else None

    def order(self, key: str) -> int:
        entry = self.entries.get(key)
        return entry.order if entry is not None else 0

    def row(self, session: Session, questions: Questions, current: bool = False) -> Row:
        """``session`` as the board shows it now."""
        view, entry = session.view, self.entries.get(session.key) or Entry(0)
        waiting = waiting_on(session.key, questions)
        turn = session.queue.turn
        state = "waiting" if waiting and not view.ended else view.state
        shown = tuple(session.transcript.paths.show(path) for path in list(entry.files)[:FILES_SHOWN])
        return Row(key=session.key, agent=session.agent_name, state=state, title=view.title or "",
                   waiting=waiting, queued=len(view.queued), failure=failure_of(view),
                   turn_started=_epoch(turn.started) if turn is not None and view.state in ("running", "waiting")
                   else None, activity=_epoch(session.process.last_heard) if session.process.process else None,
                   tokens=view.tokens, limits=view.limits, files=shown, changed=entry.changed,
                   branch=entry.worktree.branch if entry.worktree else "", order=entry.order,
                   session_id=session.session_id or "", current=current,
                   subagents=session.transcript.tools.subagent_board_lines())


def waiting_on(key: str, questions: Questions) -> tuple[str, ...]:
    """What session ``key`` waits on now: its questions shown and not answered, in words."""
    return tuple(dict.fromkeys(WAITING_WORDS[t.view] for t in questions.of_owner(key)
                               if t.waiting and t.view in WAITING_WORDS))


def failure_of(view: SessionView) -> str:
    """Why it failed: its failed prompt's class (usage limit, connection lost, …) and, when no agent runs,
    why it stopped ('' when nothing failed)."""
    failure = view.failure
    failed = str(failure.get("title") or failure.get("kind") or "") if failure else ""
    if failed and view.recovery and view.state == "failed":
        return f"{failed} ({view.recovery})"
    return failed or view.recovery


def rows(sessions: Mapping[str, Session], book: Book, questions: Questions, current: str | None) -> list[Row]:
    """Every open session's row, in the order they were made."""
    found = [book.row(s, questions, s.key == current) for s in sessions.values()]
    return sorted(found, key=lambda row: row.order)


def past_rows(records: list[SessionRecord], open_ids: set[str], limit: int) -> list[Row]:
    """The newest ``limit`` records of the workspace that are not open now, newest first."""
    found = []
    for record in records:
        if record.session_id in open_ids:
            continue
        title = record.title or record.first_prompt.split("\n", 1)[0]
        found.append(Row(key=record.session_id, agent=record.agent, state=PAST, title=title,
                         activity=record.updated, session_id=record.session_id))
        if len(found) >= limit:
            break
    return found


def _epoch(monotonic: float) -> float:
    """A ``time.monotonic()`` stamp as epoch seconds (what Lua's clock can subtract from)."""
    return time.time() - (time.monotonic() - monotonic)
