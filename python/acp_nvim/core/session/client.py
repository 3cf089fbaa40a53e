"""The ACP ``Client`` side: requests from the agent, routed to the session that owns them."""

from __future__ import annotations

from typing import Protocol, cast

from acp import Client, RequestError
from acp.helpers import SessionUpdate
from acp.schema import (
    CreateTerminalResponse,
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

from ..agent import quirks
from ..agent.process import AgentProcess
from ..files.service import FileService
from ..log.ring import LogRing
from ..terminal.service import TerminalService


class Served(Protocol):
    """What the client side needs of its session (``Session``)."""

    @property
    def session_id(self) -> str | None: ...

    @property
    def files(self) -> FileService: ...

    @property
    def log(self) -> LogRing: ...

    @property
    def process(self) -> AgentProcess: ...

    @property
    def terminals(self) -> TerminalService: ...

    def on_update(self, update: SessionUpdate) -> None: ...

    async def request_permission(self, tool_call: ToolCallUpdate,
                                 options: list[PermissionOption]) -> RequestPermissionResponse: ...


class SessionClient:
    """Implements the SDK's Client protocol for one session's agent process."""

    def __init__(self, session: Served) -> None:
        self._session = session

    def _own(self, session_id: str) -> Served:
        if self._session.session_id not in (None, session_id):
            raise RequestError.invalid_params({"sessionId": session_id, "reason": "unknown session"})
        return self._session

    async def session_update(self, session_id: str, update: SessionUpdate, **kwargs: object) -> None:
        self._own(session_id).on_update(update)

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: object
    ) -> RequestPermissionResponse:
        return await self._own(session_id).request_permission(tool_call, options)

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: object
    ) -> ReadTextFileResponse:
        session = self._own(session_id)
        try:
            return await session.files.read(path, line, limit)
        except RequestError as exc:
            if not quirks.missing_file_reads_empty(session.process.info, exc):
                raise
            session.log.add("debug", "quirk", f"{path}: missing file read as empty text (core/agent/quirks.py)")
            return ReadTextFileResponse(content="")

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: object
    ) -> WriteTextFileResponse:
        await self._own(session_id).files.write(path, content)
        return WriteTextFileResponse()

    # -- terminal/* (issue 15): core/terminal/service.py -----------------------------------

    async def create_terminal(self, session_id: str, command: str, args: list[str] | None = None,
                              env: list[EnvVariable] | None = None, cwd: str | None = None,
                              output_byte_limit: int | None = None, **kwargs: object) -> CreateTerminalResponse:
        terminals = self._own(session_id).terminals
        return CreateTerminalResponse(terminal_id=await terminals.create(command, args, env, cwd, output_byte_limit))

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: object) -> TerminalOutputResponse:
        return self._own(session_id).terminals.output(terminal_id)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str,
                                     **kwargs: object) -> WaitForTerminalExitResponse:
        return await self._own(session_id).terminals.wait_for_exit(terminal_id)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: object) -> KillTerminalResponse:
        self._own(session_id).terminals.kill(terminal_id)
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: object) -> ReleaseTerminalResponse:
        self._own(session_id).terminals.release(terminal_id)
        return ReleaseTerminalResponse()

    async def ext_method(self, method: str, params: dict[str, object]) -> dict[str, object]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, object]) -> None:
        self._session.log.add("debug", "notification", f"ignored extension notification {method}")


def client_for(session: Served) -> Client:
    """The session's client, typed as the SDK's ``Client``.

    ``SessionClient`` leaves out elicitation on purpose (we do not advertise it; the SDK
    answers "method not found"), so it is not structurally a ``Client``.
    """
    return cast(Client, SessionClient(session))
