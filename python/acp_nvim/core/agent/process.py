"""One agent subprocess behind the ACP SDK's client-side connection.

The process runs in its own process group (``start_new_session``), so that every process it
starts can be ended with it. Its stderr is drained for its whole life (``stderr.py``), one
task watches for its exit, every request of the handshake is answered in time or fails
(``deadline.py``), and closing it is bounded: end of input, a grace period, SIGTERM, SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, TypeVar

from acp import PROTOCOL_VERSION, Client, connect_to_agent
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AuthCapabilities,
    BooleanConfigOptionCapabilities,
    ClientCapabilities,
    ClientSessionCapabilities,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    ElicitationUrlCapabilities,
    FileSystemCapabilities,
    Implementation,
    InitializeRequest,
    InitializeResponse,
    PlanCapabilities,
    SessionConfigOptionsCapabilities,
)
from acp.utils import request_model_from_dict
from pydantic import BaseModel, Field

from .. import install_hints, tasks
from ..config import AgentSpec, TimeoutSettings
from ..errors import AgentExitedError, AgentMissingError, AgentStartError, AgentTimeoutError
from ..log.ring import LogRing
from . import boxing, deadline, process_tree, stderr
from .wire import SENT, WireTransport

T = TypeVar("T")
R = TypeVar("R", bound=BaseModel)
LINE_LIMIT = 64 * 1024 * 1024
STDERR_SUMMARY = 500
STDERR_TAIL = 10
"""stderr lines kept for the user (a crash notice shows the last few)."""
TAIL_CHARS = 300
CLIENT_INFO = Implementation(name="acp.nvim", title="acp.nvim", version="0.1.0")


class SessionAdvertised(ClientSessionCapabilities):
    """``clientCapabilities.session`` with the members newer than the SDK's model (schema 1.19):
    ``notices`` and ``compaction`` (``{}``: the client shows them; agents send neither otherwise)."""

    notices: dict[str, object] | None = None
    compaction: dict[str, object] | None = None


class Advertised(ClientCapabilities):
    session: SessionAdvertised | None = None  # the SDK's model, extended
    subagents: dict[str, object] | None = None
    """``{}``: the client shows subagents as child sessions (the subagents RFD, unstable: an agent then
    sends ``subagent_update`` and the children's own traffic under their session ids)."""


class InitializeAdvertised(InitializeRequest):
    """``initialize`` with ``Advertised`` capabilities: the SDK's own request would serialize them as its
    older model, without the newer members."""

    client_capabilities: Annotated[Advertised | None, Field(alias="clientCapabilities")] = None


CAPABILITIES = Advertised(
    fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=False,
    auth=AuthCapabilities(terminal=True),  # :Ai login runs terminal methods in a Neovim terminal
    elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities(), url=ElicitationUrlCapabilities()),
    plan=PlanCapabilities(),  # plan_update / plan_removed are drawn (core/conversation/updates.py)
    session=SessionAdvertised(config_options=SessionConfigOptionsCapabilities(
        boolean=BooleanConfigOptionCapabilities()), notices={}, compaction={}),
    subagents={},  # core/conversation/children.py
)
"""What acp.nvim advertises in ``initialize`` (``terminal`` per agent: ``AgentSpec.terminal``)."""

NOTHING_SERVED = Advertised(fs=FileSystemCapabilities(read_text_file=False, write_text_file=False), terminal=False,
                            auth=AuthCapabilities(terminal=True))
"""What a process started only to ask the agent something (``session/list``, ``session/delete``, its
login methods) advertises: it serves no file, terminal or question and shows no update. ``auth.terminal``
stays: the editor runs a terminal login method itself (:Ai login), and an agent lists those methods
only to a client that says so."""

