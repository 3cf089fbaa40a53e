"""``hold-sessions <path>``: every later ``session/new`` and ``session/fork`` of this process waits
until ``path`` exists. A client's work that opens a session (a rewind's conversation part) then
lasts exactly as long as a test needs: the test creates the file when it has seen what it waits for.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from acp.schema import StopReason

from .turn import Turn

POLL = 0.02
"""Seconds between two looks for the file (the agent's own wait; the test waits on events)."""

_held: list[Path] = []


async def hold_sessions(turn: Turn) -> StopReason:
    """Hold the later session/new and session/fork of this process until the file named exists."""
    if not turn.args:
        await turn.say("usage: hold-sessions <path>\n")
        return "end_turn"
    _held[:] = [Path(turn.rest)]
    await turn.say(f"New sessions and forks wait until {turn.rest} exists.\n")
    return "end_turn"


async def passed() -> None:
    """Return once no file holds new sessions (or the one that did exists)."""
    while _held and not _held[0].exists():
        await asyncio.sleep(POLL)
