"""The agent behind a session: its process and the ACP session on it.

Opening spawns and initializes the agent, logs in when it asks, opens a session in the
editor's cwd and selects the configured mode. Reopening (after ``:Ai restart``) starts a
fresh process and gets back to the same conversation when the agent can resume or load it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Protocol

from acp import Client, RequestError
from acp.client.connection import ClientSideConnection
from acp.schema import (
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptCapabilities,
    ResumeSessionResponse,
)

from ..agent.process import AgentHooks, AgentProcess
from ..agent.remote import RemoteAgent
from ..config import AgentSpec
from ..conversation.details import SessionDetails
from ..errors import AcpNvimError, AgentTimeoutError, SessionClosedError
from ..log.ring import LogRing
from ..mcp.servers import SessionMcpServer
from ..mcp.session_mcp import McpServersFor
from ..prompting import attachments
from . import auth, capabilities, reattach
from .capabilities import extra_dirs
from .relay import Relay

Attached = NewSessionResponse | LoadSessionResponse | ResumeSessionResponse
NEW = "new"
"""How a reopen ended when the agent could not resume or load: a new ACP session."""
Notice = Callable[[str, str], None]
"""A line in the chat: (text, kind)."""
Replaying = Callable[[bool], None]
"""Told True while the agent replays a reloaded conversation (already in the transcript)."""


class Warmed(Protocol):
    """An agent process started before its session existed (``core/session/warm.py``), for ``adopt``."""

    @property
    def process(self) -> AgentProcess: ...

    @property
    def log(self) -> LogRing:
        """What happened to it so far (the taking session's log gets it)."""
        ...

    @property
    def relay(self) -> Relay: ...

    @property
    def started(self) -> float:
        """When it was started (``time.monotonic``)."""
        ...

    async def opened(self) -> NewSessionResponse | None:
        """The end of its start: the session it opened ahead of time (None: none); an AcpNvimError when
        the agent did not start."""
        ...

    def abandon(self) -> None:
        """Close it: the session stopped before it took it (closed while it started)."""
        ...


class AgentLink:
    """One session's agent process and ACP session id; the process is replaced on restart."""

    def __init__(self, key: str, agent: str, spec: AgentSpec, cwd: str, *, client: Client, log: LogRing,
                 details: SessionDetails, notice: Notice, warn: Callable[[str], None], choose: auth.Choose,
                 replaying: Replaying, hooks: AgentHooks, mcp_servers: McpServersFor = lambda info: [],
                 box_programs: Sequence[tuple[str, Sequence[str]]] = ()) -> None:
        self.key = key
        self.agent = agent
        self.spec = spec
        self.cwd = cwd
        self.session_id: str | None = None
        self._client = client
        self._log = log
        self._details = details
        self._notice = notice
        self._warn = warn
        self._choose = choose
        self._replaying = replaying
        self._hooks = hooks
        self._mcp_servers = mcp_servers
        self._box_programs = box_programs
        """The programs of the stdio MCP servers the agent starts: its box shows them."""
        """The ``mcpServers`` for session/new, load and resume, per the agent's capabilities (core/mcp)."""
        self.roots: list[str] = []
        """``workspace_roots``, sent as additionalDirectories where offered."""
        self.process = self._new_process()
        self.retiring: set[AgentProcess] = set()
        """Replaced processes that may still be ending (editor exit ends them too)."""

    def _new_process(self) -> AgentProcess:
        kind = RemoteAgent if self.spec.remote else AgentProcess  # over WebSocket
        process = kind(self.agent, self.spec, self._client, self._log, self.cwd, self._hooks,
                       box_programs=self._box_programs)
        process.more_roots = lambda: list(self.roots)
        return process

    @property
    def connection(self) -> ClientSideConnection:
        """The agent's ACP connection (SessionClosedError before the process started)."""
        conn = self.process.conn
        if conn is None:
            raise SessionClosedError(f"session {self.key}: the agent is not running")
        return conn

    @property
    def session(self) -> str:
        """The ACP session id (SessionClosedError before the session was opened)."""
        if self.session_id is None:
            raise SessionClosedError(f"session {self.key} has not started yet")
        return self.session_id

    @property
    def prompt_capabilities(self) -> PromptCapabilities | None:
        """What the agent takes in prompts besides text (embedded context, images, audio)."""
        return capabilities.prompt_capabilities(self.process.info)

    @property
    def accepts(self) -> attachments.Accepts:
        """What prompts may carry besides text and links (embedded context, images, audio)."""
        return capabilities.accepts(self.process.info)

    @property
    def embedded_context(self) -> bool:
        """Whether the agent accepts embedded resources in prompts (else: resource links)."""
        return capabilities.embedded_context(self.process.info)

    async def open(self) -> Attached:
        """Spawn, initialize and open a new ACP session (logging in when the agent asks)."""
        await self.process.start()
        response = await self._new_session()
        self.session_id = response.session_id
        return response

    async def adopt(self, warm: Warmed) -> Attached:
        """Take a warm process (and the session it opened ahead of time, if any) instead of spawning one.
        A warm start that failed, or whose agent has exited since, gives way to a new process."""
        try:
            response = await warm.opened()
        except AcpNvimError as exc:
            self._log.add("warn", "lifecycle", f"the warm agent did not start ({exc}): starting a new one")
            return await self.open()
        except asyncio.CancelledError:
            warm.abandon()  # closed while it started: the warm process is nobody's now
            raise
        process = warm.process
        if not process.alive:
            self._log.add("warn", "lifecycle", "the warm agent has exited: starting a new one")
            return await self.open()
        self._log.take(warm.log)
        process.rebind(self._log, self._hooks)
        warm.relay.attach(self._client)
        self.process = process
        pid = process.process.pid if process.process is not None else "?"
        self._log.add("info", "lifecycle", f"took the warm agent (pid {pid}, started "
                      f"{time.monotonic() - warm.started:.1f} s ago{', with its session' if response else ''})")
        if response is None:
            response = await self._new_session()
        self.session_id = response.session_id
        return response

    async def replace_process(self) -> None:
        """Close the agent process and prepare a fresh one (``:Ai restart``). The old process is
        in ``retiring`` until it has exited, even when this is cancelled (its close goes on)."""
        old = self.process
        self.retiring.add(old)
        try:
            await old.close()
        finally:
            if old.process is None or old.exited.done():
                self.retiring.discard(old)
            else:
                old.exited.add_done_callback(lambda _: self.retiring.discard(old))
        self.process = self._new_process()
        self._log.add("info", "lifecycle", "restart requested")

    async def reopen(self) -> tuple[Attached, str]:
        """Start the fresh process on the same conversation if the agent can: the response and how
        (``reattach.RESUMED``, ``reattach.RELOADED``, or ``NEW`` for a new ACP session)."""
        await self.process.start()
        if self.session_id is not None:
            self._replaying(True)
            try:
                info = self.process.info
                attached = await reattach.reattach(self.process, self.session_id, self.cwd, self.mcp_servers(info),
                                                   dirs=extra_dirs(info, self.roots))
            finally:
                self._replaying(False)
            if attached is not None:
                return attached
        response = await self._new_session()
        self.session_id = response.session_id
        return response, NEW

    async def open_new(self) -> NewSessionResponse:
        """A new ACP session on the running process (a rewind that cannot fork at a message)."""
        response = await self._new_session()
        self.session_id = response.session_id
        return response

    async def _new_session(self) -> NewSessionResponse:
        return await auth.new_session(self.process, self.cwd, self._choose, self._notice,
                                      self.mcp_servers(self.process.info), extra_dirs(self.process.info, self.roots))

    def mcp_servers(self, info: InitializeResponse | None) -> list[SessionMcpServer]:
        """The ``mcpServers`` to send with session/new, load, resume or fork to an agent that said ``info``;
        the log says which (an agent such as codex-acp 2.6 offers their tools only behind a tool of its
        own, ``tool_search``, and reports nothing about them: the log is where the user sees what went)."""
        servers = self._mcp_servers(info)
        passed = ", ".join(f"{server.name} ({getattr(server, 'type', None) or 'stdio'})" for server in servers)
        self._log.add("info", "lifecycle", f"mcpServers passed to the agent: {passed or 'none'}")
        return servers

    async def attach(self, response: Attached) -> None:
        """Take the modes and options of a new/load/resume response; select the configured mode."""
        details = self._details
        if response.modes is not None:
            details.mode = response.modes.current_mode_id
            details.modes = [(m.id, m.name) for m in response.modes.available_modes]
            details.mode_descriptions = {m.id: m.description for m in response.modes.available_modes if m.description}
        details.set_options(response.config_options)
        details.mode_from_options()  # a mode option wins over modes
        await self._select_configured_mode()

    async def _select_configured_mode(self) -> None:
        """Select the agent spec's ``mode`` (presets set it so the permission policy holds): in the mode
        config option where the agent offers one, else among its modes."""
        wanted, details = self.process.spec.mode, self._details
        if not wanted or wanted == details.mode:
            return
        if wanted not in details.mode_values():
            self._warn(f"the agent offers no mode {wanted!r}; staying in {details.mode or 'its default'}")
            return
        option = details.mode_option()
        try:
            if option is not None:
                answer = await self.process.ask("session/set_config_option", self.connection.set_config_option(
                    config_id=option.id, session_id=self.session, value=wanted))
                details.set_options(answer.config_options)
                details.mode_from_options()
                return
            await self.process.ask("session/set_mode",
                                   self.connection.set_session_mode(session_id=self.session, mode_id=wanted))
        except (RequestError, AgentTimeoutError) as exc:
            self._warn(f"selecting mode {wanted!r} failed: {exc}; staying in {details.mode or 'its default'}")
            return
        details.mode = wanted
