"""The demo agent: an ``acp.Agent`` implementation that dispatches prompts to scenarios."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.helpers import ContentBlock, update_agent_message_text, update_current_mode, update_user_message_text
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    AuthMethodAgent,
    ClientCapabilities,
    CloseSessionResponse,
    DeleteSessionResponse,
    FileSystemCapabilities,
    ForkSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    LogoutResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    StopReason,
    TextContentBlock,
    Usage,
)

from . import gate, logins, newer, steering
from .options import VERBOSE_ID
from .saved import SavedSessions
from .scenarios import commands_update, parse_prompt, pick_scenario
from .session import MODEL_CONFIG_ID, MODEL_VALUES, MODES, SessionState
from .turn import RawWriter, Turn, TurnCancelled

AGENT_NAME = "acp-nvim-demo"
REQUIRE_AUTH_ENV = "ACP_DEMO_REQUIRE_AUTH"
CAPABILITIES_ENV = "ACP_DEMO_CAPABILITIES"
"""Extra capabilities, comma-separated: image, audio (prompts), mcp-http, mcp-sse (MCP servers),
steering (``_session/steering``, see steering.py), logout and delete (``logout``, ``session/delete``,
see newer.py)."""
"""Set to 1 to make ``session/new`` fail with auth_required until ``authenticate(demo-login)``."""
AUTH_METHOD = AuthMethodAgent(id="demo-login", name="Demo login", description="pretend to log in")
AGENT_VERSION = "0.1.0"
COMMANDS_DELAY = 0.01


async def _write_stdout(data: bytes) -> None:
    """Fallback raw writer used when no StreamWriter was supplied."""
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def _prompt_text(blocks: list[ContentBlock]) -> str:
    return "".join(block.text for block in blocks if isinstance(block, TextContentBlock))


class DemoAgent:
    """Offline, deterministic ACP agent that exercises every client feature."""

    def __init__(self, raw_write: RawWriter | None = None, *, sessions: dict[str, SessionState] | None = None,
                 resume: bool = False) -> None:
        self._client: Client | None = None
        self._fs = FileSystemCapabilities(read_text_file=False, write_text_file=False)
        self._sessions: dict[str, SessionState] = {} if sessions is None else sessions
        """Shared between the connections of the WebSocket server (``ws.py``): a reconnect finds them."""
        self._resume = resume
        self._counter = 0
        self._raw_write = raw_write or _write_stdout
        self._background: set[asyncio.Task[None]] = set()
        self._needs_auth = os.environ.get(REQUIRE_AUTH_ENV) == "1"
        self._terminal = False
        self._more_logins = os.environ.get(REQUIRE_AUTH_ENV) == logins.ALL
        if self._more_logins:
            self._needs_auth = not any(logins.logged_in(m.id) for m in logins.methods())
        self._saved = SavedSessions.from_env()

    def on_connect(self, conn: Client) -> None:
        """Remember the client-side connection, and route the methods the SDK does not (newer.py)."""
        self._client = conn
        newer.route(conn, self)

    @property
    def client(self) -> Client:
        """The connected client (raises if the agent was never connected)."""
        if self._client is None:
            raise RuntimeError("DemoAgent is not connected")
        return self._client

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        """Advertise loadSession + embeddedContext and remember the client's fs capabilities."""
        if client_capabilities is not None and client_capabilities.fs is not None:
            self._fs = client_capabilities.fs
        self._terminal = bool(client_capabilities is not None and client_capabilities.terminal)
        extra = {word.strip() for word in os.environ.get(CAPABILITIES_ENV, "").split(",")}
        capabilities = AgentCapabilities(
            load_session=True,
            prompt_capabilities=PromptCapabilities(image="image" in extra, audio="audio" in extra,
                                                   embedded_context=True),
            mcp_capabilities=McpCapabilities(http="mcp-http" in extra, sse="mcp-sse" in extra),
            session_capabilities=newer.with_delete(
                self._saved.capabilities() if self._saved else
                SessionCapabilities(resume=SessionResumeCapabilities()) if self._resume else None, extra),
        )
        if (auth := newer.auth_capabilities(extra)) is not None:
            capabilities.auth = auth
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=capabilities,
            auth_methods=[AUTH_METHOD, *(logins.methods() if self._more_logins else [])] if self._needs_auth
            or self._more_logins else [],
            agent_info=Implementation(name=AGENT_NAME, title="ACP Neovim demo agent", version=AGENT_VERSION),
            field_meta=steering.meta(extra),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        """Accept ``demo-login``; anything else is an unknown method."""
        if self._more_logins and method_id in (logins.TERMINAL.id, logins.ENV_VAR.id):
            if not logins.logged_in(method_id):
                raise RequestError.auth_required({"methodId": method_id, "reason": "not logged in yet"})
        elif method_id != AUTH_METHOD.id:
            raise RequestError.invalid_params({"methodId": method_id, "reason": "unknown auth method"})
        self._needs_auth = False
        return AuthenticateResponse()

    async def logout(self, **kwargs: Any) -> LogoutResponse:
        """Forget every login: the terminal login's file goes, and the next ``session/new`` asks for a
        login again where the agent has methods to offer (``ACP_DEMO_REQUIRE_AUTH``)."""
        login_file = os.environ.get(logins.LOGIN_FILE_ENV)
        if login_file:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(login_file)
        self._needs_auth = os.environ.get(REQUIRE_AUTH_ENV) in ("1", logins.ALL)
        return LogoutResponse()

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        """Create ``demo-<n>`` with modes and config options, then announce the commands."""
        if self._needs_auth:
            raise RequestError.auth_required({"authMethods": [AUTH_METHOD.id]})
        await gate.passed()
        self._counter = max(self._counter, len(self._sessions)) + 1
        session_id = self._saved.new_id() if self._saved else f"demo-{self._counter}"
        state = SessionState(session_id=session_id, cwd=cwd, mcp_servers=list(kwargs.get("mcp_servers") or []))
        self._sessions[state.session_id] = state
        if self._saved:
            self._saved.save(state)
        self._announce_commands_soon(state.session_id)
        return NewSessionResponse(
            session_id=state.session_id, modes=state.mode_state(), config_options=state.config_options()
        )

    async def load_session(self, cwd: str, session_id: str, **kwargs: Any) -> LoadSessionResponse | None:
        """Replay the history of a session created earlier (in this process, or saved)."""
        state = self._session(session_id)
        state.cwd = cwd
        state.mcp_servers = list(kwargs.get("mcp_servers") or [])
        for role, text in state.history:
            update = update_user_message_text(text) if role == "user" else update_agent_message_text(text)
            await self.client.session_update(session_id=session_id, update=update)
        self._announce_commands_soon(session_id)
        return LoadSessionResponse(modes=state.mode_state(), config_options=state.config_options())

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        """Switch mode and confirm it with current_mode_update."""
        state = self._session(session_id)
        if mode_id not in MODES:
            raise RequestError.invalid_params({"modeId": mode_id, "reason": "unknown mode"})
        state.mode = mode_id
        await self.client.session_update(session_id=session_id, update=update_current_mode(mode_id))
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        """Update the ``model`` or ``verbose`` option and return the full option list."""
        state = self._session(session_id)
        if config_id == VERBOSE_ID and isinstance(value, bool):
            state.verbose = value
        elif config_id == MODEL_CONFIG_ID and isinstance(value, str) and value in MODEL_VALUES:
            state.model = value
        else:
            raise RequestError.invalid_params({"configId": config_id, "value": value})
        return SetSessionConfigOptionResponse(config_options=state.config_options())

    async def prompt(self, session_id: str, prompt: list[ContentBlock], **kwargs: Any) -> PromptResponse:
        """Run the scenario picked by the prompt's first word as a cancellable task."""
        state = self._session(session_id)
        parsed = parse_prompt(prompt)
        turn = Turn(
            self.client, state, self._fs, list(prompt), parsed.text, parsed.args, parsed.rest, self._raw_write,
            terminal=self._terminal,
        )
        state.cancel_requested = False
        state.task = asyncio.create_task(self._run(turn, parsed.keyword))
        try:
            stop_reason = await state.task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise
            stop_reason = "cancelled"
        finally:
            state.task = None
        return PromptResponse(stop_reason=stop_reason, usage=self._account(state, prompt, turn))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Stop the running turn of ``session_id`` right away."""
        state = self._sessions.get(session_id)
        if state is not None:
            state.cancel()
            return
        parent = next((s for s in self._sessions.values() if session_id in s.children), None)
        if parent is not None:  # a child session: only its work stops (children.py)
            parent.cancelled_children.add(session_id)

    async def _run(self, turn: Turn, keyword: str) -> StopReason:
        try:
            return await pick_scenario(keyword)(turn)
        except TurnCancelled:
            return "cancelled"

    def _account(self, state: SessionState, prompt: list[ContentBlock], turn: Turn) -> Usage:
        """Record the turn in the session history and return its (fake) token usage."""
        user_text, agent_text = _prompt_text(prompt), "".join(turn.transcript)
        state.history.append(("user", user_text))
        if agent_text:
            state.history.append(("agent", agent_text))
        if self._saved:
            self._saved.save(state)
        input_tokens, output_tokens = max(1, len(user_text) // 4), len(agent_text) // 4
        state.usage.input_tokens += input_tokens
        state.usage.output_tokens += output_tokens
        return Usage(
            total_tokens=input_tokens + output_tokens, input_tokens=input_tokens, output_tokens=output_tokens
        )

    # -- saved sessions (ACP_DEMO_SESSIONS_DIR, see saved.py) ------------------------------

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None,
                            **kwargs: Any) -> ListSessionsResponse:
        """A page of the saved sessions of ``cwd``."""
        sessions, next_cursor = self._saved.page(cwd, cursor) if self._saved else ([], None)
        return ListSessionsResponse(sessions=sessions, next_cursor=next_cursor)

    async def resume_session(self, cwd: str, session_id: str, **kwargs: Any) -> ResumeSessionResponse:
        """Continue a session without replaying it (saved sessions, or ``--resume`` over WebSocket)."""
        if not (self._resume or self._saved):
            raise RequestError.method_not_found("session/resume")
        state = self._session(session_id)
        state.cwd = cwd
        state.mcp_servers = list(kwargs.get("mcp_servers") or [])
        self._announce_commands_soon(session_id)
        return ResumeSessionResponse(modes=state.mode_state(), config_options=state.config_options())

    async def fork_session(self, cwd: str, session_id: str, **kwargs: Any) -> ForkSessionResponse:
        """A new session that starts with a copy of ``session_id``'s history."""
        await gate.passed()
        source = self._session(session_id)
        state = SessionState(session_id=SavedSessions.new_id(), cwd=cwd, history=list(source.history),
                             mcp_servers=list(kwargs.get("mcp_servers") or []))
        self._sessions[state.session_id] = state
        if self._saved:
            self._saved.save(state)
        self._announce_commands_soon(state.session_id)
        return ForkSessionResponse(session_id=state.session_id, modes=state.mode_state(),
                                   config_options=state.config_options())

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """Forget the session in this process; its saved file stays, unless it never had a prompt (then it
        leaves no trace, as agents that keep a conversation only once there is one)."""
        state = self._sessions.pop(session_id, None)
        if state is not None:
            state.cancel()
            if self._saved and not state.history:
                self._saved.forget(session_id)
        return CloseSessionResponse()

    async def delete_session(self, session_id: str, **kwargs: Any) -> DeleteSessionResponse:
        """Forget the session here and on disk: ``session/list`` no longer has it."""
        state = self._sessions.pop(session_id, None)
        if state is not None:
            state.cancel()
        if self._saved:
            self._saved.forget(session_id)
        return DeleteSessionResponse()


    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """``_session/steering`` (steering.py); any other extension method is unknown."""
        if method == "session/steering":
            return await steering.steer(self.client, self._sessions, params)
        raise RequestError.method_not_found(f"_{method}")

    def _session(self, session_id: str) -> SessionState:
        state = self._sessions.get(session_id)
        if state is None and self._saved is not None:
            state = self._saved.restore(session_id)
            if state is not None:
                self._sessions[session_id] = state
        if state is None:
            raise RequestError.invalid_params({"sessionId": session_id, "reason": "unknown session"})
        return state

    def _announce_commands_soon(self, session_id: str) -> None:
        """Send available_commands_update shortly after the current response goes out."""
        task = asyncio.create_task(self._announce_commands(session_id))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _announce_commands(self, session_id: str) -> None:
        await asyncio.sleep(COMMANDS_DELAY)
        with contextlib.suppress(ConnectionError):
            await self.client.session_update(session_id=session_id, update=commands_update())
