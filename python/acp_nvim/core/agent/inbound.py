"""``session/update`` without the SDK's dispatch: streamed text checked by hand, the rest by its models.

The SDK runs every notification as a task through its router, a tracing span and a tracker
(about 20 µs each, most of a bare client's time per streamed chunk). The wire transport takes
``session/update`` off that path: the two streamed-text kinds in their exact schema shape go
on as plain text, a ``tool_call_update`` that carries text is validated with its own model,
and everything else is validated with the SDK's ``SessionNotification`` model, so an update
reaches the session exactly as the SDK would deliver it. A text chunk may carry its ``messageId``
(claude-agent-acp stamps one on every chunk) and still skip the models. Anything unusual — a key
the shape does not list, a value of another type — takes the model's path; an update the model
rejects is dropped and the session log says why, unless it is of a kind the models do not know
(an update newer than the SDK): that one goes on as its JSON, for the session to decode by hand
(``core/conversation/schema_ext.py``) or to show as unknown.
"""

from __future__ import annotations

from typing import Protocol, get_args, runtime_checkable

from acp.schema import SessionNotification, ToolCallProgress
from pydantic import ValidationError

from .json_lines import loads_string

TEXT_CHUNKS = frozenset({"agent_message_chunk", "agent_thought_chunk"})
"""The streamed-text kinds that skip the models (their shape is checked here by hand)."""
MESSAGE_KEYS = frozenset({"jsonrpc", "method", "params"})
PARAMS_KEYS = frozenset({"sessionId", "update"})
CHUNK_KEYS = frozenset({"sessionUpdate", "content"})
CHUNK_ID_KEYS = frozenset({"sessionUpdate", "content", "messageId"})
TEXT_KEYS = frozenset({"type", "text"})
TOOL_TEXT_KEYS = frozenset({"sessionUpdate", "toolCallId", "status", "title", "kind", "content"})
CONTENT_KEYS = frozenset({"type", "content"})

NEWER = "newer"
"""The kind slot of an update whose kind the SDK's models do not know (its JSON goes on undecoded)."""
Streamed = tuple[str, str, object, object]
"""One update for the session: (session id, text kind, the text, its ``messageId`` or None); (session id,
"", the update as one of the SDK's models that a ``SessionNotification`` carries, the update's JSON as it
came or None); or (session id, ``NEWER``, the update's JSON, None)."""


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
        return session_id, kind, text, None
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
        return (session_id, kind, text, update.get("messageId")) if text is not None else None
    if kind == "tool_call_update" and _tool_text_shape(update):
        try:
            return session_id, "", ToolCallProgress.model_validate(update), update
        except ValidationError:
            return None
    return None


def _chunk_text(update: dict[str, object]) -> str | None:
    """The text of a chunk in its exact shape (a ``messageId``, when there is one, is a string)."""
    keys = update.keys()
    if keys != CHUNK_KEYS and (keys != CHUNK_ID_KEYS or type(update["messageId"]) is not str):
        return None
    content = update["content"]
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


def _known_kinds() -> frozenset[str]:
    models = get_args(SessionNotification.model_fields["update"].annotation)
    return frozenset(get_args(model.model_fields["session_update"].annotation)[0] for model in models)


KNOWN_KINDS = _known_kinds()
"""The ``sessionUpdate`` kinds the SDK's models know (schema 1.19)."""


def validated(params: object) -> Streamed | str:
    """A ``session/update``'s params through the SDK's model: the update (with its JSON), the JSON of an
    update of a kind the models do not know, or why it was rejected."""
    try:
        notification = SessionNotification.model_validate(params)
    except ValidationError as exc:
        newer = _newer(params)
        return newer if newer is not None else invalid_reason(exc)
    raw = params.get("update") if type(params) is dict else None
    return notification.session_id, "", notification.update, raw


def _newer(params: object) -> Streamed | None:
    """An update of a kind newer than the SDK's models, in an envelope that holds (else None)."""
    if type(params) is not dict:
        return None
    session_id, update = params.get("sessionId"), params.get("update")
    if type(session_id) is not str or type(update) is not dict:
        return None
    kind = update.get("sessionUpdate")
    if type(kind) is not str or kind in KNOWN_KINDS:
        return None
    return session_id, NEWER, update, None


def invalid_reason(exc: ValidationError) -> str:
    """The first problems of a validation error, one line (field path: message)."""
    problems = [f"{'.'.join(str(part) for part in error['loc']) or '(message)'}: {error['msg']}"
                for error in exc.errors()[:3]]
    more = f" (and {exc.error_count() - 3} more)" if exc.error_count() > 3 else ""
    return "; ".join(problems) + more
