"""One-line summaries of JSON-RPC messages for the log buffer's entry lines."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

PREVIEW = 60

_Json = Mapping[str, Any]
"""A message from the agent, walked without checks: ``_detail`` turns any surprise into no detail."""
_Detail = Callable[[_Json], str]


def summarize(kind: str, method: str | None, message: Mapping[str, object], elapsed_ms: float | None) -> str:
    """``kind method #id [time] detail`` on one line."""
    parts = [kind, method or "?"]
    if "id" in message:
        parts.append(f"#{message['id']}")
    if elapsed_ms is not None:
        parts.append(f"{elapsed_ms:g}ms")
    detail = _detail(kind, method, message)
    if detail:
        parts.append(detail)
    return " ".join(str(part) for part in parts)


def preview(text: object, width: int = PREVIEW) -> str:
    """``text`` quoted, on one line, cut at ``width`` characters."""
    text = str(text)
    cut = text[:width].replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return f'"{cut}{"…" if len(text) > width else ""}"'


def _detail(kind: str, method: str | None, message: _Json) -> str:
    try:
        if kind == "response":
            return _response_detail(method, message)
        params = message.get("params")
        if not isinstance(params, dict):
            return ""
        return _REQUEST_DETAILS.get(method or "", _nothing)(params)
    except (AttributeError, TypeError, KeyError, IndexError):
        return ""  # a malformed message still gets its line; the full JSON is folded under it


def _nothing(_: _Json) -> str:
    return ""


def _response_detail(method: str | None, message: _Json) -> str:
    error = message.get("error")
    if isinstance(error, dict):
        return f"error {error.get('code')}: {preview(error.get('message', ''), 120)}"
    result = message.get("result")
    if not isinstance(result, dict):
        return ""
    return _RESULT_DETAILS.get(method or "", _nothing)(result)


def _session_update(params: _Json) -> str:
    update = params.get("update") or {}
    kind = update.get("sessionUpdate", "?")
    detail = _UPDATE_DETAILS.get(kind, _nothing)(update)
    return f"{kind} {detail}".rstrip()


def _content_text(update: _Json) -> str:
    content = update.get("content") or {}
    if content.get("type") == "text":
        return preview(content.get("text", ""))
    return f"[{content.get('type', '?')}]"


def _tool_call(update: _Json) -> str:
    fields = [update.get("toolCallId", "?"), update.get("status"), update.get("title")]
    return " ".join(preview(f) if i == 2 else str(f) for i, f in enumerate(fields) if f)


def _prompt(params: _Json) -> str:
    texts = [b.get("text", "") for b in params.get("prompt") or [] if b.get("type") == "text"]
    others = sum(1 for b in params.get("prompt") or [] if b.get("type") != "text")
    return preview(" ".join(texts)) + (f" +{others} blocks" if others else "")


def _agent_info(result: _Json) -> str:
    info = result.get("agentInfo") or {}
    return f"{info.get('name', '?')} {info.get('version', '')}".rstrip()


_UPDATE_DETAILS: dict[str, _Detail] = {
    "agent_message_chunk": _content_text,
    "agent_thought_chunk": _content_text,
    "user_message_chunk": _content_text,
    "tool_call": _tool_call,
    "tool_call_update": _tool_call,
    "plan": lambda u: f"{len(u.get('entries') or [])} entries",
    "current_mode_update": lambda u: str(u.get("currentModeId", "")),
    "session_info_update": lambda u: preview(u["title"]) if u.get("title") else "",
    "usage_update": lambda u: f"{u.get('used')}/{u.get('size')}",
    "available_commands_update": lambda u: f"{len(u.get('availableCommands') or [])} commands",
}

_REQUEST_DETAILS: dict[str, _Detail] = {
    "session/update": _session_update,
    "session/prompt": _prompt,
    "session/new": lambda p: str(p.get("cwd", "")),
    "session/load": lambda p: str(p.get("sessionId", "")),
    "session/set_mode": lambda p: str(p.get("modeId", "")),
    "fs/read_text_file": lambda p: str(p.get("path", "")),
    "fs/write_text_file": lambda p: f"{p.get('path', '')} ({len(p.get('content') or '')} chars)",
    "session/request_permission": lambda p: preview((p.get("toolCall") or {}).get("title") or "?"),
    "terminal/create": lambda p: preview(" ".join([p.get("command", ""), *(p.get("args") or [])])),
}

_RESULT_DETAILS: dict[str, _Detail] = {
    "initialize": _agent_info,
    "session/new": lambda r: str(r.get("sessionId", "")),
    "session/prompt": lambda r: str(r.get("stopReason", "")),
    "session/request_permission": lambda r: str((r.get("outcome") or {}).get("optionId")
                                                or (r.get("outcome") or {}).get("outcome", "")),
}
