"""Opening a past session on a fresh agent process (``:Ai resume``, ``:Ai fork``), and
``session/close`` before the process stops (``:Ai close``).

Reopening tries ``session/resume`` where the agent offers it, then ``session/load``; when
neither is offered or both fail, the session can only be read (the local transcript).
"""

from __future__ import annotations

import asyncio
import contextlib

from acp import RequestError
from acp.schema import NewSessionResponse

from .link import AgentLink, Attached, Replaying
from .past import extra_dirs, offers

CLOSE_TIMEOUT = 3.0
"""``session/close`` must not hold up ``:Ai close`` when the agent does not answer."""


class Reopened:
    """How a past session was reopened: the response (None: read-only) and what to tell the user."""

    def __init__(self, response: Attached | None, how: str) -> None:
        self.response = response
        self.how = how


async def open_past(link: AgentLink, session_id: str, roots: list[str], replay: bool,
                    replaying: Replaying) -> Reopened:
    """Start ``link``'s process and reopen ``session_id`` on it; ``replay``: show what ``session/load`` replays."""
    info = await link.process.start()
    conn, dirs, failures = link.connection, extra_dirs(info, roots), []
    if offers(info, "resume"):
        try:
            response: Attached = await conn.resume_session(session_id=session_id, cwd=link.cwd,
                                                           additional_directories=dirs, mcp_servers=[])
            link.session_id = session_id
            return Reopened(response, "resumed")
        except RequestError as exc:
            failures.append(f"session/resume: {exc}")
    if offers(info, "load"):
        replaying(not replay)
        link.session_id = session_id  # replayed updates carry this id
        try:
            response = await conn.load_session(session_id=session_id, cwd=link.cwd,
                                               additional_directories=dirs, mcp_servers=[])
            return Reopened(response, "loaded")
        except RequestError as exc:
            link.session_id = None
            failures.append(f"session/load: {exc}")
        finally:
            replaying(False)
    reason = "; ".join(failures) or "the agent offers neither session/resume nor session/load"
    return Reopened(None, reason)


async def fork(link: AgentLink, source_id: str, roots: list[str]) -> Attached:
    """Start ``link``'s process and fork ``source_id`` on it (``session/fork``); the fork is ``link``'s session."""
    info = await link.process.start()
    if not offers(info, "fork"):
        raise RequestError.method_not_found("session/fork")
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
