"""The ACP side of the misbehaving agent: handshake, sessions, modes, prompts, cancel."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any, cast

from acp import PROTOCOL_VERSION, RequestError
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionMode,
    SessionModeState,
    SessionResumeCapabilities,
    SetSessionModeResponse,
    StopReason,
)

from .config import Config
from .events import Events
from .scenarios import Turn, run_scenario
from .transport import TapTransport

MODES = SessionModeState(current_mode_id="ask", available_modes=[
    SessionMode(id="ask", name="Ask"), SessionMode(id="code", name="Code")])


class FaultAgent:
    """Answers like a plain agent except where ``Config`` and the prompt say otherwise."""

    def __init__(self, config: Config, events: Events, transport: TapTransport) -> None:
        self.config = config
        self.events = events
        self.transport = transport
        self.client: Client | None = None
        self.cancelled: dict[str, asyncio.Event] = {}
        self._ids = itertools.count(1)

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    async def _maybe_hang(self, method: str) -> None:
        if self.config.should_hang(method):
            self.events.add("hang", method=method)
            await asyncio.Event().wait()

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        await self._maybe_hang("initialize")
        sessions = SessionCapabilities(resume=SessionResumeCapabilities() if self.config.resume else None)
        capabilities = AgentCapabilities(load_session=self.config.load, session_capabilities=sessions,
                                         prompt_capabilities=PromptCapabilities(embedded_context=True))
        return InitializeResponse(protocol_version=PROTOCOL_VERSION, agent_capabilities=capabilities,
                                  agent_info=Implementation(name="fault-agent", version="1.0"))

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        await self._maybe_hang("session/new")
        return NewSessionResponse(session_id=f"fault-{self.events.pid}-{next(self._ids)}",
                                  modes=MODES if self.config.modes else None)

    async def load_session(self, cwd: str, session_id: str, **kwargs: Any) -> LoadSessionResponse:
        await self._maybe_hang("session/load")
        return LoadSessionResponse(modes=MODES if self.config.modes else None)

    async def resume_session(self, session_id: str, cwd: str, **kwargs: Any) -> ResumeSessionResponse:
        await self._maybe_hang("session/resume")
        return ResumeSessionResponse(modes=MODES if self.config.modes else None)

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        await self._maybe_hang("session/set_mode")
        return SetSessionModeResponse()

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        raise RequestError.invalid_params({"methodId": method_id})

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        assert self.client is not None
        text = "".join(getattr(block, "text", "") for block in prompt)
        cancelled = self.cancelled[session_id] = asyncio.Event()
        turn = Turn(self.client, self.config, self.events, self.transport, session_id, text, cancelled)
        return PromptResponse(stop_reason=cast(StopReason, await run_scenario(turn)))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self.events.add("cancel", session=session_id)
        if session_id in self.cancelled:
            self.cancelled[session_id].set()
