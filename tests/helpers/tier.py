"""tests/unit starts no process: no Neovim, no agent, no subprocess of any kind (``make check`` runs it).

tests/conftest.py applies ``refuse_processes`` to every test under tests/unit: each way of starting a
process raises there instead. A test that needs a real agent belongs in tests/e2e, one that needs
Neovim in tests/nvim.
"""

from __future__ import annotations

import _posixsubprocess
import asyncio
import os
import subprocess

import pynvim
import pytest

MOVE = "tests/unit starts no process (make check): move this test to tests/e2e (an agent) or tests/nvim (Neovim)"


class ProcessStarted(AssertionError):
    """A unit test tried to start a process."""


def _refuse(*args: object, **kwargs: object) -> object:
    raise ProcessStarted(f"{MOVE}; it started {args[1:2] or args[:1]}")


async def _refuse_async(*args: object, **kwargs: object) -> object:
    raise ProcessStarted(f"{MOVE}; it started {args[1:2] or args[:1]}")


STARTERS: list[tuple[object, str, object]] = [
    (subprocess.Popen, "__init__", _refuse),
    (_posixsubprocess, "fork_exec", _refuse),
    (asyncio.base_events.BaseEventLoop, "subprocess_exec", _refuse_async),
    (asyncio.base_events.BaseEventLoop, "subprocess_shell", _refuse_async),
    (pynvim, "attach", _refuse),
    *((os, name, _refuse) for name in ("system", "fork", "forkpty", "posix_spawn", "posix_spawnp",
                                        "execv", "execve", "spawnv", "spawnve") if hasattr(os, name)),
]
"""Each way to start a process and what replaces it (``subprocess.run`` and asyncio's transports go
through ``Popen``, multiprocessing through ``fork_exec`` or ``os.fork``; the event loop's own methods
are refused as well, for a loop that bypasses them)."""


def refuse_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Until ``monkeypatch`` undoes it (the end of the test), every process start raises ``ProcessStarted``."""
    for owner, name, replacement in STARTERS:
        monkeypatch.setattr(owner, name, replacement)
