"""``session/update`` without the SDK's dispatch: streamed text checked by hand, the rest by its models.

The SDK runs every notification as a task through its router, a tracing span and a tracker
(about 20 µs each, most of a bare client's time per streamed chunk). The wire transport takes
``session/update`` off that path: the two streamed-text kinds in their exact schema shape go
on as plain text, a ``tool_call_update`` that carries text is validated with its own model,
and everything else is validated with the SDK's ``SessionNotification`` model, so an update
reaches the session exactly as the SDK would deliver it. Anything unusual — a key the shape
does not list, a value of another type — takes the model's path; an update the model rejects
is dropped and the session log says why.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from acp.schema import SessionNotification, ToolCallProgress
from pydantic import ValidationError

from .json_lines import loads_string

TEXT_CHUNKS = frozenset({"agent_message_chunk", "agent_thought_chunk"})
"""The streamed-text kinds that skip the models (their shape is checked here by hand)."""
MESSAGE_KEYS = frozenset({"jsonrpc", "method", "params"})
PARAMS_KEYS = frozenset({"sessionId", "update"})
CHUNK_KEYS = frozenset({"sessionUpdate", "content"})
TEXT_KEYS = frozenset({"type", "text"})
TOOL_TEXT_KEYS = frozenset({"sessionUpdate", "toolCallId", "status", "title", "kind", "content"})
CONTENT_KEYS = frozenset({"type", "content"})

Streamed = tuple[str, str, object]
"""One update for the session: (session id, text kind, the text), or (session id, "", the update: one
of the SDK's models that a ``SessionNotification`` carries)."""


@runtime_checkable
class Inbound(Protocol):
    """Where the transport delivers ``session/update`` and reports what it dropped or repaired
    (the session's client side, ``core/conversation/client.py``)."""

    @property
    def max_line_bytes(self) -> int:
        """The longest line the agent may write; a longer one is dropped and reported."""
        ...

    def updates(self, batch: list[Streamed]) -> None:
        """Updates in the order they arrived (never raises: a failing update is reported)."""
        ...

    def dropped(self, summary: str, raw: str | None = None, tell: bool = False, level: str = "warn") -> None:
        """The transport dropped or repaired something: log it at ``level``, with the line's text
        (``raw``) when it helps; ``tell``: the user should know too."""
        ...


@runtime_checkable
class Withdrawing(Protocol):
    """Where the transport delivers the agent's ``$/cancel_request`` (the SDK routes no ``$/``
    notification): its params, undecoded (``core/conversation/schema_ext.py`` decodes them)."""

    def cancel_request(self, params: object) -> None: ...


LINE_HEAD = b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":'
LINE_SHAPES = [(kind, middle, tail) for kind in sorted(TEXT_CHUNKS) for middle, tail in (
    (b',"update":{"sessionUpdate":"' + kind.encode() + b'","content":{"type":"text","text":', b"}}}}"),
    (b',"update":{"content":{"text":', b',"type":"text"},"sessionUpdate":"' + kind.encode() + b'"}}}'),
)]
"""(kind, what comes between the session id and the text, what comes after the text): the update in
the schema's key order (as most agents write it) and in sorted order (the Python SDK's)."""


def streamed_line(line: bytes) -> Streamed | None:
    """A streamed text chunk read from its line as agents write it (keys in one of ``LINE_SHAPES``'
    orders, no spaces), without parsing the whole message: the line is exactly ``LINE_HEAD``, a
    JSON string, a middle, a JSON string and its tail — each string checked by the JSON parser — so
    it is that message and no other. None for any other line (it takes ``streamed``)."""
    if not line.startswith(LINE_HEAD):
        return None
    for kind, middle, tail in LINE_SHAPES:
        if not line.endswith(tail):
            continue
        cut = line.find(middle, len(LINE_HEAD))
        if cut < 0:
            continue
        try:
            session_id = loads_string(line[len(LINE_HEAD):cut])
            text = loads_string(line[cut + len(middle):len(line) - len(tail)])
        except ValueError:
            return None
        if type(session_id) is not str or type(text) is not str:
            return None
        return session_id, kind, text
    return None


def streamed(message: dict[str, object]) -> Streamed | None:
    """The update of a ``session/update`` message in a hot shape, else None (use ``validated``)."""
    params = message.get("params")
    if message.keys() != MESSAGE_KEYS or message["jsonrpc"] != "2.0" or type(params) is not dict \
            or params.keys() != PARAMS_KEYS:
        return None
    session_id, update = params["sessionId"], params["update"]
    if type(session_id) is not str or type(update) is not dict:
        return None
    kind = update.get("sessionUpdate")
    if type(kind) is not str:
        return None
    if kind in TEXT_CHUNKS:
        text = _chunk_text(update)
        return (session_id, kind, text) if text is not None else None
    if kind == "tool_call_update" and _tool_text_shape(update):
        try:
            return session_id, "", ToolCallProgress.model_validate(update)
        except ValidationError:
            return None
    return None


def _chunk_text(update: dict[str, object]) -> str | None:
    content = update["content"] if update.keys() == CHUNK_KEYS else None
    if type(content) is not dict or content.keys() != TEXT_KEYS or content["type"] != "text":
        return None
    text = content["text"]
    return text if type(text) is str else None


def _tool_text_shape(update: dict[str, object]) -> bool:
    """A tool call update with only an id, a status/title/kind and text content."""
    if not update.keys() <= TOOL_TEXT_KEYS:
        return False
    content = update.get("content")
    if content is None:
        return True
    return type(content) is list and all(
        type(item) is dict and item.keys() == CONTENT_KEYS and item["type"] == "content"
        and type(block := item["content"]) is dict and block.keys() == TEXT_KEYS and block["type"] == "text"
        for item in content)


def validated(params: object) -> Streamed | str:
    """A ``session/update``'s params through the SDK's model: the update, or why it was rejected."""
    try:
        notification = SessionNotification.model_validate(params)
    except ValidationError as exc:
        return invalid_reason(exc)
    return notification.session_id, "", notification.update


def invalid_reason(exc: ValidationError) -> str:
    """The first problems of a validation error, one line (field path: message)."""
    problems = [f"{'.'.join(str(part) for part in error['loc']) or '(message)'}: {error['msg']}"
                for error in exc.errors()[:3]]
    more = f" (and {exc.error_count() - 3} more)" if exc.error_count() > 3 else ""
    return "; ".join(problems) + more
