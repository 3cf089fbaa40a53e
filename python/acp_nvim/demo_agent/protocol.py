"""Scenarios that send the protocol's newer shapes, which the SDK's models (schema 1.19) cannot write
and no pinned agent sends in the tests: message ids, notices, compactions, an unknown update kind,
plan updates and removals, and a subagent's tool calls under the call that runs it. Each update is
written as the JSON the current protocol (and claude-agent-acp 0.101) uses."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from acp.helpers import plan_entry
from acp.schema import (
    AgentPlanContentUpdate,
    AgentPlanRemovedUpdate,
    PlanEntryStatus,
    PlanUpdateItems,
    PlanUpdateMarkdown,
    StopReason,
)

from .turn import Turn

STEP_DELAY = 0.01
HOLD_POLL = 0.05


async def send_raw(turn: Turn, update: dict[str, Any]) -> None:
    """One ``session/update`` line as JSON (shapes the SDK cannot serialize)."""
    params = {"sessionId": turn.session_id, "update": update}
    line = json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params}, ensure_ascii=False)
    await turn.raw_write((line + "\n").encode())


def chunk(kind: str, text: str, message_id: str | None = None, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    update: dict[str, Any] = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
    if message_id is not None:
        update["messageId"] = message_id
    if meta is not None:
        update["_meta"] = meta
    return update


async def ids(turn: Turn) -> StopReason:
    """Message ids: a thought and a message of one id, then a second message whose only boundary is a
    new id (no tool call, no other kind between them)."""
    turn.transcript.append("first message second message")
    for update in (chunk("agent_thought_chunk", "weighing it", "msg-a"),
                   chunk("agent_message_chunk", "first ", "msg-a"), chunk("agent_message_chunk", "message", "msg-a"),
                   chunk("agent_message_chunk", "second ", "msg-b"), chunk("agent_message_chunk", "message", "msg-b")):
        await send_raw(turn, update)
    return "end_turn"


async def notice(turn: Turn) -> StopReason:
    """The agent's notices, one of each severity (as claude-agent-acp words them)."""
    await send_raw(turn, {"sessionUpdate": "notice", "severity": "info", "title": "Demo notice"})
    await send_raw(turn, {"sessionUpdate": "notice", "severity": "warning", "title": "Model fallback",
                          "description": "The demo model is busy: a smaller one answers this turn."})
    await send_raw(turn, {"sessionUpdate": "notice", "severity": "error", "title": 'MCP server "demo" failed to start',
                          "description": "Its tools are unavailable in this session."})
    await turn.say("Sent three notices.\n")
    return "end_turn"


COMPACTION_SUMMARY = ("The user asked for a demo.\n", "The agent showed notices and plans.\n",
                      "Nothing is left to do.")


async def compact(turn: Turn) -> StopReason:
    """A context compaction: in progress, its summary streamed, completed; then one that fails."""
    await send_raw(turn, {"sessionUpdate": "compaction_update", "compactionId": "demo-c1", "status": "in_progress"})
    for text in COMPACTION_SUMMARY:
        await asyncio.sleep(STEP_DELAY)
        await send_raw(turn, {"sessionUpdate": "compaction_summary_chunk", "compactionId": "demo-c1",
                              "content": {"type": "text", "text": text}})
    await send_raw(turn, {"sessionUpdate": "compaction_update", "compactionId": "demo-c1", "status": "completed",
                          "_meta": {"demo": {"preTokens": 1200}}})
    await send_raw(turn, {"sessionUpdate": "compaction_update", "compactionId": "demo-c2", "status": "failed",
                          "error": "nothing to compact"})
    await turn.say("Compacted.\n")
    return "end_turn"


async def unknown(turn: Turn) -> StopReason:
    """An update of a kind nobody knows yet (twice: it is told once), and a notice without a severity."""
    future = {"sessionUpdate": "hologram_update", "hologramId": "h1", "frames": [1, 2, 3]}
    await send_raw(turn, future)
    await send_raw(turn, {**future, "frames": [4]})
    await send_raw(turn, {"sessionUpdate": "notice", "title": "a notice without a severity"})
    await turn.say("Sent updates of kinds you may not know.\n")
    return "end_turn"


