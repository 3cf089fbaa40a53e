"""Scenarios that only stream text, plans and session metadata."""

from __future__ import annotations

import asyncio
import json

from acp.helpers import plan_entry, update_current_mode, update_plan
from acp.schema import Cost, PlanEntry, PlanEntryStatus, SessionInfoUpdate, StopReason, UsageUpdate

from .turn import Turn, count_arg, fenced

PLAN_STEPS = ("Read the relevant code", "Make the change", "Run the tests")
PLAN_STEP_DELAY = 0.02
SLOW_DELAY = 0.05
FLOOD_YIELD_EVERY = 256
CONTEXT_WINDOW = 200_000


def default_reply(prompt: str) -> str:
    """Return the markdown the default scenario streams for ``prompt``."""
    code = 'def hello() -> str:\n    return "hello from the demo agent"\n'
    return (
        "## Demo reply\n\n"
        f"You said: {prompt}\n\n"
        "- This reply is streamed in small chunks.\n"
        "- It comes from the offline demo agent.\n"
        "- Try `plan`, `read <path>` or `edit <path>`.\n\n"
        f"{fenced(code, 'python')}"
    )


async def default(turn: Turn) -> StopReason:
    """Think once, then stream a markdown reply in ~8-char chunks."""
    await turn.think(f"Thinking about: {turn.text[:40]}")
    await turn.stream(default_reply(turn.text))
    return "end_turn"


def _plan(statuses: list[PlanEntryStatus]) -> list[PlanEntry]:
    return [plan_entry(step, status=status) for step, status in zip(PLAN_STEPS, statuses, strict=True)]


async def plan(turn: Turn) -> StopReason:
    """Send a 3-step plan and walk every entry pending -> in_progress -> completed."""
    statuses: list[PlanEntryStatus] = ["pending"] * len(PLAN_STEPS)
    await turn.send(update_plan(_plan(statuses)))
    await turn.say("Here is the plan.\n")
    for index, step in enumerate(PLAN_STEPS):
        for status in ("in_progress", "completed"):
            await asyncio.sleep(PLAN_STEP_DELAY)
            statuses[index] = status
            await turn.send(update_plan(_plan(statuses)))
        await turn.say(f"Done: {step}.\n")
    await turn.say("All steps completed.\n")
    return "end_turn"


PRIORITY_PLAN = (("Fix the failing test", "high", "in_progress"), ("Update the changelog", "medium", "pending"),
                 ("Tidy the comments", "low", "pending"))


async def plan_priority(turn: Turn) -> StopReason:
    """Send a plan whose entries are of high, medium and low priority."""
    entries = [plan_entry(step, priority=priority, status=status)  # type: ignore[arg-type]
               for step, priority, status in PRIORITY_PLAN]
    await turn.send(update_plan(entries))
    await turn.say("A plan with priorities.\n")
    return "end_turn"


async def flood(turn: Turn) -> StopReason:
    """Send N (default 1000) ~10-char chunks as fast as possible."""
    for index in range(count_arg(turn.args, 1000)):
        await turn.say(f"chunk{index:05d}")
        if index % FLOOD_YIELD_EVERY == FLOOD_YIELD_EVERY - 1:
            await asyncio.sleep(0)
    return "end_turn"


async def slow(turn: Turn) -> StopReason:
    """Send N (default 200) chunks, one every 50 ms."""
    for index in range(count_arg(turn.args, 200)):
        await turn.say(f"tick {index}\n")
        await asyncio.sleep(SLOW_DELAY)
    return "end_turn"


async def echo(turn: Turn) -> StopReason:
    """Reply with the JSON of every prompt content block received."""
    dumped = [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in turn.blocks]
    await turn.say(fenced(json.dumps(dumped, indent=2, ensure_ascii=False), "json"))
    return "end_turn"


async def usage(turn: Turn) -> StopReason:
    """Send a usage_update with context size and cost."""
    used = turn.session.usage.total
    cost = Cost(amount=round(used * 0.00001, 6), currency="USD")
    await turn.send(UsageUpdate(session_update="usage_update", used=used, size=CONTEXT_WINDOW, cost=cost))
    await turn.say(f"Context: {used}/{CONTEXT_WINDOW} tokens, cost {cost.amount} {cost.currency}.\n")
    return "end_turn"


async def mode(turn: Turn) -> StopReason:
    """Switch to the other mode and announce it with current_mode_update."""
    turn.session.mode = turn.session.other_mode()
    await turn.send(update_current_mode(turn.session.mode))
    await turn.say(f"Switched to mode {turn.session.mode}.\n")
    return "end_turn"


async def title(turn: Turn) -> StopReason:
    """Set the session title (the arguments, or a default one); ``--clear`` sends a null title."""
    if turn.args == ["--clear"]:
        update = {"sessionUpdate": "session_info_update", "title": None}  # the SDK's models drop a None
        params = {"sessionId": turn.session_id, "update": update}
        line = {"jsonrpc": "2.0", "method": "session/update", "params": params}
        await turn.raw_write((json.dumps(line) + "\n").encode())
        await turn.say("Title cleared.\n")
        return "end_turn"
    new_title = " ".join(turn.args) or f"Demo session {turn.session_id}"
    await turn.send(SessionInfoUpdate(session_update="session_info_update", title=new_title))
    await turn.say(f"Title set to: {new_title}\n")
    return "end_turn"
