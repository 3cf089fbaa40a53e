"""OpenAI Responses API (Codex): request → Turn, Reply → streamed response events."""

from __future__ import annotations

import json
from typing import Any

from .script import TOOL_SEARCH, Reply, ToolShape, Turn, data_url
from .sink import Sink


def parse(body: dict[str, Any]) -> Turn:
    turn = Turn()
    _add_tools(turn, body.get("tools") or [])
    for item in body.get("input") or []:
        _add_item(turn, item)
    return turn


def _add_tools(turn: Turn, tools: list[dict[str, Any]]) -> None:
    for tool in tools:
        name = tool.get("name")
        if tool.get("type") == "namespace":  # Codex groups an MCP server's tools: mcp__nvim.{diagnostics, ...}
            for inner in tool.get("tools") or []:
                _add_tool(turn, inner, f"{name}__{inner.get('name')}")
        elif tool.get("type") == TOOL_SEARCH:  # Codex 0.166 defers MCP tools behind a search
            turn.tools[TOOL_SEARCH] = ToolShape(TOOL_SEARCH, {"query", "limit"})
        elif name:
            _add_tool(turn, tool, name)


def _add_tool(turn: Turn, tool: dict[str, Any], name: str) -> None:
    props = set((tool.get("parameters") or {}).get("properties") or {})
    turn.tools[name] = ToolShape(name, props, freeform=tool.get("type") == "custom")


def _add_item(turn: Turn, item: dict[str, Any]) -> None:
    kind = item.get("type", "message")
    if kind == "tool_search_output":  # the tools a search found are offered from here on
        turn.searches += 1
        _add_tools(turn, item.get("tools") or [])
    elif kind in ("function_call_output", "custom_tool_call_output"):
        turn.add("tool_result", _text(item.get("output")))
    elif kind == "message":
        turn.add("user" if item.get("role") == "user" else "assistant", _text(item.get("content")))
        for part in item.get("content") if isinstance(item.get("content"), list) else []:
            if isinstance(part, dict) and part.get("type") == "input_image":
                url = part.get("image_url")
                found = data_url(url.get("url", "") if isinstance(url, dict) else str(url or ""))
                if found:
                    turn.add_media("input_image", *found)


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
    if call.name == TOOL_SEARCH:
        return {"type": "tool_search_call", "id": f"ts_{step_id}", "call_id": f"call_{step_id}",
                "execution": "client", "status": "completed", "arguments": call.args or {}}
    item = {"type": "function_call", "id": f"fc_{step_id}", "call_id": f"call_{step_id}",
            "name": call.name, "arguments": json.dumps(call.args or {}), "status": "completed"}
    if call.name.startswith("mcp__") and call.name.count("__") >= 2:  # a tool of a namespace (see parse)
        item["namespace"], _, item["name"] = call.name.rpartition("__")
    return item
