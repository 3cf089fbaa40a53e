"""Past sessions of a cwd: the agents' ``session/list`` merged with the local history.

Also the requests the SDK 0.12 types but does not send (``session/delete``, ``logout``), through
``AgentProcess.request``. What an agent offers is ``capabilities.py``'s.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar, cast

from acp import Client, RequestError
from acp.meta import AGENT_METHODS
from acp.schema import (
    DeleteSessionRequest,
    DeleteSessionResponse,
    DeniedOutcome,
    LogoutRequest,
    LogoutResponse,
    RequestPermissionResponse,
    SessionInfo,
)
from pydantic import BaseModel

from ..agent.process import NOTHING_SERVED, AgentHooks, AgentProcess
from ..config import AgentSpec, Settings
from ..history.record import SessionRecord
from ..log.redact import Redactor
from ..log.ring import LogRing
from .capabilities import offers

T = TypeVar("T")
R = TypeVar("R", bound=BaseModel)

MAX_PAGES = 50
"""``session/list`` pages read at most (an agent whose cursor never ends must not hang us)."""
PROMPT_SHOWN = 60


# -- requests the SDK types but does not send -------------------------------------------

async def delete_session(process: AgentProcess, session_id: str) -> None:
    """``session/delete`` (the SDK 0.12 has the types, not the method), answered in time or failed."""
    await _untyped(process, "session/delete", "session_delete", DeleteSessionRequest(session_id=session_id),
                   DeleteSessionResponse)


async def logout(process: AgentProcess) -> None:
    """``logout`` (the SDK 0.12 has the types, not the method), answered in time or failed."""
    await _untyped(process, "logout", "logout", LogoutRequest(), LogoutResponse)


async def _untyped(process: AgentProcess, method: str, key: str, request: BaseModel, response: type[R]) -> R:
    """A request the SDK's connection has no method for (``AgentProcess.request``)."""
    assert AGENT_METHODS[key] == method
    return await process.request(method, request, response)


async def list_sessions(process: AgentProcess, cwd: str) -> list[SessionInfo]:
    """Every page of ``session/list`` for ``cwd`` (sessions of other folders are dropped); each page
    is answered in time or the listing fails."""
    found: list[SessionInfo] = []
    cursor: str | None = None
    conn = process.connection()
    for _ in range(MAX_PAGES):
        page = await process.ask("session/list", conn.list_sessions(cwd=cwd, cursor=cursor))
        found += [info for info in page.sessions if info.cwd == cwd]
        cursor = page.next_cursor
        if not cursor:
            break
    return found


class ListingClient:
    """The client side of a process started only to list sessions: it serves nothing."""

    async def session_update(self, session_id: str, update: object, **kwargs: object) -> None:
        return None

    async def request_permission(self, session_id: str, tool_call: object, options: object,
                                 **kwargs: object) -> RequestPermissionResponse:
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    async def ext_method(self, method: str, params: dict[str, object]) -> dict[str, object]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, object]) -> None:
        return None


def listing_client() -> Client:
    return cast(Client, ListingClient())


# -- the picker's items ---------------------------------------------------------------------

@dataclass(slots=True)
class PastSession:
    """One past session as ``:Ai resume`` shows it."""

    agent: str
    session_id: str
    title: str
    updated: float
    first_prompt: str = ""
    record: SessionRecord | None = None
    """The local record (None: only the agent knows it)."""
    listed: bool = False
    """The agent's ``session/list`` has it."""
    read_only: str = ""
    """Why the agent cannot continue it ("" when it can, or when nobody can tell before trying)."""

    def turns(self) -> str:
        """``3 turns`` from the local record ("" without one; ``3+`` when its oldest entries were cut)."""
        if self.record is None:
            return ""
        count = sum(1 for entry in self.record.entries if entry.kind == "user")
        more = "+" if self.record.dropped or self.record.older else ""
        return f"{count}{more} turn{'' if count == 1 and not more else 's'}"

    def label(self) -> str:
        """``agent · time · turns · title — first prompt`` for the picker, and why it is read-only."""
        when = datetime.fromtimestamp(self.updated).strftime("%Y-%m-%d %H:%M") if self.updated else "?"
        prompt = " ".join(self.first_prompt.split())
        prompt = prompt[:PROMPT_SHOWN] + ("…" if len(prompt) > PROMPT_SHOWN else "")
        title = " ".join(self.title.split()) or "(untitled)"
        tail = f" — {prompt}" if prompt and prompt != title else ""
        turns = f"{self.turns()} · " if self.turns() else ""
        read_only = f" · read-only: {self.read_only}" if self.read_only else ""
        return f"{self.agent} · {when} · {turns}{title}{tail}{read_only}"


