"""``children [hold] [ask]``: a subagent as a child session, in the shape claude-agent-acp 0.101 sends to a
client that advertises ``clientCapabilities.subagents`` (the subagents RFD, unstable; ``native-subagents.js``).

On the parent session: ``subagent_update`` announces the child (its own session id, a title, its role,
``capabilities.cancel``, ``state: running``) and a ``session_message`` carries the parent's prompt to it.
Under the child's session id: its tool calls and its text. Then the child's report goes to the parent as a
``session_message`` and the child is ``idle`` (``end_turn``). With ``ask`` the child asks permission for an
edit first (``requires_action`` while it waits). With ``hold`` the child works until the client cancels it
alone (``session/cancel`` on the child's id): it ends ``idle``/``cancelled`` and the parent's turn goes on.
(The demo agent sends this shape whatever the client advertises: the SDK's model drops the capability.)
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from acp.schema import StopReason, ToolCallUpdate

from .permissions import decide, permission_options
from .turn import Turn

HOLD_POLL = 0.05
TITLE, ROLE = "Explore the demo project", "Explore"


async def send_to(turn: Turn, session_id: str, update: dict[str, Any]) -> None:
    """One ``session/update`` for ``session_id`` (the parent's or a child's), as JSON."""
    params = {"sessionId": session_id, "update": update}
    line = json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": params}, ensure_ascii=False)
    await turn.raw_write((line + "\n").encode())


def _state(child: str, state: str, stop_reason: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"state": state}
    if stop_reason is not None:
        body["stopReason"] = stop_reason
    return {"sessionUpdate": "subagent_update", "sessionId": child, "state": body}


def _call(call_id: str, title: str, kind: str, status: str, name: str) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": title, "kind": kind, "status": status,
            "name": name}


def _message(message_id: str, sender: str, recipient: str, text: str) -> dict[str, Any]:
    return {"sessionUpdate": "session_message", "messageId": message_id, "senderSessionId": sender,
            "recipientSessionId": recipient, "content": [{"type": "text", "text": text}]}


async def children(turn: Turn) -> StopReason:
    session, parent = turn.session, turn.session_id
    launch = session.next_tool_call_id("toolu")
    child = f"{parent}:agent-{launch}"
    session.children.add(child)
    await turn.say("Delegating to a subagent.\n")
    await send_to(turn, parent, {"sessionUpdate": "subagent_update", "sessionId": child, "title": TITLE,
                                 "description": ROLE, "capabilities": {"cancel": {}}, "state": {"state": "running"}})
    await send_to(turn, parent, {**_message(launch, parent, child, "Read README.md, then look for TODOs"),
                                 "recipientMessageId": launch})
    await send_to(turn, child, {**_message(launch, parent, child, "Read README.md, then look for TODOs"),
                                "senderMessageId": launch})
    read = session.next_tool_call_id("toolu")
    await send_to(turn, child, _call(read, "Read README.md", "read", "in_progress", "Read"))
    await send_to(turn, child, {"sessionUpdate": "agent_message_chunk",
                                "content": {"type": "text", "text": "README read; looking deeper."}})
    await send_to(turn, child, {"sessionUpdate": "tool_call_update", "toolCallId": read, "status": "completed"})
    if "ask" in turn.args:
        await _ask(turn, child)
    if "hold" in turn.args:
        while child not in session.cancelled_children and not session.cancel_requested:
            await asyncio.sleep(HOLD_POLL)
        if session.cancel_requested:
            return "cancelled"
        await send_to(turn, parent, _state(child, "idle", "cancelled"))
        await turn.say("The subagent was cancelled; the turn goes on.\n")
        return "end_turn"
    await send_to(turn, parent, _message(f"{launch}:reply", child, parent, "Found 3 TODOs."))
    await send_to(turn, parent, _state(child, "idle", "end_turn"))
    await turn.say("The subagent is done.\n")
    return "end_turn"


async def _ask(turn: Turn, child: str) -> None:
    """The child asks permission for an edit, under its own session id."""
    edit = turn.session.next_tool_call_id("toolu")
    await send_to(turn, turn.session_id, _state(child, "requires_action"))
    response = await turn.client.request_permission(
        session_id=child, options=permission_options(),
        tool_call=ToolCallUpdate(tool_call_id=edit, title="Edit notes.md", kind="edit", status="pending"))
    decision = decide(response)
    await send_to(turn, turn.session_id, _state(child, "running"))
    status = "completed" if decision == "allowed" else "failed"
    await send_to(turn, child, {"sessionUpdate": "tool_call_update", "toolCallId": edit, "status": status})
    await send_to(turn, child, {"sessionUpdate": "agent_message_chunk",
                                "content": {"type": "text", "text": f"The edit was {decision}."}})
