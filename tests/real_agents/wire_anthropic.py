"""Anthropic Messages API (Claude Code): request → Turn, Reply → SSE events."""

from __future__ import annotations

import json
from typing import Any

from .script import Reply, ToolShape, Turn
from .sink import Sink


def parse(body: dict[str, Any]) -> Turn:
    turn = Turn()
    for tool in body.get("tools") or []:
        if "name" in tool:
            props = (tool.get("input_schema") or {}).get("properties") or {}
            turn.tools[tool["name"]] = ToolShape(tool["name"], set(props))
    for message in body.get("messages") or []:
        _add_message(turn, message)
    return turn


def _add_message(turn: Turn, message: dict[str, Any]) -> None:
    content = message.get("content")
    if isinstance(content, str):
        turn.add("user" if message.get("role") == "user" else "assistant", content)
        return
    for block in content or []:
        kind = block.get("type")
        if kind == "text":
            turn.add("user" if message.get("role") == "user" else "assistant", block.get("text", ""))
        elif kind == "tool_result":
            turn.add("tool_result", _result_text(block.get("content")))
        elif kind == "image" and (block.get("source") or {}).get("type") == "base64":
            source = block["source"]
            turn.add_media("anthropic image", source.get("media_type", ""), source.get("data", ""))


def _result_text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def stream(reply: Reply, sink: Sink, step_id: str) -> None:
    usage_in, usage_out = reply.usage
    sink.event({"type": "message_start", "message": {
        "id": f"msg_{step_id}", "type": "message", "role": "assistant", "model": "claude-scripted",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": usage_in, "output_tokens": 1}}}, name="message_start")
    index = 0
    if reply.chunks:
        _text_block(reply, sink, index)
        index += 1
    if reply.call is not None:
        _tool_block(reply, sink, index, step_id)
    sink.event({"type": "message_delta",
                "delta": {"stop_reason": "tool_use" if reply.call else "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": usage_out}}, name="message_delta")
    sink.event({"type": "message_stop"}, name="message_stop")


def _text_block(reply: Reply, sink: Sink, index: int) -> None:
    sink.event({"type": "content_block_start", "index": index,
                "content_block": {"type": "text", "text": ""}}, name="content_block_start")
    for chunk in reply.chunks:
        sink.event({"type": "content_block_delta", "index": index,
                    "delta": {"type": "text_delta", "text": chunk}}, name="content_block_delta")
        sink.sleep(reply.delay)
    sink.event({"type": "content_block_stop", "index": index}, name="content_block_stop")


def _tool_block(reply: Reply, sink: Sink, index: int, step_id: str) -> None:
    assert reply.call is not None
    sink.event({"type": "content_block_start", "index": index, "content_block": {
        "type": "tool_use", "id": f"toolu_{step_id}", "name": reply.call.name, "input": {}}},
        name="content_block_start")
    sink.event({"type": "content_block_delta", "index": index, "delta": {
        "type": "input_json_delta", "partial_json": json.dumps(reply.call.args or {})}},
        name="content_block_delta")
    sink.event({"type": "content_block_stop", "index": index}, name="content_block_stop")


def whole(reply: Reply, step_id: str) -> dict[str, Any]:
    """The non-streaming answer (Claude Code makes a few side requests this way)."""
    content: list[dict[str, Any]] = []
    if reply.chunks:
        content.append({"type": "text", "text": "".join(reply.chunks)})
    if reply.call is not None:
        content.append({"type": "tool_use", "id": f"toolu_{step_id}", "name": reply.call.name,
                        "input": reply.call.args or {}})
    return {"id": f"msg_{step_id}", "type": "message", "role": "assistant", "model": "claude-scripted",
            "content": content, "stop_reason": "tool_use" if reply.call else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": reply.usage[0], "output_tokens": reply.usage[1]}}