CONNECTION_CLOSE = 1.0
STDIN_DRAIN = 0.5
"""Seconds queued input may take to reach an agent that closes; one that stopped reading loses it."""
EOF_GRACE = 1.0
"""Seconds an agent has to exit once its input ended, before SIGTERM."""
TERM_GRACE = 1.0
"""Seconds after SIGTERM, before SIGKILL."""
KILL_WAIT = 2.0
EXIT_GRACE = 0.3
"""At editor exit: seconds (blocking) between SIGTERM and SIGKILL."""

Slow = Callable[[str, "float | None", float], None]
"""A request waits long: (method, seconds waited, its limit); waited is None once it is over."""


def _ignore(*_: object) -> None:
    return None


@dataclass(frozen=True)
class AgentHooks:
    """What the process tells its owner."""

    noise: Callable[[str], None] = _ignore
    """Each (redacted) non-JSON line the agent prints on stdout."""
    report: tasks.ErrorReporter | None = None
    """Failures of the helper tasks (stderr drain, exit watch); the log by default."""
    slow: Slow = _ignore
    exited: Callable[[AgentProcess, int], None] = _ignore
    """The process exited (after a crash, or closed on purpose: see ``closing``)."""
    timeouts: TimeoutSettings = field(default_factory=TimeoutSettings)


