"""The agent behind a session: its process and the ACP session on it.

Opening spawns and initializes the agent, logs in when it asks, opens a session in the
editor's cwd and selects the configured mode. Reopening (after ``:Ai restart``) starts a
fresh process and gets back to the same conversation when the agent can resume or load it.
"""

from __future__ import annotations

from collections.abc import Callable

from acp import Client, RequestError
from acp.client.connection import ClientSideConnection
from acp.schema import LoadSessionResponse, NewSessionResponse, ResumeSessionResponse

from ..agent.process import AgentProcess
from ..config import AgentSpec
from ..errors import SessionClosedError
from ..log.ring import LogRing
from ..tasks import ErrorReporter
from . import auth, reattach
from .details import SessionDetails
from .past import extra_dirs

Attached = NewSessionResponse | LoadSessionResponse | ResumeSessionResponse
Notice = Callable[[str, str], None]
"""A line in the chat: (text, kind)."""
Replaying = Callable[[bool], None]
"""Told True while the agent replays a reloaded conversation (already in the transcript)."""


class AgentLink:
    """One session's agent process and ACP session id; the process is replaced on restart."""

    def __init__(self, key: str, agent: str, spec: AgentSpec, cwd: str, *, client: Client, log: LogRing,
                 details: SessionDetails, notice: Notice, warn: Callable[[str], None], choose: auth.Choose,
                 replaying: Replaying, noise: Callable[[str], None], report: ErrorReporter) -> None:
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
        self._noise = noise
        self._report = report
        self.roots: list[str] = []
        """``workspace_roots``, sent as additionalDirectories where offered (sessions lane)."""
        self.process = self._new_process()

    def _new_process(self) -> AgentProcess:
        return AgentProcess(self.agent, self.spec, self._client, self._log, self.cwd, self._noise, self._report)

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
    def embedded_context(self) -> bool:
        """Whether the agent accepts embedded resources in prompts (else: resource links)."""
        info = self.process.info
        caps = info.agent_capabilities if info is not None else None
        prompt_caps = caps.prompt_capabilities if caps is not None else None
        return bool(prompt_caps and prompt_caps.embedded_context)

    async def open(self) -> Attached:
        """Spawn, initialize and open a new ACP session (logging in when the agent asks)."""
        await self.process.start()
        response = await self._new_session()
        self.session_id = response.session_id
        return response

    async def replace_process(self) -> None:
        """Close the agent process and prepare a fresh one (``:Ai restart``)."""
        await self.process.close()
        self.process = self._new_process()
        self._log.add("info", "lifecycle", "restart requested")

    async def reopen(self) -> tuple[Attached, str]:
        """Start the fresh process on the same conversation if the agent can; the response and how."""
        info = await self.process.start()
        self._replaying(True)
        try:
            attached = await reattach.reattach(self.connection, info, self.session_id or "", self.cwd)
        finally:
            self._replaying(False)
        if attached is not None:
            return attached
        response = await self._new_session()
        self.session_id = response.session_id
        return response, "new session: the agent cannot reload the old one"

    async def _new_session(self) -> NewSessionResponse:
        return await auth.new_session(self.agent, self.connection, self.process.info, self.cwd, self._choose,
                                      self._notice, extra_dirs(self.process.info, self.roots))

    async def attach(self, response: Attached) -> None:
        """Take the modes and options of a new/load/resume response; select the configured mode."""
        details = self._details
        if response.modes is not None:
            details.mode = response.modes.current_mode_id
            details.modes = [(m.id, m.name) for m in response.modes.available_modes]
        details.set_options(response.config_options)
        await self._select_configured_mode()

    async def _select_configured_mode(self) -> None:
        """Select the agent spec's ``mode`` (presets set it so the permission policy holds)."""
        wanted, details = self.process.spec.mode, self._details
        if not wanted or wanted == details.mode:
            return
        if wanted not in {mid for mid, _ in details.modes}:
            self._warn(f"the agent offers no mode {wanted!r}; staying in {details.mode or 'its default'}")
            return
        try:
            await self.connection.set_session_mode(session_id=self.session, mode_id=wanted)
        except RequestError as exc:
            self._warn(f"selecting mode {wanted!r} failed: {exc}")
            return
        details.mode = wanted
