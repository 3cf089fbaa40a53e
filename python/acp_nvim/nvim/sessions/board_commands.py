"""``:Ai board``: every session in one live buffer (``lua/acp_nvim/board/init.lua`` draws it), and each
session's part of the state Lua keeps for ``:Ai next`` and the notices.

``BoardFeed`` sends the rows while the board is open: after a session's state changes (at most
every ``INTERVAL``), and once a second while a session starts or runs a turn (its last activity
and tokens move without a state change). Only rows that changed are sent; the board buffer is
redrawn in place.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ...core.session.board import Row, failure_of, past_rows, rows, waiting_on
from ...core.session.manager import SessionManager
from ...core.session.session import Session
from ...core.session.view import SessionView
from ..commands.command_context import CommandContext, CommandRequest

INTERVAL = 0.25
"""Seconds between two updates of the board, at the most often."""
HEARTBEAT = 1.0
"""While a session starts or runs: seconds between updates without a state change."""
PAST_LIMIT = 20
"""Past sessions of the workspace shown below the open ones."""
BUSY = frozenset({"starting", "running", "waiting"})


def cmd_board(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai board``: open the board (or go to it), filled with every session; past ones follow."""
    feed = ctx.service(BoardFeed)
    feed.show(ctx, request.cwd or ctx.nvim.funcs.getcwd())


def describe_board(manager: SessionManager, session: Session, view: SessionView) -> dict[str, Any]:
    """A session's part of the state Lua keeps (``acp_nvim.state``) for ``:Ai next`` and the notices:
    what it waits on, when it was made, its branch, why it failed."""
    tree = manager.book.worktree(session.key)
    return {"waiting": list(waiting_on(session.key, manager.questions)), "order": manager.book.order(session.key),
            "branch": tree.branch if tree is not None else "", "failed": failure_of(view)}


class BoardFeed:
    """Sends the board's rows to Lua while it is open (a service of the command context)."""

    def __init__(self) -> None:
        self._ctx: CommandContext | None = None
        self.open = False
        self._cwd = ""
        self._sent: dict[str, dict[str, object]] = {}
        self._handle: asyncio.TimerHandle | None = None
        self._last = float("-inf")
        self.updates = 0
        """Updates sent (the benchmark and the tests read it)."""

    def show(self, ctx: CommandContext, cwd: str) -> None:
        """Open the board with every open session now (greenlet context); the past ones follow."""
        if self._ctx is None:
            self._ctx = ctx
            ctx.editor.watchers.append(self.changed)
        self.open, self._cwd = True, cwd
        current = self._rows()
        self._sent = {row.key: row.as_table() for row in current}
        self._last = time.monotonic()
        ctx.nvim.exec_lua("require('acp_nvim.board').open(...)", [row.as_table() for row in current])
        ctx.spawn(self._past(), "the board's past sessions")
        self._schedule(HEARTBEAT if self._busy(current) else None)

    def closed(self) -> None:
        """The board's buffer is gone: nothing more is sent until it opens again."""
        self.open = False
        self._sent = {}
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def changed(self, key: str) -> None:
        """A session's state changed (the editor's watcher)."""
        if self.open:
            self._schedule(0.0)

    def _schedule(self, after: float | None) -> None:
        """An update ``after`` seconds from now (but not sooner than ``INTERVAL`` after the last one); an
        update already due earlier stands, a later one (the heartbeat) is brought forward."""
        if after is None:
            return
        loop = asyncio.get_running_loop()
        due = loop.time() + max(after, self._last + INTERVAL - time.monotonic(), 0.0)
        if self._handle is not None:
            if self._handle.when() <= due:
                return
            self._handle.cancel()
        self._handle = loop.call_at(due, self._tick)

    def _tick(self) -> None:
        self._handle = None
        if not self.open or self._ctx is None:
            return
        self._last = time.monotonic()
        current = self._rows()
        tables = {row.key: row.as_table() for row in current}
        changed = [table for key, table in tables.items() if self._sent.get(key) != table]
        removed = [key for key in self._sent if key not in tables]
        self._sent = tables
        if changed or removed:
            self.updates += 1
            self._ctx.bridge.lua_async("require('acp_nvim.board').update(...)", changed, removed)
        if removed:
            self._ctx.spawn(self._past(), "the board's past sessions")
        self._schedule(HEARTBEAT if self._busy(current) else None)

    def _rows(self) -> list[Row]:
        assert self._ctx is not None
        manager = self._ctx.manager
        return rows(manager.sessions, manager.book, manager.questions, manager.current_key)

    @staticmethod
    def _busy(current: list[Row]) -> bool:
        return any(row.state in BUSY for row in current)

    async def _past(self) -> None:
        assert self._ctx is not None
        ctx = self._ctx
        open_ids = {s.session_id for s in ctx.manager.sessions.values() if s.session_id}
        records = await ctx.recorder.recent(self._cwd, PAST_LIMIT + len(open_ids))
        if self.open:
            past = [row.as_table() for row in past_rows(records, open_ids, PAST_LIMIT)]
            ctx.bridge.lua_async("require('acp_nvim.board').set_past(...)", past)
