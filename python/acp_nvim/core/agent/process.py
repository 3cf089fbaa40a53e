"""One agent subprocess behind the ACP SDK's client-side connection."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable, Collection, Mapping
from contextlib import AsyncExitStack

from acp import PROTOCOL_VERSION, Client, connect_to_agent, spawn_stdio_transport
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AuthCapabilities,
    ClientCapabilities,
    FileSystemCapabilities,
    Implementation,
    InitializeResponse,
)

from .. import tasks
from ..config import AgentSpec
from ..errors import AgentStartError
from ..log.ring import LogRing
from . import process_tree
from .wire import WireTransport

LINE_LIMIT = 64 * 1024 * 1024
INITIALIZE_TIMEOUT = 60.0
STDERR_SUMMARY = 500
CLIENT_INFO = Implementation(name="acp.nvim", title="acp.nvim", version="0.1.0")
CAPABILITIES = ClientCapabilities(
    fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=False,
    auth=AuthCapabilities(terminal=True),  # sessions lane: :Ai login runs terminal methods in a Neovim terminal
)


class AgentProcess:
    """Spawns an agent, initializes it, drains its stderr, and shuts it down cleanly."""

    def __init__(self, name: str, spec: AgentSpec, client: Client, log: LogRing, cwd: str,
                 on_noise: Callable[[str], None] | None = None, report: tasks.ErrorReporter | None = None) -> None:
        self.name = name
        self.spec = spec
        self.log = log
        self.cwd = spec.cwd or cwd
        self._client = client
        self._stack = AsyncExitStack()
        self.conn: ClientSideConnection | None = None
        self.process: asyncio.subprocess.Process | None = None
        self.info: InitializeResponse | None = None
        self.exited: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._stderr_tail: list[str] = []
        self._helpers: list[asyncio.Task[None]] = []
        self.on_noise = on_noise or (lambda line: None)
        """Called with each (redacted) non-JSON line the agent prints on stdout."""
        self._report: tasks.ErrorReporter = report or self._log_failure
        """Failures of the helper tasks (stderr drain, exit watch)."""

    async def start(self) -> InitializeResponse:
        """Spawn and ``initialize``; raise AgentStartError with a readable reason on failure."""
        try:
            await self._spawn()
            self.info = await self._initialize()
        except BaseException:
            await self.close()
            raise
        self.log.add("info", "lifecycle", _initialized_summary(self.info),
                     raw=self.info.model_dump_json(by_alias=True, exclude_none=True))
        return self.info

    async def _spawn(self) -> None:
        env = {**os.environ, **self.spec.env}
        try:
            reader, writer, self.process = await self._stack.enter_async_context(spawn_stdio_transport(
                self.spec.command, *self.spec.args, env=env, cwd=self.cwd, limit=LINE_LIMIT,
            ))
            conn = self.conn = connect_to_agent(self._client, WireTransport(reader, writer, self))
            self._stack.push_async_callback(conn.close)
        except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
            raise AgentStartError(f"cannot start agent {self.name!r}: {self.spec.command}: "
                                  f"{exc.strerror or exc}") from None
        assert self.process is not None
        self.log.add("info", "lifecycle", f"spawned pid {self.process.pid}: "
                     f"{' '.join([self.spec.command, *self.spec.args])}")
        self._stack.push_async_callback(self._cancel_helpers)
        self._helpers = [tasks.spawn(self._drain_stderr(), self._report, f"{self.name} stderr"),
                         tasks.spawn(self._watch_exit(), self._report, f"{self.name} exit")]

    async def _initialize(self) -> InitializeResponse:
        assert self.conn is not None
        # awaited right here (against the exit), not a background task: no tasks.spawn
        init = asyncio.ensure_future(self.conn.initialize(
            protocol_version=PROTOCOL_VERSION, client_capabilities=CAPABILITIES, client_info=CLIENT_INFO,
        ))
        both: set[asyncio.Future[InitializeResponse] | asyncio.Future[int]] = {init, self.exited}
        done: Collection[object]
        done, _ = await asyncio.wait(both, timeout=INITIALIZE_TIMEOUT, return_when=asyncio.FIRST_COMPLETED)
        if init in done and init.exception() is None:
            return init.result()
        init.cancel()
        if init in done and isinstance(init.exception(), ConnectionError):
            # stdout closed: the process is exiting; its exit code says more than "connection closed"
            done, _ = await asyncio.wait({self.exited}, timeout=2.0)
        raise AgentStartError(self._init_failure(init, done))

    def _init_failure(self, init: asyncio.Future[InitializeResponse], done: Collection[object]) -> str:
        tail = f"; stderr: {' | '.join(self._stderr_tail[-3:])}" if self._stderr_tail else ""
        if self.exited in done:
            return f"agent {self.name!r} exited with code {self.exited.result()} during initialize{tail}"
        if init in done:
            return f"agent {self.name!r} failed to initialize: {init.exception()}{tail}"
        return f"agent {self.name!r} did not answer initialize within {INITIALIZE_TIMEOUT:g}s{tail}"

    def _log_failure(self, message: str) -> None:
        self.log.add("error", "error", message)

    def message(self, direction: str, message: Mapping[str, object], raw: str | bytes) -> None:
        """Wire tap: every JSON-RPC message, as it crossed the pipe."""
        self.log.record_message(direction, message, raw)

    def noise(self, line: str) -> None:
        """Wire tap: a non-JSON line on the agent's stdout; kept, maybe shown, never fatal."""
        self.log.record_stdout(line)
        self.on_noise(self.log.redact(line))

    async def _drain_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        async for raw in self.process.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            self._stderr_tail = [*self._stderr_tail[-9:], line[:STDERR_SUMMARY]]
            long_line = len(line) > STDERR_SUMMARY  # the entry line stays short; the whole line is folded under it
            self.log.add("info", "stderr", line[:STDERR_SUMMARY], direction="in", raw=line if long_line else None)

    async def _watch_exit(self) -> None:
        assert self.process is not None
        code = await self.process.wait()
        self.log.add("warn" if code else "info", "lifecycle", _exit_summary(code))
        if not self.exited.done():
            self.exited.set_result(code)

    async def _cancel_helpers(self) -> None:
        for task in self._helpers:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task

    @property
    def alive(self) -> bool:
        return self.process is not None and not self.exited.done()

    async def close(self) -> None:
        """Close stdin, wait, then terminate and kill (the SDK's shutdown ladder); then end the
        agent's own children that outlived it (a launcher's real agent, see process_tree)."""
        tree = await asyncio.to_thread(process_tree.descendants, self.process.pid) if self.process else []
        await self._stack.aclose()
        await process_tree.reap(tree)

    def kill_now(self) -> None:
        """Last resort when the editor quits and nothing can be awaited: SIGTERM the agent and its children."""
        if self.process is not None and self.process.returncode is None:
            tree = process_tree.descendants(self.process.pid)
            with contextlib.suppress(ProcessLookupError):
                if self.process.stdin is not None:
                    self.process.stdin.close()
                self.process.send_signal(signal.SIGTERM)
            process_tree.signal_all(tree, signal.SIGTERM)


def _exit_summary(code: int) -> str:
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"agent killed by signal {signal.Signals(-code).name}"
        return f"agent killed by signal {-code}"
    return f"agent exited with code {code}"


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
