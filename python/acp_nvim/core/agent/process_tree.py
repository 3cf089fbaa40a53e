"""An agent's own child processes, so that closing the agent ends them too.

Agents are often launched through a wrapper (a node script that runs the real, native
agent with ``spawnSync``). Terminating the wrapper orphans the real agent, and one that
ignores end-of-input keeps running. So before closing an agent we note its descendants
(from ``/proc``; elsewhere there is nothing to note) and end those still alive afterwards.
A process is named by its pid and start time, so a reused pid is never signalled.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Iterable
from pathlib import Path

PROC = Path("/proc")
Proc = tuple[int, int]  # (pid, start time in clock ticks)


def identify(pid: int) -> Proc | None:
    """``pid`` as a ``Proc`` (None when it is gone or /proc is unavailable)."""
    started = _start_time(pid)
    return (pid, started) if started is not None else None


def descendants(pid: int) -> list[Proc]:
    """Every live descendant of ``pid`` (children first); empty where /proc is unavailable."""
    children: dict[int, list[Proc]] = {}
    for entry in _all_stats():
        children.setdefault(entry[1], []).append((entry[0], entry[3]))
    found: list[Proc] = []
    pending = [pid]
    while pending:
        for child in children.get(pending.pop(), []):
            found.append(child)
            pending.append(child[0])
    return found


def group(leader: Proc) -> list[Proc]:
    """Every live member of the process group that ``leader`` started (``start_new_session``),
    the leader included while it lives: its children that a dead parent left behind, too.
    Members started before the leader cannot belong to its group; they are never named."""
    pgid, since = leader
    return [(pid, started) for pid, _, pgrp, started in _all_stats() if pgrp == pgid and started >= since]


def alive(procs: Iterable[Proc]) -> list[Proc]:
    """Those of ``procs`` still running as themselves (not gone, not a zombie, pid not reused)."""
    return [proc for proc in procs if _start_time(proc[0]) == proc[1]]


def kill_now(procs: list[Proc], grace: float) -> list[Proc]:
    """SIGTERM ``procs``, wait up to ``grace`` seconds *blocking*, then SIGKILL the survivors.

    For editor exit, where nothing can be awaited: the wait is bounded and short. Returns the
    processes that needed SIGKILL.
    """
    left = signal_all(procs, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while left and time.monotonic() < deadline:
        time.sleep(0.01)
        left = alive(left)
    return signal_all(left, signal.SIGKILL)


def signal_all(procs: list[Proc], sig: int) -> list[Proc]:
    """Send ``sig`` to each process still alive as itself; return those signalled."""
    alive = [proc for proc in procs if _start_time(proc[0]) == proc[1]]
    for pid, _ in alive:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
    return alive


async def reap(procs: list[Proc], grace: float = 1.0) -> None:
    """SIGTERM the survivors among ``procs``, then SIGKILL whatever is left after ``grace``."""
    alive = signal_all(procs, signal.SIGTERM)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    while alive and loop.time() < deadline:
        await asyncio.sleep(0.05)
        alive = [proc for proc in alive if _start_time(proc[0]) == proc[1]]
    signal_all(alive, signal.SIGKILL)


def _all_stats() -> list[tuple[int, int, int, int]]:
    """(pid, parent pid, process group, start time) of every process we can read."""
    out = []
    with contextlib.suppress(OSError):
        for path in PROC.iterdir():
            if path.name.isdigit():
                stat = _stat(int(path.name))
                if stat is not None:
                    out.append((int(path.name), *stat))
    return out


def _start_time(pid: int) -> int | None:
    stat = _stat(pid)
    return stat[2] if stat is not None else None


def _stat(pid: int) -> tuple[int, int, int] | None:
    """(parent pid, process group, start time) from /proc/<pid>/stat; None for a gone or zombie process."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # the command name may hold spaces and parens
    if fields[0] == "Z":
        return None
    return int(fields[1]), int(fields[2]), int(fields[19])
