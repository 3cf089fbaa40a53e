"""The ACP ``Client`` side: requests from the agent, routed to the session that owns them.

It is also the wire transport's ``Inbound`` (``core/agent/inbound.py``): ``session/update``
arrives here in ordered batches without the SDK's dispatch, and what the transport dropped or
repaired is logged here (and told to the user once per kind when it matters).
"""

from __future__ import annotations

import traceback
from collections.abc import Mapping
from typing import Protocol, cast

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

from ..agent import quirks
from ..agent.inbound import NEWER, Streamed
from ..agent.process import AgentProcess
from ..config import WireSettings
from ..files.service import FileService
from ..log.ring import LogRing
from ..terminal.service import TerminalService
from . import schema_ext
from .asking import QuestionDesk
from .children import Child, Children

TELL_LIMIT = 3
"""Wire problems a session tells the user about; the rest are only logged."""


class Stream(Protocol):
    """Where ``session/update`` goes (``updates.UpdateRouter``): straight on to the transcript."""

    def route(self, update: SessionUpdate, raw: Mapping[str, object] | None = None) -> None: ...

    def chunk(self, kind: str, text: str, message_id: str | None = None) -> None: ...

    def newer(self, raw: Mapping[str, object]) -> None: ...

    def child(self, session_id: str, kind: str, payload: object, extra: object) -> bool: ...

    def child_request(self, session_id: str, call_id: str) -> Child | None: ...

    @property
    def children(self) -> Children: ...


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

    @property
    def desk(self) -> QuestionDesk: ...

    @property
    def stream(self) -> Stream: ...

    def tell(self, text: str) -> None: ...

    async def request_permission(self, tool_call: ToolCallUpdate,
                                 options: list[PermissionOption]) -> RequestPermissionResponse: ...


class SessionClient:
    """Implements the SDK's Client protocol for one session's agent process."""

    def __init__(self, session: Served, wire: WireSettings | None = None) -> None:
        self._session = session
        self._wire = wire or WireSettings()
        self._tells_left = TELL_LIMIT

    def _own(self, session_id: str) -> Served:
        """The session a request is for: this one, or one of its child sessions (a subagent's request
        is served as the session's own)."""
        if self._session.session_id not in (None, session_id) and self._session.stream.children.get(session_id) is None:
            raise RequestError.invalid_params({"sessionId": session_id, "reason": "unknown session"})
        return self._session

    async def session_update(self, session_id: str, update: SessionUpdate, **kwargs: object) -> None:
        """Through the SDK (only when the transport has no inbound path: tests of the bare SDK)."""
        self.updates([(session_id, "", update, None)])

    # -- the wire's inbound path (core/agent/inbound.py) -----------------------------------

    @property
    def max_line_bytes(self) -> int:
        return self._wire.max_line_bytes

    def updates(self, batch: list[Streamed]) -> None:
        """Each update in order to the session; one for another session, or one that fails, is
        reported and the rest still go on. Consecutive text chunks of one kind go on as one text
        (a flood's hundreds of chunks per read cost the transcript and its redactor one call)."""
        session = self._session
        own, stream = session.session_id, session.stream
        run: list[str] = []  # consecutive text chunks of one kind and one message
        run_kind, run_id = "", None
        for session_id, kind, payload, extra in batch:
            if session_id != own and own is not None:  # a child's: its own destination, the run goes on
                if not self._child(session_id, kind, payload, extra):
                    self.dropped(f"ignored a session/update for another session ({session_id!r:.80})")
                continue
            text = bool(kind) and kind != NEWER
            if text and kind == run_kind and extra == run_id:
                run.append(cast(str, payload))
                continue
            if run:
                self._chunk(run_kind, run, run_id)
            if text:
                run_kind, run_id, run = kind, cast("str | None", extra), [cast(str, payload)]
                continue
            run_kind, run_id, run = "", None, []
            try:
                if not kind:
                    stream.route(cast(SessionUpdate, payload), cast("Mapping[str, object] | None", extra))
                else:
                    stream.newer(cast("Mapping[str, object]", payload))
            except Exception as exc:
                self._failed(exc)
        if run:
            self._chunk(run_kind, run, run_id)

    def _child(self, session_id: str, kind: str, payload: object, extra: object) -> bool:
        """An update of a child session (False: no child has that id)."""
        try:
            return self._session.stream.child(session_id, kind, payload, extra)
        except Exception as exc:
            self._failed(exc)
            return True

    def _chunk(self, kind: str, texts: list[str], message_id: str | None) -> None:
        try:
            self._session.stream.chunk(kind, texts[0] if len(texts) == 1 else "".join(texts), message_id)
        except Exception as exc:
            self._failed(exc)

    def dropped(self, summary: str, raw: str | None = None, tell: bool = False, level: str = "warn") -> None:
        """The transport dropped or repaired a message: the log says what, and with ``tell`` so
        does a message (the first few of a session; the log has them all)."""
        self._session.log.add(level, "wire", summary, direction="in", raw=raw)
        if tell:
            self._tell(summary)

    def _failed(self, exc: Exception) -> None:
        detail = "".join(traceback.format_exception(exc, limit=-4))
        self._session.log.add("error", "error", f"showing an update failed: {type(exc).__name__}: {exc}", raw=detail)
        self._tell(f"internal error while showing an update: {type(exc).__name__}: {exc}")

    def _tell(self, text: str) -> None:
        if self._tells_left <= 0:
            return
        self._tells_left -= 1
        more = " (further such problems only in :Ai log)" if not self._tells_left else " (see :Ai log)"
        self._session.tell(text + more)

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: object
    ) -> RequestPermissionResponse:
        session = self._own(session_id)
        if session_id != session.session_id:
            session.stream.child_request(session_id, tool_call.tool_call_id)  # drawn under its child
        return await session.request_permission(tool_call, options)

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

    # -- elicitation/* and $/cancel_request: core/conversation/asking.py ---------------

    async def create_elicitation(self, message: str, mode: ElicitationMode, **kwargs: object
                                 ) -> CreateElicitationResponse:
        session_id = getattr(mode, "session_id", None)
        if session_id is not None:
            self._own(session_id)
            child = self._session.stream.children.get(session_id)
            if child is not None:
                message = f"subagent “{child.label}” asks: {message}"
        return await self._session.desk.ask(message, mode, keeps_working=schema_ext.keeps_working(kwargs))

    async def complete_elicitation(self, elicitation_id: str, **kwargs: object) -> None:
        self._session.desk.complete(elicitation_id)

    def cancel_request(self, params: object) -> None:
        """The agent withdrew one of its requests (the wire hands ``$/cancel_request`` here)."""
        request_id = schema_ext.cancel_request_id(params)
        if request_id is None:
            self.dropped(f"ignored a {schema_ext.CANCEL_REQUEST} without a valid requestId ({params!r:.120})")
            return
        self._session.desk.withdraw(request_id)

    # -- terminal/*: core/terminal/service.py -----------------------------------

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


def client_for(session: Served, wire: WireSettings | None = None) -> Client:
    """The session's client, typed as the SDK's ``Client`` (its ``ext_*`` signatures are looser)."""
    return cast(Client, SessionClient(session, wire))
