"""Warm starts (|acp_nvim-warm|): for each agent kept warm, one agent process started and initialized
ahead of time and, where the agent can close it again (``session/close``) and does not bill per
session, one fresh ``session/new`` too. The next ``:Ai new`` (or first ``:Ai send``) of that agent
in that folder takes it (``AgentLink.adopt``) instead of waiting for a cold start.

The pool is a part of the session manager. It starts processes only when the editor says it is
idle (``fill``), never while a session of its own starts; a taken process is replaced at the next
idle moment; a process nobody took is closed after ``warm_idle_s``, when the configuration stops
asking for it, and at editor exit (``session/close`` for its session, end of input, then the usual
escalation): none outlives the editor. A warm session that was never used is closed, so it stays
in no agent's list, and it is never recorded: no ``Session`` exists for it until one takes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from acp import RequestError
from acp.schema import NewSessionResponse

from .. import tasks
from ..agent.process import AgentHooks, AgentProcess
from ..config import AgentSpec, Settings
from ..connection.capabilities import extra_dirs, offers
from ..connection.relay import Relay, relay_client
from ..errors import AcpNvimError, AgentStartError
from ..files.paths import PathPolicy
from ..log.redact import Redactor
from ..log.ring import LogRing
from ..mcp.session_mcp import EditorMcpHost, SessionMcp

CLOSE_TIMEOUT = 3.0
"""``session/close`` of an unused warm session must not hold up its closing."""
RETRY_AFTER = 300.0
"""Seconds before an agent whose warm start failed is tried again (it starts cold meanwhile)."""


@dataclass(eq=False)
class Warm:
    """One agent process started ahead of time (``link.Warmed``)."""

    name: str
    spec: AgentSpec
    cwd: str
    process: AgentProcess
    relay: Relay
    log: LogRing
    mcp: SessionMcp
    started: float = field(default_factory=time.monotonic)
    task: asyncio.Task[NewSessionResponse | None] | None = None
    expiry: asyncio.TimerHandle | None = None
    closer: Callable[[Warm], None] = lambda entry: None

    def abandon(self) -> None:
        """The session that took it stopped before it was running on it: close it (as the pool does)."""
        self.closer(self)

    async def opened(self) -> NewSessionResponse | None:
        """The session opened ahead of time (None: none); AgentStartError when the agent did not start."""
        assert self.task is not None
        try:
            return await asyncio.shield(self.task)
        except asyncio.CancelledError:
            if self.task.cancelled():
                raise AgentStartError(f"the warm {self.name} agent was closed") from None
            raise

    @property
    def session_id(self) -> str | None:
        task = self.task
        if task is None or not task.done() or task.cancelled() or task.exception() is not None:
            return None
        response = task.result()
        return response.session_id if response is not None else None

    def fits(self, name: str, spec: AgentSpec, cwd: str) -> bool:
        return (self.name, self.spec, self.cwd) == (name, spec, cwd) and not self.failed

    @property
    def failed(self) -> bool:
        task = self.task
        return (task is not None and task.done() and (task.cancelled() or task.exception() is not None)) \
            or self.process.exited.done()


class WarmPool:
    """The warm processes of one editor, at most one per agent."""

    def __init__(self, settings: Callable[[], Settings], spec_of: Callable[[str], AgentSpec],
                 editor_mcp: EditorMcpHost | None, report: tasks.ErrorReporter,
                 starting: Callable[[], bool] = lambda: False) -> None:
        self._settings = settings
        self._spec_of = spec_of
        self._starting = starting
        """Whether a session is starting now: warm processes wait for the next idle moment then."""
        self._editor_mcp = editor_mcp
        self._report = report
        self.entries: dict[str, Warm] = {}
        self.closing: dict[Warm, asyncio.Task[None]] = {}
        self._failed_at: dict[str, float] = {}
        self.want_idle: Callable[[], None] = lambda: None
        """Asks the editor to call ``fill`` at its next idle moment (the editor layer sets it)."""
        self.changed: Callable[[], None] = lambda: None
        """Told when a warm process starts, is ready, is taken or goes (the editor layer shows ``status``)."""

    # -- the editor's side --------------------------------------------------------------------

    def fill(self, cwd: str) -> list[str]:
        """The editor is idle: close what is no longer wanted, start what is missing (names started);
        while a session starts, nothing starts (the next idle moment is asked for)."""
        settings = self._settings()
        wanted = set(settings.warm_agents())
        for name, entry in list(self.entries.items()):
            if name not in wanted or not entry.fits(name, self._spec_of(name), cwd):
                self.retire(entry)
        if self._starting() and wanted - set(self.entries):
            self.want_idle()
            return []
        started = []
        for name in settings.warm_agents():
            if name not in self.entries and time.monotonic() - self._failed_at.get(name, -RETRY_AFTER) >= RETRY_AFTER:
                self.entries[name] = self._start(name, self._spec_of(name), cwd, settings)
                started.append(name)
        if started:
            self.changed()
        return started

    def take(self, name: str, spec: AgentSpec, cwd: str) -> Warm | None:
        """The warm process of ``name`` for a new session in ``cwd`` (None: none fits); it is replaced at
        the editor's next idle moment."""
        entry = self.entries.get(name)
        if entry is None or not entry.fits(name, spec, cwd):
            if name in self._settings().warm_agents():
                self.want_idle()  # kept warm, but none fits (another folder, or none started yet)
            return None
        del self.entries[name]
        if entry.expiry is not None:
            entry.expiry.cancel()
        self.want_idle()
        self.changed()
        return entry

    def processes(self) -> list[AgentProcess]:
        """Every warm process, closing ones included (editor exit ends them)."""
        return [entry.process for entry in [*self.entries.values(), *self.closing]]

    def status(self) -> dict[str, str]:
        """Per agent kept warm and not taken: ``starting`` or ``ready``."""
        return {name: "ready" if entry.task is not None and entry.task.done() else "starting"
                for name, entry in self.entries.items()}

    def retire(self, entry: Warm) -> None:
        """Close ``entry`` in a task: its session (``session/close``), then its process."""
        if self.entries.get(entry.name) is entry:
            del self.entries[entry.name]
            self.changed()
        if entry.expiry is not None:
            entry.expiry.cancel()
        if entry not in self.closing:
            self.closing[entry] = tasks.spawn(self._close(entry), self._report, f"closing the warm {entry.name} agent")

    async def close_all(self) -> None:
        """Close every warm process (editor exit, while it can still be awaited)."""
        for entry in list(self.entries.values()):
            self.retire(entry)
        await asyncio.gather(*self.closing.values(), return_exceptions=True)

    # -- a warm process's life ----------------------------------------------------------------

    def _start(self, name: str, spec: AgentSpec, cwd: str, settings: Settings) -> Warm:
        mcp = SessionMcp(name, settings, self._editor_mcp)
        redact = Redactor.for_env({**spec.env, **spec.headers, **mcp.secrets()}, patterns=settings.redaction.patterns)
        log = LogRing(settings.log.max_entries, settings.log.max_bytes, settings.log.level, redact=redact)
        relay = Relay(settings.wire, _logger(log, "info", "wire"))
        quiet = _logger(log, "error", "error")  # told when a session takes it and it failed
        hooks = AgentHooks(report=quiet, exited=self._exited, timeouts=settings.timeouts)
        process = AgentProcess(name, spec, relay_client(relay), log, cwd, hooks, box_programs=mcp.programs())
        policy = PathPolicy.for_workspace(cwd, [*settings.workspace_roots, *([spec.cwd] if spec.cwd else [])])
        mcp.bind(f"warm:{name}", cwd, policy, log, lambda text, kind: None)
        entry = Warm(name, spec, cwd, process, relay, log, mcp, closer=self.retire)
        entry.task = tasks.spawn(self._warm_up(entry, settings), quiet, f"warm start of {name}")
        entry.task.add_done_callback(lambda _: self.changed() if self.entries.get(name) is entry else None)
        log.add("info", "lifecycle", "a warm start: the editor was idle")
        return entry

    async def _warm_up(self, entry: Warm, settings: Settings) -> NewSessionResponse | None:
        try:
            info = await entry.process.start()
        except AcpNvimError as exc:
            self._failed_at[entry.name] = time.monotonic()
            entry.log.add("warn", "lifecycle", f"the warm start failed: {exc}")
            raise
        entry.expiry = asyncio.get_running_loop().call_later(settings.warm_idle_s, self._expire, entry)
        if entry.spec.bills_per_session or not offers(info, "close"):
            return None  # a session ahead of time only where it can be closed unused, and costs nothing
        try:
            return await entry.process.ask("session/new", entry.process.connection().new_session(
                cwd=entry.cwd, mcp_servers=entry.mcp.servers_for(info),
                additional_directories=extra_dirs(info, list(settings.workspace_roots))))
        except (RequestError, AcpNvimError) as exc:  # a login it wants, say: the session opens when taken
            entry.log.add("info", "lifecycle", f"no warm session ({exc}): it opens when a session takes the agent")
            return None

    def _expire(self, entry: Warm) -> None:
        entry.expiry = None
        if self.entries.get(entry.name) is entry:
            entry.log.add("info", "lifecycle", "nobody took the warm agent: closing it")
            self.retire(entry)

    def _exited(self, process: AgentProcess, code: int) -> None:
        """A warm process nobody took exited (not closed by us): forget it; the next idle moment starts
        another, unless it failed to start."""
        for entry in list(self.entries.values()):
            if entry.process is process and not process.closing:
                del self.entries[entry.name]
                self._failed_at[entry.name] = time.monotonic()
                if entry.expiry is not None:
                    entry.expiry.cancel()
                self.changed()

    async def _close(self, entry: Warm) -> None:
        entry.relay.close()  # a request still waiting for a session that takes the process: cancelled
        try:
            if entry.task is not None and not entry.task.done():
                entry.task.cancel()
                with contextlib.suppress(BaseException):
                    await entry.task
            process, session_id = entry.process, entry.session_id
            if session_id is not None and process.alive and offers(process.info, "close"):
                with contextlib.suppress(RequestError, ConnectionError, AcpNvimError):
                    await process.ask("session/close", process.connection().close_session(session_id=session_id),
                                      limit=CLOSE_TIMEOUT)
            entry.mcp.close()
            await process.close()
        finally:
            self.closing.pop(entry, None)


def _logger(log: LogRing, level: str, kind: str) -> Callable[[str], None]:
    def add(text: str) -> None:
        log.add(level, kind, text)
    return add


def spec_with(login_env: Mapping[str, Mapping[str, str]], name: str, spec: AgentSpec) -> AgentSpec:
    """``spec`` with the variables ``:Ai login`` asked for added to its environment."""
    extra = login_env.get(name) or {}
    return spec.model_copy(update={"env": {**spec.env, **extra}}) if extra else spec
