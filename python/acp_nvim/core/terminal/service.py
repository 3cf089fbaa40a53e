"""The terminals of one session: ``terminal/create``, ``output``, ``wait_for_exit``, ``kill``, ``release``.

Commands run in the editor (a pty job in a terminal buffer) once the permission gate allows
them, in a working directory confined to the workspace roots: the gate answers with the folder's
real path and identity as approved, and the editor checks that identity again as the job starts.
Each terminal keeps a bounded output ring; the chat shows its last lines live under any tool call
that embeds it. A released terminal keeps only those lines and its exit status. When the session
ends every terminal is killed and released (``close_all``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from acp import RequestError
from acp.schema import (
    EnvVariable,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
)

from ..files.paths import PathPolicy
from ..log.ring import LogRing
from ..port import EditorPort, TerminalSpec
from ..questions import Withdrawn
from .approved import ApprovedCopies, CopyError, Grant, in_box
from .settings import TerminalSettings
from .terminal import Terminal, TerminalSink

Allow = Callable[[TerminalSpec], Awaitable[Grant | None]]
"""The permission gate: where this command may run, as approved, and the approved content of the scripts
it runs (None: it may not); it asks the user
unless an approval, a rule or the policy answers. It raises ``Withdrawn`` when its question was closed
by a cancel, the session's end or the agent, not by the user."""
Refresh = Callable[[str], None]
"""Re-render the chat's tool calls that embed this terminal id."""


class Around(Protocol):
    """Told around each command (the checkpoints scan the workspace before it runs and after it ends)."""

    async def before_command(self, command: str) -> None: ...

    def after_command(self, command: str) -> None: ...

REFUSED = -32602
"""Invalid params: the request itself is unacceptable (command, argument, folder, environment)."""
DENIED = -32042
"""The user (or a rule, or the policy) did not allow the command. A server-defined code ACP gives no
other meaning (never -32000, ACP's "authentication required": an agent could start a login)."""
FAILED = -32603
"""Internal error: allowed, but the editor could not start it."""
CANCELLED = -32800
"""Request cancelled: still pending when the turn was cancelled, the session ended or the agent
withdrew it."""
REFRESH_DELAY = 0.05
_ids = itertools.count(1)


BoxPrefix = Callable[[str, tuple[tuple[str, str], ...], str], tuple[str, ...]]
"""(command, env, cwd) to the argv that runs it in the agent's box (``bwrap … --``), or ()."""


def _unboxed(_command: str, _env: tuple[tuple[str, str], ...], _cwd: str) -> tuple[str, ...]:
    return ()


