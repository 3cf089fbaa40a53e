"""OpenAI Responses API (Codex): request → Turn, Reply → streamed response events."""

from __future__ import annotations

import json
from typing import Any

from .script import Reply, ToolShape, Turn
from .sink import Sink


def parse(body: dict[str, Any]) -> Turn:
    turn = Turn()
    for tool in body.get("tools") or []:
        name = tool.get("name")
        if name:
            props = set((tool.get("parameters") or {}).get("properties") or {})
            turn.tools[name] = ToolShape(name, props, freeform=tool.get("type") == "custom")
    for item in body.get("input") or []:
        _add_item(turn, item)
    return turn


def _add_item(turn: Turn, item: dict[str, Any]) -> None:
    kind = item.get("type", "message")
    if kind in ("function_call_output", "custom_tool_call_output"):
        turn.add("tool_result", _text(item.get("output")))
    elif kind == "message":
        turn.add("user" if item.get("role") == "user" else "assistant", _text(item.get("content")))


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    if isinstance(content, dict):
        return str(content.get("content") or content.get("output") or "")
    return str(content or "")


def stream(reply: Reply, sink: Sink, step_id: str) -> None:
    response = {"id": f"resp_{step_id}", "object": "response", "status": "in_progress", "output": []}
    sink.event({"type": "response.created", "response": response}, name="response.created")
    index = 0
    if reply.chunks:
        _message(reply, sink, step_id, index)
        index += 1
    if reply.call is not None:
        item = _call_item(reply, step_id)
        sink.event({"type": "response.output_item.added", "output_index": index, "item": item},
                   name="response.output_item.added")
        sink.event({"type": "response.output_item.done", "output_index": index, "item": item},
                   name="response.output_item.done")
    usage_in, usage_out = reply.usage
    done = {**response, "status": "completed", "usage": {
        "input_tokens": usage_in, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": usage_out, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage_in + usage_out}}
    sink.event({"type": "response.completed", "response": done}, name="response.completed")


def _message(reply: Reply, sink: Sink, step_id: str, index: int) -> None:
    item_id = f"msg_{step_id}"
    sink.event({"type": "response.output_item.added", "output_index": index, "item": {
        "type": "message", "id": item_id, "role": "assistant", "status": "in_progress", "content": []}},
        name="response.output_item.added")
    for text in reply.chunks:
        sink.event({"type": "response.output_text.delta", "item_id": item_id, "output_index": index,
                    "content_index": 0, "delta": text}, name="response.output_text.delta")
        sink.sleep(reply.delay)
    sink.event({"type": "response.output_item.done", "output_index": index, "item": {
        "type": "message", "id": item_id, "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": "".join(reply.chunks), "annotations": []}]}},
        name="response.output_item.done")


def _call_item(reply: Reply, step_id: str) -> dict[str, Any]:
    call = reply.call
    assert call is not None
    if call.text is not None:
        return {"type": "custom_tool_call", "id": f"ctc_{step_id}", "call_id": f"call_{step_id}",
                "name": call.name, "input": call.text, "status": "completed"}
    return {"type": "function_call", "id": f"fc_{step_id}", "call_id": f"call_{step_id}",
            "name": call.name, "arguments": json.dumps(call.args or {}), "status": "completed"}
