"""Gemini generateContent / streamGenerateContent (Gemini CLI): request → Turn, Reply → SSE."""

from __future__ import annotations

import json
from typing import Any

from .script import Reply, ToolShape, Turn, json_for_schema
from .sink import Sink

MODEL = "gemini-2.5-flash"


def parse(body: dict[str, Any]) -> Turn:
    turn = Turn()
    for group in body.get("tools") or []:
        for fn in group.get("functionDeclarations") or group.get("function_declarations") or []:
            schema = fn.get("parametersJsonSchema") or fn.get("parameters") or {}
            turn.tools[fn["name"]] = ToolShape(fn["name"], set(schema.get("properties") or {}))
    for content in body.get("contents") or []:
        for part in content.get("parts") or []:
            _add_part(turn, content.get("role", "user"), part)
    config = body.get("generationConfig") or {}
    if config.get("responseMimeType") == "application/json":
        turn.wants_json = config.get("responseJsonSchema") or config.get("responseSchema") or {}
    return turn


def _add_part(turn: Turn, role: str, part: dict[str, Any]) -> None:
    if "functionResponse" in part:
        turn.add("tool_result", str((part["functionResponse"] or {}).get("response", "")))
    elif "inlineData" in part or "inline_data" in part:
        data = part.get("inlineData") or part.get("inline_data") or {}
        turn.add_media("inlineData", data.get("mimeType") or data.get("mime_type") or "", data.get("data", ""))
    elif "text" in part:
        turn.add("user" if role == "user" else "assistant", part["text"])


def _usage(reply: Reply) -> dict[str, int]:
    usage_in, usage_out = reply.usage
    return {"promptTokenCount": usage_in, "candidatesTokenCount": usage_out,
            "totalTokenCount": usage_in + usage_out}


def _chunk(parts: list[dict[str, Any]], reply: Reply, finish: str | None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "usageMetadata": _usage(reply), "modelVersion": MODEL}


def stream(reply: Reply, sink: Sink, step_id: str) -> None:
    for i, text in enumerate(reply.chunks):
        last = i == len(reply.chunks) - 1 and reply.call is None
        sink.event(_chunk([{"text": text}], reply, "STOP" if last else None))
        sink.sleep(reply.delay)
    if reply.call is not None:
        call = {"functionCall": {"name": reply.call.name, "args": reply.call.args or {}}}
        sink.event(_chunk([call], reply, "STOP"))


def json_reply(turn: Turn) -> Reply:
    """Side requests that want a JSON object (next-speaker checks, routing) get a minimal one."""
    return Reply(chunks=[json.dumps(json_for_schema(turn.wants_json))])


def whole(reply: Reply) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"text": "".join(reply.chunks)}] if reply.chunks else []
    if reply.call is not None:
        parts.append({"functionCall": {"name": reply.call.name, "args": reply.call.args or {}}})
    return _chunk(parts, reply, "STOP")