class TerminalService:
    """Registry and lifecycle of a session's terminals."""

    def __init__(self, session_key: str, editor: EditorPort, paths: PathPolicy, cwd: str,
                 settings: TerminalSettings, *, allow: Allow, refresh: Refresh, log: LogRing) -> None:
        self._key = session_key
        self._editor = editor
        self._paths = paths
        self._cwd = cwd
        self.settings = settings
        self._allow = allow
        self._refresh = refresh
        self._log = log
        self.live: dict[str, Terminal] = {}
        self._shown: dict[str, Terminal] = {}
        """Every terminal the chat may show, released ones included (their last output)."""
        self._dirty: set[str] = set()
        self._flush: asyncio.TimerHandle | None = None
        self.closed = False
        self.around: Around | None = None
        self.box: BoxPrefix = _unboxed
        """What runs a command in the agent's box (set by the session: the agent's current process)."""

    # -- terminal/create -----------------------------------------------------------------

    async def create(self, command: str, args: Sequence[str] | None, env: Sequence[EnvVariable] | None,
                     cwd: str | None, output_byte_limit: int | None) -> str:
        """Check, ask, start; the new terminal's id. RequestError says why it did not start."""
        spec = self._spec(command, list(args or []), list(env or []), cwd)
        try:
            grant = await self._allow(spec)
        except Withdrawn:
            grant = None
            withdrawn = True
        else:
            withdrawn = False
        if self.closed:
            raise _session_ended()
        if withdrawn:
            raise RequestError(CANCELLED, f"acp.nvim: {_line(spec)!r} was not run: its question was closed "
                               "unanswered (the turn was cancelled, or the agent withdrew the request)",
                               {"command": spec.command, "reason": "cancelled"})
        if grant is None:
            raise RequestError(DENIED, f"acp.nvim: the user did not allow running {_line(spec)!r}",
                               {"command": spec.command, "reason": "permission denied"})
        place = grant.place
        if place.path != spec.cwd:
            raise RequestError(DENIED, f"acp.nvim: not running {_line(spec)!r}: its folder is not the one "
                               "that was approved", {"command": spec.command, "reason": "folder changed"})
        shown = _line(spec)
        spec = replace(spec, cwd_id=place.identity, box=self.box(spec.command, spec.env, spec.cwd))
        copies = await self._copies(grant, spec) if grant.scripts else None
        if copies is not None:
            argv = grant.argv(copies)
            spec = replace(spec, command=argv[0], args=tuple(argv[1:]), box=in_box(spec.box, copies.folder))
            self._log.add("info", "terminal", f"{spec.terminal_id}: runs the approved content of "
                          f"{', '.join(s.name for s in grant.scripts)} from {copies.folder} ({shown})")
        try:
            return await self._start(spec, output_byte_limit, copies)
        except BaseException:
            if copies is not None:
                copies.remove()
            raise

    async def _copies(self, grant: Grant, spec: TerminalSpec) -> ApprovedCopies:
        try:
            return await asyncio.to_thread(ApprovedCopies.make, grant.scripts,
                                           lambda folder: self._paths.contains(Path(folder)))
        except CopyError as exc:
            raise RequestError(FAILED, f"acp.nvim could not run {_line(spec)!r}: {exc}",
                               {"command": spec.command, "reason": f"failed to start: {exc}"}) from None

    async def _start(self, spec: TerminalSpec, output_byte_limit: int | None,
                     copies: ApprovedCopies | None) -> str:
        if self.around is not None:
            await self.around.before_command(spec.terminal_id)
        if self.closed:
            raise _session_ended()
        terminal = Terminal(spec, self.settings.limit(output_byte_limit), self._changed)
        if copies is not None:
            terminal.exit.add_done_callback(lambda _: copies.remove())
            terminal.on_release = copies.remove
        self.live[spec.terminal_id] = self._shown[spec.terminal_id] = terminal
        if self.around is not None:
            around = self.around
            terminal.exit.add_done_callback(lambda _: around.after_command(spec.terminal_id))
        try:
            terminal.pid = await self._editor.start_terminal(spec, TerminalSink(terminal))
        except OSError as exc:
            self.live.pop(spec.terminal_id, None)
            if self.around is not None:
                self.around.after_command(spec.terminal_id)
            raise RequestError(FAILED, f"acp.nvim could not run {_line(spec)!r}: {exc}",
                               {"command": spec.command, "reason": f"failed to start: {exc}"}) from None
        self._log.add("info", "terminal", f"{spec.terminal_id}: pid {terminal.pid}: {_line(spec)} (in {spec.cwd})")
        return spec.terminal_id

    def _spec(self, command: str, args: list[str], env: list[EnvVariable], cwd: str | None) -> TerminalSpec:
        if not isinstance(command, str) or not command.strip() or "\0" in command:
            raise RequestError(REFUSED, "acp.nvim refused the terminal: empty or invalid command",
                               {"command": command, "reason": "invalid command"})
        if any("\0" in arg for arg in args):
            raise RequestError(REFUSED, "acp.nvim refused the terminal: an argument holds a NUL byte",
                               {"reason": "invalid argument"})
        pairs = tuple((_env_name(var.name), var.value.replace("\0", "")) for var in env)
        return TerminalSpec(f"term-{next(_ids)}", self._key, command, tuple(args), pairs, self._confined(cwd))

    def _confined(self, cwd: str | None) -> str:
        if cwd is None or cwd == "":
            cwd = self._cwd
        if "\0" in cwd or not os.path.isabs(cwd):
            raise RequestError(REFUSED, f"acp.nvim refused cwd {cwd!r}: it must be an absolute path",
                               {"cwd": cwd, "reason": "not absolute"})
        resolved = Path(os.path.realpath(cwd))
        if not self._paths.contains(resolved):
            raise RequestError(REFUSED, f"acp.nvim refused cwd {cwd!r}: outside the workspace roots "
                               f"({self._paths.describe()})", {"cwd": cwd, "reason": "outside the workspace"})
        if not resolved.is_dir():
            raise RequestError(REFUSED, f"acp.nvim refused cwd {cwd!r}: not a directory",
                               {"cwd": cwd, "reason": "not a directory"})
        return str(resolved)

    # -- the other requests --------------------------------------------------------------

    def get(self, terminal_id: str) -> Terminal:
        """A live (not released) terminal; RequestError for an unknown or released id."""
        terminal = self.live.get(terminal_id)
        if terminal is None:
            raise RequestError(REFUSED, f"acp.nvim: unknown terminal {terminal_id!r}",
                               {"terminalId": terminal_id, "reason": "unknown terminal"})
        return terminal

    def output(self, terminal_id: str) -> TerminalOutputResponse:
        terminal = self.get(terminal_id)
        text = terminal.output.text()
        return TerminalOutputResponse(output=text, truncated=terminal.output.truncated,
                                      exit_status=_exit_status(terminal))

    async def wait_for_exit(self, terminal_id: str) -> WaitForTerminalExitResponse:
        status = await asyncio.shield(self.get(terminal_id).exit)
        return WaitForTerminalExitResponse(exit_code=status.code, signal=status.signal)

    def kill(self, terminal_id: str) -> None:
        """Stop the command; the terminal stays valid (output, exit status) until released."""
        terminal = self.get(terminal_id)
        if terminal.running:
            terminal.killed = True
            self._editor.kill_terminal(terminal_id)
            self._log.add("info", "terminal", f"{terminal_id}: killed")

    def release(self, terminal_id: str) -> None:
        """Kill if running and forget the id. The output is dropped: the chat keeps the last lines
        it shows and the exit status, nothing else (a later call names an unknown terminal)."""
        terminal = self.get(terminal_id)
        terminal.killed = terminal.killed or terminal.running
        terminal.released = True
        terminal.output.release(self.settings.preview_lines)
        if terminal.on_release is not None:
            terminal.on_release()
        del self.live[terminal_id]
        self._editor.release_terminal(terminal_id)
        self._log.add("info", "terminal", f"{terminal_id}: released")
        self._changed(terminal)

    async def close_all(self) -> None:
        """The session ends: kill every terminal, wait a little for the exits, release them all."""
        self.closed = True
        running = [t for t in self.live.values() if t.running]
        for terminal in list(self.live.values()):
            self.release(terminal.terminal_id)
        if running:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.gather(*(asyncio.shield(t.exit) for t in running)),
                                       self.settings.kill_grace)

    # -- the chat's view ------------------------------------------------------------------

    def shown(self, terminal_id: str) -> Terminal | None:
        """A terminal of this session the chat may show (released ones too)."""
        return self._shown.get(terminal_id)

    def preview(self, terminal_id: str) -> list[str] | None:
        """The chat lines of an embedded terminal: a header and its last output lines."""
        terminal = self._shown.get(terminal_id)
        if terminal is None:
            return None
        status = terminal.status
        state = "running" if status is None else status.describe()
        more = " · output truncated" if terminal.output.truncated else ""
        head = f"  ▸ terminal {terminal_id} · {state}{more} · <CR> opens it"
        return [head, *("  │ " + line for line in terminal.output.tail_lines(self.settings.preview_lines))]

    def _changed(self, terminal: Terminal) -> None:
        self._dirty.add(terminal.terminal_id)
        if self._flush is None:
            self._flush = asyncio.get_running_loop().call_later(REFRESH_DELAY, self._refresh_dirty)
        status = terminal.status
        if status is not None and terminal.terminal_id in self.live:
            self._log.add("info", "terminal", f"{terminal.terminal_id}: {status.describe()}")

    def _refresh_dirty(self) -> None:
        self._flush = None
        dirty, self._dirty = self._dirty, set()
        for terminal_id in sorted(dirty):
            self._refresh(terminal_id)


def _exit_status(terminal: Terminal) -> TerminalExitStatus | None:
    status = terminal.status
    return None if status is None else TerminalExitStatus(exit_code=status.code, signal=status.signal)


def _env_name(name: str) -> str:
    if not name or "=" in name or "\0" in name:
        raise RequestError(REFUSED, f"acp.nvim refused the terminal: invalid environment name {name!r}",
                           {"name": name, "reason": "invalid environment variable name"})
    return name


def _line(spec: TerminalSpec) -> str:
    return " ".join([spec.command, *spec.args])


def _session_ended() -> RequestError:
    return RequestError(CANCELLED, "acp.nvim: the session has ended", {"reason": "session closed"})