async def plan_ops(turn: Turn) -> StopReason:
    """Plans by id (``plan_update``): an item plan updated in place, a markdown plan, then the first
    plan removed (``plan_removed``)."""
    steps = ("Sketch", "Build")
    rounds: tuple[tuple[PlanEntryStatus, PlanEntryStatus], ...] = (("pending", "pending"), ("completed", "in_progress"))
    for statuses in rounds:
        entries = [plan_entry(step, status=status) for step, status in zip(steps, statuses, strict=True)]
        await turn.send(AgentPlanContentUpdate(session_update="plan_update", plan=PlanUpdateItems(
            type="items", plan_id="items-1", entries=entries)))
        await asyncio.sleep(STEP_DELAY)
    await turn.send(AgentPlanContentUpdate(session_update="plan_update", plan=PlanUpdateMarkdown(
        type="markdown", plan_id="notes-1", content="1. read the notes\n2. write the answer")))
    await turn.send(AgentPlanRemovedUpdate(session_update="plan_removed", plan_id="items-1"))
    await turn.say("Plans sent.\n")
    return "end_turn"


def tool_call(call_id: str, title: str, name: str, status: str, parent: str | None = None,
              update: bool = False) -> dict[str, Any]:
    """A tool call as claude-agent-acp sends it: ``name`` beside the title, ``_meta.claudeCode``."""
    claude: dict[str, Any] = {"toolName": name}
    if parent is not None:
        claude["parentToolUseId"] = parent
    if update:
        return {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": status,
                "_meta": {"claudeCode": claude}}
    return {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": title, "kind": "think" if
            name == "Task" else "read", "status": status, "name": name, "_meta": {"claudeCode": claude}}


async def subagents(turn: Turn) -> StopReason:
    """``subagents [hold]``: a Task call runs a subagent; its calls (one nested a level deeper) name it as
    their parent, and it says something. With ``hold`` the subagent keeps running until a cancel."""
    task = turn.session.next_tool_call_id("task")
    read, nested, grep = (turn.session.next_tool_call_id(name) for name in ("read", "task", "grep"))
    await turn.say("Delegating to a subagent.\n")
    await send_raw(turn, tool_call(task, "Explore the demo project", "Task", "in_progress"))
    await send_raw(turn, tool_call(read, "Read README.md", "Read", "in_progress", parent=task))
    await send_raw(turn, chunk("agent_message_chunk", "README read; looking deeper.", "sub-1",
                               {"claudeCode": {"parentToolUseId": task}}))
    await send_raw(turn, tool_call(read, "", "Read", "completed", parent=task, update=True))
    await send_raw(turn, tool_call(nested, "Look for TODOs", "Task", "in_progress", parent=task))
    await send_raw(turn, tool_call(grep, "Search for TODO", "Grep", "completed", parent=nested))
    if turn.args[:1] == ["hold"]:
        while not turn.session.cancel_requested:
            await asyncio.sleep(HOLD_POLL)
        return "cancelled"
    await send_raw(turn, tool_call(nested, "", "Task", "completed", parent=task, update=True))
    await send_raw(turn, tool_call(task, "", "Task", "completed", update=True))
    await turn.say("The subagent is done.\n")
    return "end_turn"


async def late_tool(turn: Turn) -> StopReason:
    """Works until a cancel, then starts a tool call (pending) before it answers ``cancelled``: the
    late output of an agent that does not stop at once."""
    await turn.say("Working until you cancel.\n")
    try:
        while not turn.session.cancel_requested:
            await asyncio.sleep(HOLD_POLL)
    except asyncio.CancelledError:
        pass  # the cancel: this agent still starts one more call before it answers
    call = turn.session.next_tool_call_id("late")
    await send_raw(turn, {"sessionUpdate": "tool_call", "toolCallId": call, "title": "A late tool call",
                          "kind": "read", "status": "pending"})
    return "cancelled"
