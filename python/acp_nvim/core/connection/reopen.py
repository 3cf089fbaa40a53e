"""Opening a past session on a fresh agent process (``:Ai resume``, ``:Ai fork``), and
``session/close`` before the process stops (``:Ai close``).

Reopening goes through ``reattach.reattach`` (the restart's way back): ``session/resume`` where
the agent offers it, then ``session/load`` (load first when nothing is kept locally); when
neither is offered or both fail, the session can only be read (the local transcript). Every
request is answered in time or fails (``AgentProcess.ask``).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from acp import RequestError
from acp.schema import NewSessionResponse

from ..conversation.updates import replayed as replayed
from ..errors import AcpNvimError
from . import reattach
from .capabilities import extra_dirs, offers
from .link import AgentLink, Attached, Replaying

CLOSE_TIMEOUT = 3.0
"""``session/close`` must not hold up ``:Ai close`` when the agent does not answer."""


@dataclass(frozen=True, slots=True)
class Reopened:
    """How a session was opened: the response (None: read-only) and how (``link.NEW``,
    ``reattach.RESUMED``/``RELOADED``, or for a past session "resumed", "loaded" or why it is read-only).

    ``replay_held``: the agent's replay of a load (or a fork) is being dropped, and stays dropped
    until the next prompt (agents may replay after they answer: Gemini CLI streams it unawaited).
    ``hold`` (the session's) drops the conversation's updates (``replayed``) while it is on.
    """

    response: Attached | None
    how: str
    replay_held: bool = False


async def open_past(link: AgentLink, session_id: str, replay: bool, hold: Replaying) -> Reopened:
    """Start ``link``'s process and reopen ``session_id`` on it (``reattach.reattach``). ``replay``:
    nothing is kept locally, so ``session/load`` (whose replay the chat shows) goes before
    ``session/resume`` (which shows nothing); otherwise a load's replay is held."""
    process = link.process
    info = await process.start()
    link.session_id = session_id  # a load's replayed updates carry this id
    refused: list[str] = []
    try:
        attached = await reattach.reattach(process, session_id, link.cwd, link.mcp_servers(info),
                                           dirs=extra_dirs(info, link.roots), load_first=replay,
                                           loading=lambda on: hold(on and not replay), refused=refused)
    except BaseException:
        hold(False)
        link.session_id = None
        raise
    if attached is None:
        link.session_id = None
        reason = "; ".join(refused) or "the agent offers neither session/resume nor session/load"
        return Reopened(None, reason)
    response, how = attached
    if how == reattach.RESUMED:
        return Reopened(response, "resumed")
    return Reopened(response, "loaded", replay_held=not replay)


async def fork(link: AgentLink, source_id: str, hold: Replaying) -> Attached:
    """Start ``link``'s process and fork ``source_id`` on it (``session/fork``); the fork is ``link``'s session.
    What the agent replays of the source (opencode does) is held: the chat shows its own copy."""
    process = link.process
    info = await process.start()
    if not offers(info, "fork"):
        raise RequestError.method_not_found("session/fork")
    hold(True)
    try:
        response = await process.ask("session/fork", link.connection.fork_session(
            session_id=source_id, cwd=link.cwd, additional_directories=extra_dirs(info, link.roots),
            mcp_servers=link.mcp_servers(info)))
    except BaseException:
        hold(False)
        raise
    link.session_id = response.session_id
    return NewSessionResponse(session_id=response.session_id, modes=response.modes,
                              config_options=response.config_options)


async def fork_at(link: AgentLink, source_id: str, message_id: str, hold: Replaying) -> Attached:
    """Fork ``source_id`` on ``link``'s running process, keeping the conversation up to the agent's
    message ``message_id`` and nothing after it (``session/fork`` with the fork point claude-agent-acp
    takes: ``_meta.jetbrains.air.fork``); the fork is ``link``'s session from now on."""
    process = link.process
    if not offers(process.info, "fork"):
        raise RequestError.method_not_found("session/fork")
    hold(True)
    try:
        response = await process.ask("session/fork", link.connection.fork_session(
            session_id=source_id, cwd=link.cwd, additional_directories=extra_dirs(process.info, link.roots),
            mcp_servers=link.mcp_servers(process.info), **fork_point_meta(message_id)))
    except BaseException:
        hold(False)
        raise
    link.session_id = response.session_id
    return NewSessionResponse(session_id=response.session_id, modes=response.modes,
                              config_options=response.config_options)


def fork_point_meta(message_id: str) -> dict[str, object]:
    """The ``_meta`` of a fork at a message (claude-agent-acp 0.101: ``fork-session.js``)."""
    return {"jetbrains": {"air": {"fork": {"version": 1, "messageId": message_id}}}}


async def close_remote(link: AgentLink) -> None:
    """``session/close`` where the agent offers it, before the process stops; never raises."""
    process = link.process
    if link.session_id is None or not process.alive or not offers(process.info, "close"):
        return
    with contextlib.suppress(RequestError, ConnectionError, AcpNvimError):
        await process.ask("session/close", link.connection.close_session(session_id=link.session_id),
                          limit=CLOSE_TIMEOUT)