@dataclass(frozen=True, slots=True)
class Listing:
    """What one agent said of a cwd's past sessions: its list, and what it offers to reopen one."""

    sessions: list[SessionInfo]
    continues: bool
    """It offers ``session/load`` or ``session/resume``."""
    lists: bool
    """It offers ``session/list`` (so a session missing from ``sessions`` is unknown to it)."""


def mark_read_only(items: list[PastSession], listings: dict[str, Listing]) -> None:
    """Say on each item the agent cannot continue why, before the user picks it (agents whose listing
    failed are not judged: trying is the only way to tell)."""
    for item in items:
        listing = listings.get(item.agent)
        if listing is None:
            continue
        if not listing.continues:
            item.read_only = "the agent cannot load or resume a session"
        elif listing.lists and not item.listed:
            item.read_only = "the agent no longer lists it"


def labels(items: list[PastSession]) -> list[str]:
    """The picker's rows: each item's label, and where two would read the same, its session id too."""
    plain = [item.label() for item in items]
    return [f"{label} · session {item.session_id}" if plain.count(label) > 1 else label
            for label, item in zip(plain, items, strict=True)]


def merge(records: list[SessionRecord], listed: dict[str, list[SessionInfo]]) -> list[PastSession]:
    """One item per (agent, session id), most recent first; the local record fills what the list lacks."""
    items: dict[tuple[str, str], PastSession] = {}
    for record in records:
        items[(record.agent, record.session_id)] = PastSession(
            record.agent, record.session_id, record.title, record.updated, record.first_prompt, record)
    for agent, infos in listed.items():
        for info in infos:
            item = items.get((agent, info.session_id))
            if item is None:
                item = items[(agent, info.session_id)] = PastSession(
                    agent, info.session_id, info.title or "", _timestamp(info.updated_at))
            item.listed = True
            item.title = item.title or info.title or ""
            item.updated = max(item.updated, _timestamp(info.updated_at))
    return sorted(items.values(), key=lambda item: item.updated, reverse=True)


def _timestamp(iso: str | None) -> float:
    """An ISO 8601 time as a timestamp (0 when absent or malformed)."""
    if not iso:
        return 0.0
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def now() -> float:
    return time.time()


# -- asking an agent ------------------------------------------------------------------------

async def with_agent(name: str, spec: AgentSpec, cwd: str, live: AgentProcess | None,
                     ask: Callable[[AgentProcess], Awaitable[T]], settings: Settings | None = None) -> T:
    """Run ``ask`` on ``live`` (a running process of the agent) or on one started for it and closed
    after (its handshake bounded by ``settings.timeouts``, its log redacted as a session's). ``ask``
    sends its requests through ``AgentProcess.ask``, so each is answered in time or fails."""
    if live is not None and live.alive and live.conn is not None:
        return await ask(live)
    settings = settings or Settings()
    redact = Redactor.for_env(spec.env, patterns=settings.redaction.patterns)
    log = LogRing(1000, 1 << 20, redact=redact)
    process = AgentProcess(name, spec, listing_client(), log, cwd, AgentHooks(timeouts=settings.timeouts),
                           serves=NOTHING_SERVED)
    try:
        await process.start()
        return await ask(process)
    finally:
        await process.close()


async def listed_by(name: str, spec: AgentSpec, cwd: str, live: AgentProcess | None,
                    settings: Settings | None = None) -> list[SessionInfo]:
    """The agent's sessions of ``cwd`` (empty when it offers no ``session/list``)."""
    return (await listing_by(name, spec, cwd, live, settings)).sessions


async def listing_by(name: str, spec: AgentSpec, cwd: str, live: AgentProcess | None,
                     settings: Settings | None = None) -> Listing:
    """The agent's sessions of ``cwd`` and whether it can reopen one."""
    async def ask(process: AgentProcess) -> Listing:
        info = process.info if process.conn is not None else None
        lists = offers(info, "list")
        continues = offers(info, "load") or offers(info, "resume")
        return Listing(await list_sessions(process, cwd) if lists else [], continues, lists)
    return await with_agent(name, spec, cwd, live, ask, settings)
