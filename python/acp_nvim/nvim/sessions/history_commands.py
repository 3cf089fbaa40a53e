"""``:Ai resume``, ``fork`` and ``delete``: past sessions of this cwd, from every agent and the
local history (``core/connection/past.py``, ``recording.py``), reopened in a new chat."""

from __future__ import annotations

import asyncio
import os
from datetime import datetime

from ...core.agent.process import AgentProcess
from ...core.connection import capabilities, past
from ...core.connection.past import PastSession
from ...core.errors import AcpNvimError
from ...core.history.record import Entry, SessionRecord
from ...core.session.session import Session
from ...core.transcript.restore import restore_many, restore_older
from ...core.worktrees import worktree as trees
from ...core.worktrees.worktree import Worktree
from ..commands.command_context import CommandContext, CommandRequest

HISTORY_START = "── earlier conversation{when} ──"
NEWEST_FIRST = 400
"""Entries of a local record read before its chat opens; the older ones are read after (a record of
10,000 turns opens in the time a page takes)."""
HISTORY_END = "── end of the earlier conversation ──"


def cmd_resume(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai resume [last|{session-id}]``: reopen a past session of this cwd (a picker without argument)."""
    which = request.args[0] if request.args else None
    cwd = request.cwd or ctx.nvim.funcs.getcwd()
    ctx.spawn(_resume(ctx, which, cwd), "resume")


def cmd_fork(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai fork``: the current session forked (``session/fork``) into a new chat."""
    source = ctx.require_current()
    view = source.view
    if source.session_id is None or view.ended:
        raise AcpNvimError(f"{source.key} is {view.state}: nothing to fork")
    if not capabilities.offers(view.info, "fork"):
        raise AcpNvimError(f"agent {source.agent_name!r} does not offer session/fork")
    session = ctx.create(source.agent_name, source.cwd)
    entries = [Entry(b.kind, b.text()) for b in source.transcript.blocks]
    _show_history(session, entries, f" (forked from {source.key})")
    ctx.recorder.watch(session, prefix=entries)
    ctx.open_chat(session)
    ctx.spawn(_start_fork(ctx, session, source.session_id), f"fork {source.key}")


def cmd_delete(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai delete [{session-id}]``: forget a past session, in the agent where it offers it and locally."""
    which = request.args[0] if request.args else None
    cwd = request.cwd or ctx.nvim.funcs.getcwd()
    ctx.spawn(_delete(ctx, which, cwd), "delete")


# -- finding past sessions -----------------------------------------------------------

async def _past(ctx: CommandContext, cwd: str, agents: list[str]) -> list[PastSession]:
    """This cwd's past sessions of ``agents``: the local records merged with each agent's list."""
    records = [r for r in await ctx.recorder.records(cwd) if r.agent in agents]
    results = await asyncio.gather(*(_listing(ctx, name, cwd) for name in agents))
    listings = {name: listing for name, listing in zip(agents, results, strict=True) if listing is not None}
    items = past.merge(records, {name: listing.sessions for name, listing in listings.items()})
    past.mark_read_only(items, listings)
    return items


async def _listing(ctx: CommandContext, name: str, cwd: str) -> past.Listing | None:
    spec = ctx.manager.settings.all_agents()[name]
    try:
        return await past.listing_by(name, spec, cwd, _live_process(ctx, name), ctx.manager.settings)
    except Exception as exc:  # one agent that cannot start must not hide the others' sessions
        ctx.notify(f"{name}: cannot list its sessions: {exc or type(exc).__name__}", "warn")
        return None


def _live_process(ctx: CommandContext, agent: str) -> AgentProcess | None:
    """A running process of ``agent``: the current session's first (its log is the one the user reads)."""
    sessions = [s for s in [ctx.current(), *ctx.manager.sessions.values()] if s is not None]
    live = [s for s in sessions if s.agent_name == agent and not s.view.ended and s.process.alive]
    return live[0].process if live else None


async def _pick(ctx: CommandContext, which: str | None, cwd: str, verb: str) -> PastSession | None:
    """The past session ``which`` names (``last``, an id) or the one the user picks."""
    settings = ctx.manager.settings
    agents = [settings.default_agent] if which == "last" else list(settings.all_agents())
    if verb == "resume" and which not in (None, "last"):  # a locally known id: no agent started to list
        local = past.merge(await ctx.recorder.find(cwd, which, newest=NEWEST_FIRST), {})
        if local and local[0].agent in agents:
            return local[0]
    items = await _past(ctx, cwd, agents)
    if which == "last":
        if not items:
            raise AcpNvimError(f"no past session of {settings.default_agent} in {cwd}")
        return items[0]
    if which is not None:
        found = [item for item in items if item.session_id == which]
        if not found:
            raise AcpNvimError(f"no past session {which!r} in {cwd} (see :Ai resume)")
        return found[0]
    if not items:
        raise AcpNvimError(f"no past sessions in {cwd}")
    labels = [label + _elsewhere(item, cwd) for label, item in zip(past.labels(items), items, strict=True)]
    index = await ctx.editor.choose(f"{verb} a past session", labels)
    return items[index] if index is not None else None


# -- resume --------------------------------------------------------------------------

async def _resume(ctx: CommandContext, which: str | None, cwd: str) -> None:
    item = await _pick(ctx, which, cwd, "resume")
    if item is None:
        return
    open_now = _open_session_of(ctx, item)
    if open_now is not None:
        ctx.make_current(open_now.key)
        await ctx.bridge.call(lambda _: ctx.open_chat(open_now))
        return
    where = item.record.cwd if item.record is not None and os.path.isdir(item.record.cwd) else cwd
    worktree = await trees.at(where, ctx.manager.settings.worktrees) if where != cwd else None
    session = await ctx.bridge.call(lambda _: _reopened_chat(ctx, item, where, worktree))
    try:
        if item.record is None:  # the agent's replay: its newest blocks drawn once it is there
            with session.chat.quiet():
                how = await session.start_past(item.session_id, replay=True)
        else:
            how = await session.start_past(item.session_id, replay=False)
    except AcpNvimError as exc:
        ctx.notify(str(exc), "error")
        return
    _tell_how(session, item, how)
    if item.record is None:  # the agent's replay may go on after its answer (Gemini CLI)
        session.before_next_prompt(lambda: session.transcript.notice(HISTORY_END, "info"))


def _open_session_of(ctx: CommandContext, item: PastSession) -> Session | None:
    return next((s for s in ctx.manager.sessions.values()
                 if s.session_id == item.session_id and s.agent_name == item.agent and not s.view.ended), None)


def _reopened_chat(ctx: CommandContext, item: PastSession, cwd: str, worktree: Worktree | None = None) -> Session:
    """A new session for ``item`` whose chat shows the local record's turns once (greenlet context), in
    the folder it ran in (a session worktree's, found from the main folder)."""
    session = ctx.create(item.agent, cwd, worktree)
    record = item.record
    when = datetime.fromtimestamp(item.updated).strftime(" (%Y-%m-%d %H:%M)") if item.updated else ""
    if record is not None:
        _show_history(session, record.entries, when, record.dropped, record.older)
        ctx.recorder.watch(session, created=record.created, prefix=record.entries, title=record.title,
                           loading=record.older > 0)
        if record.older:
            ctx.spawn(_older_entries(ctx, session, record), f"{session.key} history")
    else:
        session.transcript.notice(HISTORY_START.format(when=when), "info")
        ctx.recorder.watch(session, created=None, prefix=[])
    ctx.open_chat(session)
    return session


def _elsewhere(item: PastSession, cwd: str) -> str:
    """Where a past session ran when not in ``cwd`` (a session worktree): `` · ⎇ {its folder}``."""
    ran = item.record.cwd if item.record is not None else cwd
    return f" · ⎇ {os.path.basename(ran)}" if ran != cwd else ""


def _show_history(session: Session, entries: list[Entry], when: str, dropped: int = 0, older: int = 0) -> None:
    """The earlier conversation in the chat: its newest blocks drawn, the rest as the user scrolls up
    (``older`` entries of it are read after: ``_older_entries``)."""
    transcript = session.transcript
    with session.chat.quiet():
        transcript.notice(HISTORY_START.format(when=when), "info")
        if dropped:
            transcript.notice(f"({dropped} older blocks were not kept: history.max_bytes)", "info")
        restore_many(transcript, [(entry.kind, entry.text, entry.message_id) for entry in entries], older)
        transcript.notice(HISTORY_END, "info")


async def _older_entries(ctx: CommandContext, session: Session, newest: SessionRecord) -> None:
    """Read the whole record of a reopened session and put its older entries in place."""
    record = await ctx.recorder.load(newest.cwd, newest.agent, newest.session_id)
    if record is None or len(record.entries) < newest.older:
        session.log.add("warn", "lifecycle", "the older entries of the local history could not be read: "
                        "this session's record is not saved again (it would lose them)")
        return
    older = record.entries[:len(record.entries) - len(newest.entries)][-newest.older:]
    restore_older(session.transcript, [(entry.kind, entry.text, entry.message_id) for entry in older])
    ctx.recorder.prefix_loaded(session, older)


def _tell_how(session: Session, item: PastSession, how: str) -> None:
    if how in ("resumed", "loaded"):
        session.transcript.notice(f"session {item.session_id} {how}: new prompts continue it", "info")
        return
    shown = "the local history above" if item.record is not None else "nothing kept locally"
    session.transcript.notice(f"read-only: the agent cannot continue session {item.session_id} ({how}); "
                              f"{shown}. :Ai new starts a new session", "error")


async def _start_fork(ctx: CommandContext, session: Session, source_id: str) -> None:
    try:
        await session.start_fork(source_id)
    except AcpNvimError as exc:
        ctx.notify(str(exc), "error")
        return
    session.transcript.notice(f"forked {source_id} into {session.session_id}", "info")


# -- delete --------------------------------------------------------------------------

async def _delete(ctx: CommandContext, which: str | None, cwd: str) -> None:
    item = await _pick(ctx, which, cwd, "delete")
    if item is None:
        return
    where = []
    agent_deleted = item.listed and await _agent_deletes(ctx, item, cwd)
    if agent_deleted:
        where.append(f"agent {item.agent}")
    if await ctx.recorder.delete(cwd, item.agent, item.session_id):
        where.append("local history")
    kept = f"; agent {item.agent} offers no session/delete: it still lists the session" \
        if item.listed and not agent_deleted else ""
    ctx.notify(f"deleted session {item.session_id} from {' and '.join(where) or 'nowhere'}{kept}")


async def _agent_deletes(ctx: CommandContext, item: PastSession, cwd: str) -> bool:
    spec = ctx.manager.settings.all_agents()[item.agent]

    async def ask(process: AgentProcess) -> bool:
        if process.conn is None or not capabilities.offers(process.info, "delete"):
            return False
        await past.delete_session(process, item.session_id)
        return True
    return await past.with_agent(item.agent, spec, cwd, _live_process(ctx, item.agent), ask,
                                 ctx.manager.settings)
