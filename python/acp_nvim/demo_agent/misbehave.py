"""Scenarios where the agent process misbehaves: crashes, stdout garbage, stderr chatter."""

from __future__ import annotations

import os
import sys

from acp.schema import StopReason

from .turn import Turn, count_arg

CRASH_EXIT_CODE = 3
GARBAGE_LINE = "Open https://example.invalid/oauth?code=abc to log in"


async def crash(turn: Turn) -> StopReason:
    """Send a couple of chunks, then exit the process with status 3 mid-turn."""
    await turn.say("About to crash... ")
    await turn.say("goodbye.\n")
    sys.stderr.write("demo agent: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(CRASH_EXIT_CODE)


async def garbage(turn: Turn) -> StopReason:
    """Write a whole non-JSON line to stdout, then reply normally."""
    await turn.raw_write(f"{GARBAGE_LINE}\n".encode())
    await turn.stream("I wrote a non-JSON line to stdout; this turn carries on.\n")
    return "end_turn"


async def stderr(turn: Turn) -> StopReason:
    """Write N (default 50) lines to stderr, interleaved with message chunks."""
    count = count_arg(turn.args, 50)
    for index in range(count):
        sys.stderr.write(f"demo agent: chatter line {index}\n")
        sys.stderr.flush()
        await turn.say(f"line {index} ")
    await turn.say(f"\nWrote {count} lines to stderr.\n")
    return "end_turn"