class AgentProcess:
    """Spawns an agent, initializes it, drains its stderr, and shuts it down, bounded."""

    def __init__(self, name: str, spec: AgentSpec, client: Client, log: LogRing, cwd: str,
                 hooks: AgentHooks | None = None, *, serves: Advertised | None = None,
                 box_programs: Sequence[tuple[str, Sequence[str]]] = ()) -> None:
        self.name = name
        self.box_programs = box_programs
        """Programs the agent starts itself (its stdio MCP servers): its box shows them."""
        self.advertised = serves if serves is not None else CAPABILITIES.model_copy(update={"terminal": spec.terminal})
        """The client capabilities ``initialize`` advertises: exactly what ``client`` serves."""
        self.spec = spec
        self.log = log
        self.cwd = spec.cwd or cwd
        self.hooks = hooks or AgentHooks()
        self._client = client
        self.conn: ClientSideConnection | None = None
        self._wire: WireTransport | None = None
        self.process: asyncio.subprocess.Process | None = None
        self.info: InitializeResponse | None = None
        self.exited: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self.closing = False
        """Set once ``close`` began: an exit from here on was asked for."""
        self.last_heard = time.monotonic()
        """When the agent last wrote a message on stdout (or was spawned)."""
        self.prompts_sent = 0
        """``session/prompt`` requests written to the agent's stdin."""
        self._identity: process_tree.Proc | None = None
        self._tail: deque[str] = deque(maxlen=STDERR_TAIL)
        self._helpers: list[asyncio.Task[None]] = []
        self._shutdown: asyncio.Task[None] | None = None
        self.more_roots: Callable[[], list[str]] = list
        """Workspace roots besides ``cwd`` (the session's ``workspace_roots``), shown in the box."""
        self.boxing: boxing.Boxing | None = None
        """How the agent was started: boxed (and how its commands are), or why not."""

    # -- start -------------------------------------------------------------------------

    async def start(self) -> InitializeResponse:
        """Spawn and ``initialize``; raise AgentStartError with a readable reason on failure."""
        try:
            await self._spawn()
            self.info = await self.request("initialize", InitializeAdvertised(
                protocol_version=PROTOCOL_VERSION, client_info=CLIENT_INFO,
                client_capabilities=self.advertised),
                InitializeResponse)
            self.log.add("info", "lifecycle", _initialized_summary(self.info),
                         raw=self.info.model_dump_json(by_alias=True, exclude_none=True))
            self._check_version(self.info)
        except BaseException:
            await self.close()
            raise
        return self.info

    def _check_version(self, info: InitializeResponse) -> None:
        """The agent answers the version it chose; one acp.nvim does not speak ends the connection
        (the protocol: the client closes it and tells the user)."""
        version = info.protocol_version
        if type(version) is int and version in SPOKEN_VERSIONS:
            return
        ours = ", ".join(str(v) for v in SPOKEN_VERSIONS)
        message = (f"agent {self.name!r} speaks ACP protocol version {version!r}; acp.nvim speaks version "
                   f"{ours}: connection closed")
        self.log.add("error", "lifecycle", message)
        raise AgentStartError(message)

    async def _spawn(self) -> None:
        self.boxing = await asyncio.to_thread(boxing.prepare, self.name, self.spec, self.cwd,
                                              [self.cwd, *self.more_roots()], os.environ, self.box_programs)
        argv, env = self.boxing.argv, self.boxing.env
        try:
            process = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, env=env, cwd=self.cwd, limit=LINE_LIMIT, start_new_session=True)
        except OSError as exc:
            if isinstance(exc, FileNotFoundError) and install_hints.is_missing(self.spec.command, env):
                install = install_hints.install_line(self.name, self.spec.command)
                raise AgentMissingError(f"cannot start agent {self.name!r}: {self.spec.command} is not installed "
                                        "(not found on PATH)"
                                        + (f"; {install}" if install else ""), install) from None
            raise AgentStartError(f"cannot start agent {self.name!r}: {self.spec.command}: "
                                  f"{exc.strerror or exc}") from None
        assert process.stdout is not None and process.stdin is not None
        self.process = process
        self._identity = process_tree.identify(process.pid)
        # unstable: the SDK 0.12 routes elicitation/* only then (stable in ACP since July 2026)
        self._wire = WireTransport(process.stdout, process.stdin, self, self._client)
        self.conn = connect_to_agent(self._client, self._wire, use_unstable_protocol=True)
        self.log.add("info", "lifecycle", f"spawned pid {process.pid}: "
                     f"{' '.join([self.spec.command, *self.spec.args])} ({self.boxing.note or self.boxing.summary})")
        self._helpers = [tasks.spawn(self._drain_stderr(), self._report, f"{self.name} stderr"),
                         tasks.spawn(self._watch_exit(), self._report, f"{self.name} exit")]

    def _report(self, message: str) -> None:
        """A failure of a helper task: to the owner's reporter (read when it fails: a new owner gets it)."""
        (self.hooks.report or self._log_failure)(message)

    def rebind(self, log: LogRing, hooks: AgentHooks) -> None:
        """A new owner takes the running process (a warm start taken by a session): from now on it logs
        to ``log`` and tells ``hooks``."""
        self.log, self.hooks = log, hooks

    def connection(self) -> ClientSideConnection:
        """The ACP connection (AgentStartError before the process was spawned)."""
        if self.conn is None:
            raise AgentStartError(f"agent {self.name!r} is not running")
        return self.conn

    # -- requests that must be answered in time -------------------------------------------

    async def request(self, method: str, params: BaseModel, response: type[R], limit: float | None = None) -> R:
        """A request sent with our own model, answered in time (``ask``): one the SDK types but does not
        send (``session/delete``, ``logout``), or whose params are newer than its models (``initialize``).
        The one place that reaches the SDK connection's private ``_conn``."""
        return await self.ask(method, request_model_from_dict(self.connection()._conn, method, params, response),
                              limit)

    async def ask(self, method: str, request: Awaitable[T], limit: float | None = None) -> T:
        """``request``'s answer; fails with AgentTimeoutError after ``limit`` seconds (the handshake
        timeout by default) or AgentExitedError when the agent exits first. Once it has waited
        ``timeouts.notice`` seconds the owner hears of it (``hooks.slow``)."""
        timeouts = self.hooks.timeouts
        limit = limit if limit is not None else timeouts.handshake
        noticed = False

        def notice(waited: float) -> None:
            nonlocal noticed
            noticed = True
            self.log.add("warn", "lifecycle", f"no answer to {method} after {waited:g} s")
            self.hooks.slow(method, waited, limit)

        sent: list[int | str] = []
        token = SENT.set(sent)  # the request's task (answer_within) inherits it: the wire notes its ids
        try:
            return await deadline.answer_within(request, limit=limit, notice=timeouts.notice, exited=self.exited,
                                                on_notice=notice)
        except asyncio.CancelledError:
            self._abandon(method, sent, "given up")
            raise
        except deadline.TimedOut:
            self._abandon(method, sent, "timed out")
            raise AgentTimeoutError(f"agent {self.name!r} did not answer {method} within {limit:g} s "
                                    f"(timed out){self._tail_suffix()}") from None
        except deadline.Exited as exc:
            raise AgentExitedError(f"agent {self.name!r} {exit_summary(exc.code).removeprefix('agent ')} "
                                   f"during {method}{self._tail_suffix()}") from None
        finally:
            SENT.reset(token)
            if noticed:
                self.hooks.slow(method, None, limit)

    def _abandon(self, method: str, sent: list[int | str], why: str) -> None:
        """Tell the agent we no longer wait for ``method`` (``$/cancel_request``)."""
        if self._wire is None or self.exited.done():
            return
        for msg_id in self._wire.abandon(sent):
            self.log.add("info", "lifecycle", f"withdrew {method} (request {msg_id!r}, {why}): $/cancel_request")

    # -- what the agent says ---------------------------------------------------------------

    def message(self, direction: str, message: Mapping[str, object], raw: str | bytes | memoryview) -> None:
        """Wire tap: every JSON-RPC message, as it crossed the pipe."""
        if direction == "in":
            self.last_heard = time.monotonic()
        elif message.get("method") == "session/prompt":
            self.prompts_sent += 1
        self.log.record_message(direction, message, raw)

    def streamed(self, raw: bytes) -> None:
        """Wire tap: a streamed text chunk (the hot path: kept by the log only at level trace)."""
        self.last_heard = time.monotonic()
        self.log.record_streamed("in", raw)

    def noise(self, line: str) -> None:
        """Wire tap: a non-JSON line on the agent's stdout; kept, maybe shown, never fatal."""
        self.log.record_stdout(line)
        self.hooks.noise(self.log.redact(line))

    def stderr_tail(self, count: int = 5) -> list[str]:
        """The agent's last ``count`` stderr lines (redacted, each cut short)."""
        return [self.log.redact(line) for line in list(self._tail)[-count:]]

    def _tail_suffix(self) -> str:
        tail = self.stderr_tail(3)
        return f"; stderr: {' | '.join(tail)}" if tail else ""

    async def _drain_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        await stderr.drain(self.process.stderr, self._stderr_line)

    def _stderr_line(self, line: str, dropped: int) -> None:
        if line.strip():
            self._tail.append(line[:TAIL_CHARS])
        more = f" … ({dropped:,} more bytes dropped)" if dropped else ""
        long_line = len(line) > STDERR_SUMMARY  # the entry line stays short; the kept line is folded under it
        self.log.add("info", "stderr", line[:STDERR_SUMMARY] + more, direction="in", raw=line if long_line else None)

    def _log_failure(self, message: str) -> None:
        self.log.add("error", "error", message)

    # -- exit --------------------------------------------------------------------------------

    async def _watch_exit(self) -> None:
        """The one exit watcher of this process: it ends when the process does."""
        assert self.process is not None
        code = await self.process.wait()
        self.log.add("warn" if code and not self.closing else "info", "lifecycle", exit_summary(code))
        if not self.exited.done():
            self.exited.set_result(code)
        self.hooks.exited(self, code)

    @property
    def alive(self) -> bool:
        """Spawned, not exited, and its stdout still open (a message can still be answered)."""
        process = self.process
        if process is None or self.exited.done() or self.closing:
            return False
        return process.stdout is None or not process.stdout.at_eof()

    async def close(self) -> None:
        """End the agent, bounded: the connection, stdin (never waiting on an agent that stopped
        reading), a grace period, SIGTERM, SIGKILL; then its children that outlived it."""
        self.closing = True
        if self._shutdown is None:
            self._shutdown = tasks.spawn(self._close(), self._report, f"{self.name} close")
        await asyncio.shield(self._shutdown)

    async def _close(self) -> None:
        if self.process is None:
            return
        tree = await asyncio.to_thread(self.kill_targets)
        if self.conn is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.conn.close(), CONNECTION_CLOSE)
        await self._end_input()
        if not await self._exited_within(EOF_GRACE):
            self._signal(signal.SIGTERM)
            if not await self._exited_within(TERM_GRACE):
                self._signal(signal.SIGKILL)
                await self._exited_within(KILL_WAIT)
        await process_tree.reap(process_tree.alive(tree))
        for helper in self._helpers:
            helper.cancel()

    async def _end_input(self) -> None:
        """End of input for the agent. Input it has not read within ``STDIN_DRAIN`` is dropped."""
        assert self.process is not None
        stdin = self.process.stdin
        if stdin is None or stdin.is_closing():
            return
        with contextlib.suppress(OSError, RuntimeError):
            stdin.write_eof()
        try:
            await asyncio.wait_for(stdin.drain(), STDIN_DRAIN)
        except TimeoutError:
            stdin.transport.abort()
        except (OSError, RuntimeError):
            pass

    async def _exited_within(self, seconds: float) -> bool:
        await asyncio.wait({self.exited}, timeout=seconds)
        return self.exited.done()

    def _signal(self, sig: int) -> None:
        """``sig`` to the agent and every process of its group."""
        assert self.process is not None
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(sig)
        if self._identity is not None:
            process_tree.signal_all(process_tree.group(self._identity), sig)

    def kill_targets(self) -> list[process_tree.Proc]:
        """The agent, its process group and its descendants, as they are now (blocking: reads /proc)."""
        if self.process is None or self._identity is None:
            return []
        found = dict([self._identity, *process_tree.group(self._identity),
                      *process_tree.descendants(self.process.pid)])
        return process_tree.alive(found.items())

    def kill_now(self) -> None:
        """Editor exit, where nothing can be awaited: end the agent and its children now (bounded)."""
        kill_all_now([self])


