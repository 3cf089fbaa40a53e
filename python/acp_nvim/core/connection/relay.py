"""The client side of an agent process started before its session exists (a warm start,
``core/session/warm.py``): every message goes on to the session's client once one takes the process.

Until then nothing of the agent's reaches anyone: ``session/update`` (the commands an agent announces
right after ``session/new``) is kept, bounded, and given to the session after it attached; a request
(a file, a permission, a terminal, a question) waits for the session that takes the process and is
served by it, as the capabilities the process advertised promise. One still waiting when the process
is closed untaken is answered "request cancelled" (-32800).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import cast

from acp import Client, RequestError
from acp.helpers import SessionUpdate
from acp.schema import (
    CreateElicitationResponse,
    CreateTerminalResponse,
    ElicitationMode,
    EnvVariable,
    KillTerminalResponse,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalOutputResponse,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from ..agent.inbound import Inbound, Streamed, Withdrawing
from ..config import WireSettings

REQUEST_CANCELLED = -32800
MAX_KEPT = 200
"""Updates kept for the session to come; more are dropped (and counted in the log)."""

Dropped = Callable[[str], None]
"""Where the relay says what it refused or dropped while no session took the process (its log)."""


class Relay:
    """The SDK's ``Client`` (and the wire's ``Inbound``) of a process no session has taken yet."""

    def __init__(self, wire: WireSettings, note: Dropped) -> None:
        self._wire = wire
        self._note = note
        self.target: Client | None = None
        self._kept: list[Streamed] = []
        self._held = True
        self.dropped_updates = 0
        self._taken = asyncio.Event()
        """Set once a session took the process, or it closed untaken (``close``)."""
        self._closed = False

    @property
    def kept(self) -> int:
        """Updates kept for the session to come."""
        return len(self._kept)

    # -- taking the process ------------------------------------------------------------------

    def attach(self, target: Client) -> None:
        """From now on every message goes to ``target`` (the taking session's client side); what was kept
        waits for ``release``."""
        self.target = target
        self._taken.set()

    def close(self) -> None:
        """The process closes and no session took it: the requests still waiting are cancelled."""
        self._closed = True
        self._taken.set()

    def release(self) -> None:
        """Give the kept updates to the session (after it took the ``session/new`` answer), then let
        every update through."""
        kept, self._kept, self._held = self._kept, [], False
        if kept and self.target is not None:
            self._inbound().updates(kept)

    def _inbound(self) -> Inbound:
        assert self.target is not None
        return cast(Inbound, self.target)

    async def _client(self, what: str) -> Client:
        """The session's client side, once one took the process (the request waits until then)."""
        if self.target is None and not self._closed:
            self._note(f"{what} waits for the session that takes this agent")
            await self._taken.wait()
        if self.target is None:
            self._note(f"cancelled {what}: the agent was closed before any session took it")
            raise RequestError(REQUEST_CANCELLED, "request cancelled: no session took this agent process",
                               {"reason": "closed before any session took it"})
        return self.target

    # -- the wire's inbound path ---------------------------------------------------------------

    @property
    def max_line_bytes(self) -> int:
        return self._wire.max_line_bytes

    def updates(self, batch: list[Streamed]) -> None:
        if self.target is not None and not self._held:
            self._inbound().updates(batch)
            return
        room = MAX_KEPT - len(self._kept)
        self._kept += batch[:max(room, 0)]
        if len(batch) > room:
            self.dropped_updates += len(batch) - max(room, 0)
            self._note(f"dropped {self.dropped_updates} update(s) sent before any session took the agent")

    def dropped(self, summary: str, raw: str | None = None, tell: bool = False, level: str = "warn") -> None:
        if self.target is not None:
            self._inbound().dropped(summary, raw, tell, level)
        else:
            self._note(summary)

    def cancel_request(self, params: object) -> None:
        if isinstance(self.target, Withdrawing):
            self.target.cancel_request(params)

    # -- the SDK's Client ----------------------------------------------------------------------

    async def session_update(self, session_id: str, update: SessionUpdate, **kwargs: object) -> None:
        self.updates([(session_id, "", update, None)])

    async def request_permission(self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption],
                                 **kwargs: object) -> RequestPermissionResponse:
        return await (await self._client("session/request_permission")).request_permission(
            session_id=session_id, tool_call=tool_call, options=options, **kwargs)

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
                             **kwargs: object) -> ReadTextFileResponse:
        return await (await self._client("fs/read_text_file")).read_text_file(
            session_id=session_id, path=path, line=line, limit=limit, **kwargs)

    async def write_text_file(self, session_id: str, path: str, content: str,
                              **kwargs: object) -> WriteTextFileResponse | None:
        return await (await self._client("fs/write_text_file")).write_text_file(
            session_id=session_id, path=path, content=content, **kwargs)

    async def create_elicitation(self, message: str, mode: ElicitationMode,
                                 **kwargs: object) -> CreateElicitationResponse:
        client = await self._client("elicitation/create")
        return await client.create_elicitation(message=message, mode=mode, **kwargs)

    async def complete_elicitation(self, elicitation_id: str, **kwargs: object) -> None:
        if self.target is not None:
            await self.target.complete_elicitation(elicitation_id=elicitation_id, **kwargs)

    async def create_terminal(self, session_id: str, command: str, args: list[str] | None = None,
                              env: list[EnvVariable] | None = None, cwd: str | None = None,
                              output_byte_limit: int | None = None, **kwargs: object) -> CreateTerminalResponse:
        return await (await self._client("terminal/create")).create_terminal(
            session_id=session_id, command=command, args=args, env=env, cwd=cwd,
            output_byte_limit=output_byte_limit, **kwargs)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: object) -> TerminalOutputResponse:
        return await (await self._client("terminal/output")).terminal_output(
            session_id=session_id, terminal_id=terminal_id, **kwargs)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str,
                                     **kwargs: object) -> WaitForTerminalExitResponse:
        return await (await self._client("terminal/wait_for_exit")).wait_for_terminal_exit(
            session_id=session_id, terminal_id=terminal_id, **kwargs)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: object) -> KillTerminalResponse | None:
        return await (await self._client("terminal/kill")).kill_terminal(
            session_id=session_id, terminal_id=terminal_id, **kwargs)

    async def release_terminal(self, session_id: str, terminal_id: str,
                               **kwargs: object) -> ReleaseTerminalResponse | None:
        return await (await self._client("terminal/release")).release_terminal(
            session_id=session_id, terminal_id=terminal_id, **kwargs)

    async def ext_method(self, method: str, params: dict[str, object]) -> dict[str, object]:
        return await (await self._client(f"_{method}")).ext_method(method, params)

    async def ext_notification(self, method: str, params: dict[str, object]) -> None:
        if self.target is not None:
            await self.target.ext_notification(method, params)


def relay_client(relay: Relay) -> Client:
    """The relay typed as the SDK's ``Client`` (its ``ext_*`` signatures are looser)."""
    return cast(Client, relay)
