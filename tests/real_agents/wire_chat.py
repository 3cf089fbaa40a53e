"""OpenAI Chat Completions (opencode): request → Turn, Reply → streamed chunks."""

from __future__ import annotations

import json
from typing import Any

from .script import Reply, ToolShape, Turn, data_url
from .sink import Sink


def parse(body: dict[str, Any]) -> Turn:
    turn = Turn()
    for tool in body.get("tools") or []:
        fn = tool.get("function") or {}
        if "name" in fn:
            turn.tools[fn["name"]] = ToolShape(fn["name"], set((fn.get("parameters") or {}).get("properties") or {}))
    for message in body.get("messages") or []:
        role = {"user": "user", "tool": "tool_result"}.get(message.get("role", ""), "assistant")
        turn.add(role, _text(message.get("content")))
        _add_images(turn, message.get("content"))
    return turn


def _add_images(turn: Turn, content: Any) -> None:
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and part.get("type") == "image_url":
            url = part.get("image_url")
            found = data_url(url.get("url", "") if isinstance(url, dict) else str(url or ""))
            if found:
                turn.add_media("image_url", *found)


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _chunk(step_id: str, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": f"chatcmpl-{step_id}", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def stream(reply: Reply, sink: Sink, step_id: str) -> None:
    sink.event(_chunk(step_id, {"role": "assistant", "content": ""}))
    for text in reply.chunks:
        sink.event(_chunk(step_id, {"content": text}))
        sink.sleep(reply.delay)
    if reply.call is not None:
        call = {"index": 0, "id": f"call_{step_id}", "type": "function",
                "function": {"name": reply.call.name, "arguments": json.dumps(reply.call.args or {})}}
        sink.event(_chunk(step_id, {"tool_calls": [call]}))
    sink.event(_chunk(step_id, {}, "tool_calls" if reply.call else "stop"))
    usage_in, usage_out = reply.usage
    sink.event({"id": f"chatcmpl-{step_id}", "object": "chat.completion.chunk", "created": 0, "model": "m",
                "choices": [], "usage": {"prompt_tokens": usage_in, "completion_tokens": usage_out,
                                         "total_tokens": usage_in + usage_out}})
    sink.raw("data: [DONE]\n\n")


def whole(reply: Reply, step_id: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": "".join(reply.chunks)}
    if reply.call is not None:
        message["tool_calls"] = [{"id": f"call_{step_id}", "type": "function", "function": {
            "name": reply.call.name, "arguments": json.dumps(reply.call.args or {})}}]
    return {"id": f"chatcmpl-{step_id}", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if reply.call else "stop"}],
            "usage": {"prompt_tokens": reply.usage[0], "completion_tokens": reply.usage[1],
                      "total_tokens": sum(reply.usage)}}