def kill_all_now(processes: list[AgentProcess], grace: float = EXIT_GRACE) -> None:
    """End every one of ``processes`` and their children at once: input closed, SIGTERM, a short
    blocking wait (``grace`` seconds in all), then SIGKILL for whatever is left."""
    targets: list[process_tree.Proc] = []
    for agent in processes:
        agent.closing = True
        stdin = agent.process.stdin if agent.process is not None else None
        if stdin is not None and not stdin.is_closing():
            with contextlib.suppress(Exception):
                stdin.transport.abort()
        targets += agent.kill_targets()
    process_tree.kill_now(targets, grace)


def exit_summary(code: int) -> str:
    """The words for an exit code: agent exited with code 3, agent killed by signal SIGKILL."""
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"agent killed by signal {signal.Signals(-code).name}"
        return f"agent killed by signal {-code}"
    return f"agent exited with code {code}"


SPOKEN_VERSIONS: tuple[int, ...] = (PROTOCOL_VERSION,)
"""The ACP protocol versions acp.nvim speaks (it asks for the newest in ``initialize``)."""


def _initialized_summary(info: InitializeResponse) -> str:
    agent = info.agent_info
    name = f"{agent.name} {agent.version or ''}".rstrip() if agent else "unnamed agent"
    caps = info.agent_capabilities
    flags = [f"protocol {info.protocol_version}"]
    if caps is not None:
        flags += [label for label, on in (("loadSession", caps.load_session),) if on]
        prompt = caps.prompt_capabilities
        if prompt is not None:
            flags += [f"prompt.{k}" for k in ("image", "audio", "embedded_context") if getattr(prompt, k, False)]
    auth = [m.id for m in info.auth_methods or [] if getattr(m, "id", None)]
    flags.append(f"auth: {', '.join(auth) or 'none'}")
    return f"initialized {name} ({'; '.join(flags)})"
