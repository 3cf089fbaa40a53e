"""One terminal: its spec, retained output and exit status; the sink the editor feeds."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable
from dataclasses import dataclass

from ..port import TerminalSpec
from .output import OutputRing


@dataclass(frozen=True, slots=True)
class ExitInfo:
    """How a command ended: an exit code, or the signal that ended it."""

    code: int | None
    signal: str | None

    def describe(self) -> str:
        return f"killed by {self.signal}" if self.signal else f"exited {self.code}"


class Terminal:
    """A command run for the agent: output so far, pid, exit (a future), release state."""

    def __init__(self, spec: TerminalSpec, limit: int, changed: Callable[[Terminal], None]) -> None:
        self.spec = spec
        self.output = OutputRing(limit)
        self.pid: int | None = None
        self.exit: asyncio.Future[ExitInfo] = asyncio.get_running_loop().create_future()
        self.killed = False
        self.released = False
        self.on_release: Callable[[], None] | None = None
        """Told when the terminal is released (its approved copies are removed)."""
        self._changed = changed

    @property
    def terminal_id(self) -> str:
        return self.spec.terminal_id

    @property
    def command_line(self) -> str:
        return " ".join([self.spec.command, *self.spec.args])

    @property
    def running(self) -> bool:
        return not self.exit.done()

    @property
    def status(self) -> ExitInfo | None:
        """The exit status once the command has exited."""
        return self.exit.result() if self.exit.done() else None

    # -- the editor's sink ---------------------------------------------------------------

    def output_received(self, data: bytes) -> None:
        self.output.write(data)
        self._changed(self)

    def exited(self, code: int | None) -> None:
        if not self.exit.done():
            self.exit.set_result(exit_info(code, self.killed))
            self._changed(self)


class TerminalSink:
    """Adapts a ``Terminal`` to the port's ``TerminalSink`` (output stops once released)."""

    def __init__(self, terminal: Terminal) -> None:
        self._terminal = terminal

    def output(self, data: bytes) -> None:
        if not self._terminal.released:
            self._terminal.output_received(data)

    def exited(self, code: int | None) -> None:
        self._terminal.exited(code)


def exit_info(code: int | None, killed: bool) -> ExitInfo:
    """The exit of a command; after a kill we sent, the signal that ended it.

    Neovim reports a pty job ended by signal n as n (and other jobs as 128 + n), so the
    status alone cannot tell a signal from an exit code: only a kill of ours makes it one.
    """
    if code is not None and killed and code > 0:
        with contextlib.suppress(ValueError):
            return ExitInfo(None, signal.Signals(code - 128 if code > 128 else code).name)
    return ExitInfo(code, None)
