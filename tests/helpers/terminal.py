"""Neovim with its own terminal UI in a pseudo-terminal: what it writes to the terminal is read
back byte for byte, focus events are typed as a terminal sends them, and a second connection (its
``--listen`` socket) drives it."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pynvim

from helpers import WaitTimeout, wait_for

FOCUS_LOST = b"\x1b[O"
FOCUS_GAINED = b"\x1b[I"
"""What a terminal sends once Neovim asked for focus events (``CSI ? 1004 h``)."""


class Terminal:
    """The master side of the pty: every byte Neovim wrote, kept; bytes typed into it."""

    def __init__(self, master: int) -> None:
        self.master = master
        self._output = bytearray()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            with self._lock:
                self._output += data

    @property
    def output(self) -> bytes:
        with self._lock:
            return bytes(self._output)

    def mark(self) -> int:
        """Where the output is now: ``since(mark)`` reads what came after."""
        return len(self.output)

    def since(self, mark: int) -> bytes:
        return self.output[mark:]

    def type(self, data: bytes) -> None:
        os.write(self.master, data)


@contextlib.contextmanager
def nvim_in_terminal(argv: list[str], env: dict[str, str], cwd: Path, socket: Path, *, focus_events: bool = False
                     ) -> Iterator[tuple[pynvim.Nvim, Terminal]]:
    """Neovim (``argv`` plus ``--listen socket``) with its UI in a new pty, and a connection to it,
    once the UI has attached; with ``focus_events``, once it has asked the terminal for them too
    (only tests that type focus events wait for that: the request is not part of every start)."""
    master, slave = os.openpty()
    os.set_blocking(master, True)
    process = subprocess.Popen([*argv, "--listen", str(socket)], stdin=slave, stdout=slave, stderr=slave, env=env,
                               cwd=cwd, start_new_session=True, close_fds=True)
    os.close(slave)
    terminal = Terminal(master)
    nvim = None
    try:
        wait_for(lambda: socket.exists(), timeout=20, what="Neovim to listen")
        nvim = pynvim.attach("socket", path=str(socket))
        wait_for(lambda: nvim.api.list_uis(), what="the terminal UI to attach", nvim=nvim)
        if focus_events:
            try:
                wait_for(lambda: b"\x1b[?1004h" in terminal.output, what="the UI to ask for focus events")
            except WaitTimeout as exc:
                raise WaitTimeout(f"{exc}; the terminal got: {terminal.output[-600:]!r}") from None
        yield nvim, terminal
    finally:
        if nvim is not None:
            with contextlib.suppress(Exception):
                nvim.command("silent! doautocmd VimLeavePre")
            with contextlib.suppress(Exception):
                nvim.command("qa!")
            with contextlib.suppress(Exception):
                nvim.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(10)
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)
