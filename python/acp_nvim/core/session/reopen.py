"""Opening a past session on a fresh agent process (``:Ai resume``, ``:Ai fork``), and
``session/close`` before the process stops (``:Ai close``).

Reopening tries ``session/resume`` where the agent offers it, then ``session/load``; when
neither is offered or both fail, the session can only be read (the local transcript).
"""

from __future__ import annotations

import asyncio
import contextlib

from acp import RequestError
from acp.helpers import SessionUpdate
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    NewSessionResponse,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from .link import AgentLink, Attached, Replaying
from .past import extra_dirs, offers

REPLAYED = (UserMessageChunk, AgentMessageChunk, AgentThoughtChunk, ToolCallStart, ToolCallProgress, AgentPlanUpdate)


def replayed(update: SessionUpdate) -> bool:
    """Whether ``update`` is part of a conversation an agent replays (load, fork); commands, modes,
    titles and usage are not, and pass while a replay is held."""
    return isinstance(update, REPLAYED)

CLOSE_TIMEOUT = 3.0
"""``session/close`` must not hold up ``:Ai close`` when the agent does not answer."""


class Reopened:
    """How a past session was reopened: the response (None: read-only) and what to tell the user.

    ``replay_held``: the agent's replay of a load is being dropped, and stays dropped until the
    next prompt (agents may replay after they answer: Gemini CLI streams it unawaited). ``hold``
    (the session's) drops the conversation's updates (``replayed``) while it is on.
    """

    def __init__(self, response: Attached | None, how: str, replay_held: bool = False) -> None:
        self.response = response
        self.how = how
        self.replay_held = replay_held


async def open_past(link: AgentLink, session_id: str, roots: list[str], replay: bool,
                    hold: Replaying) -> Reopened:
    """Start ``link``'s process and reopen ``session_id`` on it. ``replay``: nothing is kept locally, so
    ``session/load`` (whose replay the chat shows) goes before ``session/resume`` (which shows nothing)."""
    info = await link.process.start()
    failures: list[str] = []
    order = ("load", "resume") if replay else ("resume", "load")
    for how in (way for way in order if offers(info, way)):
        try:
            response = await _reopen(link, how, session_id, extra_dirs(info, roots), hold, replay)
        except RequestError as exc:
            failures.append(f"session/{how}: {exc}")
            continue
        return Reopened(response, "resumed" if how == "resume" else "loaded", how == "load" and not replay)
    reason = "; ".join(failures) or "the agent offers neither session/resume nor session/load"
    return Reopened(None, reason)


async def _reopen(link: AgentLink, how: str, session_id: str, dirs: list[str] | None, hold: Replaying,
                  replay: bool) -> Attached:
    conn = link.connection
    link.session_id = session_id  # a load's replayed updates carry this id
    try:
        if how == "resume":
            return await conn.resume_session(session_id=session_id, cwd=link.cwd, additional_directories=dirs,
                                             mcp_servers=[])
        hold(not replay)
        return await conn.load_session(session_id=session_id, cwd=link.cwd, additional_directories=dirs,
                                       mcp_servers=[])
    except RequestError:
        hold(False)
        link.session_id = None
        raise


async def fork(link: AgentLink, source_id: str, roots: list[str], hold: Replaying) -> Attached:
    """Start ``link``'s process and fork ``source_id`` on it (``session/fork``); the fork is ``link``'s session.
    What the agent replays of the source (opencode does) is held: the chat shows its own copy."""
    info = await link.process.start()
    if not offers(info, "fork"):
        raise RequestError.method_not_found("session/fork")
    hold(True)
    response = await link.connection.fork_session(session_id=source_id, cwd=link.cwd,
                                                  additional_directories=extra_dirs(info, roots), mcp_servers=[])
    link.session_id = response.session_id
    return NewSessionResponse(session_id=response.session_id, modes=response.modes,
                              config_options=response.config_options)


async def close_remote(link: AgentLink) -> None:
    """``session/close`` where the agent offers it, before the process stops; never raises."""
    if link.session_id is None or not link.process.alive or not offers(link.process.info, "close"):
        return
    with contextlib.suppress(RequestError, ConnectionError, asyncio.TimeoutError):
        await asyncio.wait_for(link.connection.close_session(session_id=link.session_id), CLOSE_TIMEOUT)
