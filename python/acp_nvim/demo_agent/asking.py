"""Questions to the user (``elicitation/create``, form and url) and a withdrawn request (``$/cancel_request``)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from acp.helpers import start_tool_call
from acp.schema import (
    AcceptElicitationResponse,
    ElicitationFormSessionMode,
    ElicitationSchema,
    ElicitationUrlSessionMode,
    StopReason,
    ToolCallUpdate,
)

from .permissions import permission_options
from .turn import Turn, count_arg, error_text

FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2, "maxLength": 20},
        "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150},
        "color": {"type": "string", "title": "Color", "oneOf": [
            {"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}, {"const": "b", "title": "Blue"}],
            "default": "g"},
        "tags": {"type": "array", "title": "Tags", "items": {"anyOf": [
            {"const": "x", "title": "Ex"}, {"const": "y", "title": "Why"}]}},
        "agree": {"type": "boolean", "title": "Agree", "default": False},
        "email": {"type": "string", "title": "Email", "format": "email"},
    },
    "required": ["name", "age"],
}


ASYNC_BEAT = 0.05


async def ask_async(turn: Turn) -> StopReason:
    """``ask async``: a question the turn does not wait for, as codex-acp 2.6 asks Codex's async questions
    (``_meta.codex.delivery: "async"``): the agent keeps working (a line a beat) until the answer comes,
    then takes it into the running turn."""
    mode = ElicitationFormSessionMode(session_id=turn.session_id,
                                      requested_schema=ElicitationSchema.model_validate(FORM))
    asking = asyncio.ensure_future(turn.client.create_elicitation(
        message="Codex keeps working while you answer", mode=mode, codex={"delivery": "async"}))
    await turn.say("Asked; still working.\n")
    while not asking.done() and not turn.session.cancel_requested:
        await asyncio.sleep(ASYNC_BEAT)
    if not asking.done():
        asking.cancel()
        return "cancelled"
    response = asking.result()
    await turn.say(f"steered into the turn: {response.action}\n")
    return "end_turn"


async def ask(turn: Turn) -> StopReason:
    """``ask [tool|async]``: a form of every field type; with ``tool``, tied to a tool call of the turn; with
    ``async``, a question the turn does not wait for (``ask_async``)."""
    if turn.args[:1] == ["async"]:
        return await ask_async(turn)
    tool_call_id = None
    if turn.args[:1] == ["tool"]:
        tool_call_id = turn.session.next_tool_call_id("ask")
        await turn.send(start_tool_call(tool_call_id, "Ask the user about the project", kind="other",
                                        status="in_progress"))
    mode = ElicitationFormSessionMode(session_id=turn.session_id, tool_call_id=tool_call_id,
                                      requested_schema=ElicitationSchema.model_validate(FORM))
    try:
        response = await turn.client.create_elicitation(message="Tell me about you", mode=mode)
    except Exception as exc:
        await turn.say(f"the question failed: {error_text(exc)}")
        return "end_turn"
    content = response.content if isinstance(response, AcceptElicitationResponse) else None
    await turn.say(f"answer: {response.action} {json.dumps(content, sort_keys=True)}")
    return "end_turn"


async def ask_url(turn: Turn) -> StopReason:
    """``ask-url <url> [complete]``: ask the user to open a URL; with ``complete``, end the step
    with ``elicitation/complete`` after a second."""
    url = turn.args[0] if turn.args else "https://example.com/login?step=1"
    mode = ElicitationUrlSessionMode.model_validate({"sessionId": turn.session_id, "elicitationId": "demo-url-1",
                                                     "url": url})
    question = asyncio.ensure_future(turn.client.create_elicitation(message="Sign in to continue", mode=mode))
    if turn.args[1:2] == ["complete"]:
        await asyncio.sleep(1.0)
        await turn.client.complete_elicitation(elicitation_id="demo-url-1")
    try:
        response = await question
    except Exception as exc:
        await turn.say(f"the question failed: {error_text(exc)}")
        return "end_turn"
    await turn.say(f"answer: {response.action}")
    return "end_turn"


async def withdraw(turn: Turn) -> StopReason:
    """``withdraw [seconds]``: ask permission, then withdraw the request (``$/cancel_request``)
    after ``seconds`` (default 2), and report what the client answered."""
    wait = count_arg(turn.args, 2)
    call_id = turn.session.next_tool_call_id("withdrawn")
    await turn.send(start_tool_call(call_id, "rm -rf build", kind="execute", status="pending"))
    request = ToolCallUpdate(tool_call_id=call_id, title="rm -rf build", kind="execute", status="pending")
    conn = turn.client._conn  # type: ignore[attr-defined]  # the SDK exposes no request ids
    request_id = conn._next_request_id
    asked = asyncio.ensure_future(turn.client.request_permission(
        session_id=turn.session_id, tool_call=request, options=permission_options()))
    await asyncio.sleep(wait)
    await conn.send_notification("$/cancel_request", {"requestId": request_id})
    response = await asked
    await turn.say(f"withdrew request {request_id}; the client answered: {response.outcome.outcome}")
    return "end_turn"
