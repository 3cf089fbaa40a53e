"""What the fuzzer sends: JSON-RPC lines from the agent, as hypothesis strategies.

A payload is the bytes of one line plus whether it is a request (the client must answer it).
Placeholders are filled in when a batch is sent: ``@SID@`` (the ACP session id, by the agent),
``@ID@`` (a request id, unique per run), ``@WS@`` (the workspace folder) and ``@OUT@`` (a
folder outside it); reports show payloads with their placeholders.

- ``valid_*``: shaped by the SDK's pydantic models' JSON schema and checked with the model.
- ``invalid_*``: a valid one mutated: a field dropped, a value of the wrong type, an unknown
  ``sessionUpdate``, a huge string, deep nesting.
- ``raw_lines``: transport-level damage: non-JSON, JSON that is not an object, unknown
  methods and ids, a line with a huge or deeply nested value.
- ``surrogate_*`` and ``bad_utf8_*``: lone surrogates (``"\\ud83d"``) and invalid UTF-8 bytes
  (repaired by the wire since issue 12: the message still counts, with U+FFFD in their place).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from acp.schema import ReadTextFileRequest, RequestPermissionRequest, SessionNotification, WriteTextFileRequest
from hypothesis import strategies as st
from pydantic import ValidationError

from .schema import SchemaStrategies, Strategy, any_json

SID, RID, WS, OUT = "@SID@", "@ID@", "@WS@", "@OUT@"


@dataclass(frozen=True)
class Payload:
    """One line the agent writes; ``request``: it carries ``@ID@`` and must be answered."""

    line: bytes
    request: bool
    kind: str

    def show(self, limit: int = 600) -> str:
        text = self.line.decode("utf-8", "backslashreplace")
        return text if len(text) <= limit else f"{text[:limit]}… ({len(self.line)} bytes)"


DEEP = re.compile(rb'"@DEEP:(\d+)@"')


def encode(message: Any) -> bytes:
    """Compact JSON; lone surrogates stay ``\\udXXX`` escapes (``ensure_ascii``), as the SDK writes
    them. ``nested(n)`` markers become ``n`` nested arrays here (``json`` cannot build those)."""
    line = json.dumps(message, separators=(",", ":")).encode()
    return DEEP.sub(lambda m: b"[" * int(m[1]) + b'"deep"' + b"]" * int(m[1]), line)


def notification(params: dict[str, Any], kind: str) -> Payload:
    return Payload(encode({"jsonrpc": "2.0", "method": "session/update", "params": params}), False, kind)


def request(method: str, params: Any, kind: str) -> Payload:
    return Payload(encode({"jsonrpc": "2.0", "id": RID, "method": method, "params": params}), True, kind)


# -- the pieces --------------------------------------------------------------------------------

SAFE_CHARS = st.characters(exclude_categories=["Cs"])
TEXT: Strategy = st.one_of(
    st.text(SAFE_CHARS, max_size=40),
    st.text(st.sampled_from("ab \n\t`#*-[]()|\\\r"), max_size=80),
    st.sampled_from(["", "\n", "```", "```python\nx = 1\n", "- [ ] x", "# h", "\r\n", "\x00", "\x1b[31m"]),
)
NAMES = st.sampled_from(["notes.txt", "a.py", "dir/b.md", "new.txt", "ü nicode.txt", ".hidden", "x" * 300])
PATHS: Strategy = st.one_of(
    NAMES.map(lambda name: f"{WS}/{name}"),
    NAMES.map(lambda name: f"{OUT}/{name}"),
    st.sampled_from([WS, f"{WS}/", f"{WS}/../x", "notes.txt", "", "/", "/nonexistent/x", f"{WS}/missing/deep/f"]),
)
TOOL_IDS = st.sampled_from(["t1", "t2", "t3", "", "t1 "]) | st.text(max_size=6)
OVERRIDES = {"sessionId": st.just(SID), "path": PATHS, "toolCallId": TOOL_IDS, "uri": st.sampled_from(
    [f"file://{WS}/notes.txt", "https://example.invalid/x", "", "file:///etc/passwd", "::"])}


def _schema(model: Any) -> tuple[SchemaStrategies, dict[str, Any]]:
    document = model.model_json_schema(by_alias=True)
    return SchemaStrategies(document, TEXT, OVERRIDES), document


def _valid(model: Any, value: dict[str, Any]) -> bool:
    try:
        model.model_validate(value)
    except ValidationError:
        return False
    return True


_updates, _update_doc = _schema(SessionNotification)
UPDATE: Strategy = _updates.build(_update_doc["properties"]["update"])
_permission, _permission_doc = _schema(RequestPermissionRequest)
_read, _read_doc = _schema(ReadTextFileRequest)
_write, _write_doc = _schema(WriteTextFileRequest)

VALID_UPDATE_PARAMS: Strategy = UPDATE.map(lambda update: {"sessionId": SID, "update": update}).filter(
    lambda params: _valid(SessionNotification, params))
VALID_PERMISSION_PARAMS: Strategy = _permission.build(_permission_doc).filter(
    lambda params: _valid(RequestPermissionRequest, params))
VALID_READ_PARAMS: Strategy = _read.build(_read_doc).filter(lambda p: _valid(ReadTextFileRequest, p))
VALID_WRITE_PARAMS: Strategy = _write.build(_write_doc).filter(lambda p: _valid(WriteTextFileRequest, p))


# -- valid payloads --------------------------------------------------------------------------------

def valid_updates() -> Strategy:
    return VALID_UPDATE_PARAMS.map(lambda params: notification(params, "update"))


def valid_permissions() -> Strategy:
    return VALID_PERMISSION_PARAMS.map(lambda params: request("session/request_permission", params, "permission"))


def valid_fs() -> Strategy:
    return st.one_of(VALID_READ_PARAMS.map(lambda p: request("fs/read_text_file", p, "fs/read")),
                     VALID_WRITE_PARAMS.map(lambda p: request("fs/write_text_file", p, "fs/write")))


# -- mutations -----------------------------------------------------------------------------------

def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside ``value`` (keys and list indexes)."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replace(value[head], rest, new)}
    copy = list(value)
    copy[head] = _replace(copy[head], rest, new)
    return copy


def _drop(value: Any, path: tuple[Any, ...]) -> Any:
    if len(path) == 1:
        if isinstance(value, dict):
            return {k: v for k, v in value.items() if k != path[0]}
        return [v for i, v in enumerate(value) if i != path[0]]
    head = path[0]
    if isinstance(value, dict):
        return {**value, head: _drop(value[head], path[1:])}
    copy = list(value)
    copy[head] = _drop(copy[head], path[1:])
    return copy


def _nested(depth: int) -> str:
    """A marker that ``encode`` turns into ``depth`` nested arrays."""
    return f"@DEEP:{depth}@"


HUGE_TEXT = st.integers(100_000, 1_000_000).map(lambda n: "h" * n)
WRONG_TYPES: Strategy = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                                  st.text(max_size=5), st.lists(st.integers(), max_size=2),
                                  st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


@st.composite
def mutated(draw: st.DrawFn, base: Strategy) -> Any:
    """``base`` with one thing wrong: a field gone, a wrong type, a huge string, deep nesting."""
    value = draw(base)
    paths = _paths(value)[1:] or [()]
    path = draw(st.sampled_from(paths))
    how = draw(st.sampled_from(["drop", "type", "huge", "deep", "kind"]))
    if how == "drop" and path:
        return _drop(value, path)
    if how == "huge":
        return _replace(value, path, draw(HUGE_TEXT))
    if how == "deep":
        return _replace(value, path, _nested(draw(st.sampled_from([50, 500]))))
    if how == "kind" and isinstance(value, dict) and "update" in value:
        return {**value, "update": {**value["update"], "sessionUpdate": draw(st.text(max_size=12))}}
    return _replace(value, path, draw(WRONG_TYPES))


def invalid_updates() -> Strategy:
    return mutated(VALID_UPDATE_PARAMS).map(lambda params: notification(params, "update!"))


def invalid_permissions() -> Strategy:
    return mutated(VALID_PERMISSION_PARAMS).map(
        lambda params: request("session/request_permission", params, "permission!"))


def invalid_fs() -> Strategy:
    return st.one_of(mutated(VALID_READ_PARAMS).map(lambda p: request("fs/read_text_file", p, "fs/read!")),
                     mutated(VALID_WRITE_PARAMS).map(lambda p: request("fs/write_text_file", p, "fs/write!")))


# -- transport-level damage -------------------------------------------------------------------------

def _raw(line: bytes, kind: str) -> Payload:
    return Payload(line, False, kind)


RAW_LINES: Strategy = st.one_of(
    st.binary(max_size=60).filter(lambda b: b"\n" not in b and b"@" not in b).map(lambda b: _raw(b, "raw bytes")),
    st.text(SAFE_CHARS, max_size=60).filter(lambda t: "\n" not in t and "\r" not in t).map(
        lambda t: _raw(t.encode(), "raw text")),
    any_json().map(lambda v: _raw(encode(v) if not isinstance(v, dict) else encode([v]), "json non-object")),
    st.sampled_from([50, 500]).map(lambda d: _raw(encode({"jsonrpc": "2.0", "method": "session/update",
                                                           "params": _nested(d)}), "nested line")),
    st.sampled_from(["session/update", "fs/read_text_file", "x/unknown", "", "_ext"]).flatmap(
        lambda method: st.just(Payload(encode({"jsonrpc": "2.0", "id": RID, "method": method,
                                               "params": {"sessionId": SID}}), True, "request odd method"))),
    st.sampled_from([{"jsonrpc": "2.0", "id": 987654, "result": {}}, {"jsonrpc": "2.0", "id": None, "result": 1},
                     {"jsonrpc": "2.0", "id": "nope", "error": {"code": 1, "message": "x"}},
                     {"jsonrpc": "2.0", "method": "x/unknown", "params": [1, 2]}, {"id": 1}, {"method": 5}]).map(
        lambda m: _raw(encode(m), "odd message")),
)


def raw_lines() -> Strategy:
    return RAW_LINES


# -- known failure classes ---------------------------------------------------------------------------

def deep_lines() -> Strategy:
    """Values nested deeper than Python's ``json`` recursion limit (about 1,000 levels)."""
    return st.tuples(st.sampled_from([2_000, 20_000, 100_000]), st.booleans()).map(
        lambda pair: Payload(encode({"jsonrpc": "2.0", "id": RID, "method": "session/request_permission",
                                     "params": _nested(pair[0])}), True, "deep request") if pair[1] else
        _raw(encode({"jsonrpc": "2.0", "method": "session/update", "params": {
            "sessionId": SID, "update": {"sessionUpdate": "agent_message_chunk", "content": _nested(pair[0])}}}),
            "deep update"))


SURROGATES = st.sampled_from(["\ud83d", "\udc00", "a\ud800b", "\udfff\n"])


def surrogate_updates() -> Strategy:
    """A message chunk holding a lone surrogate (valid JSON: a ``\\udXXX`` escape)."""
    return st.tuples(SURROGATES, st.sampled_from(["agent_message_chunk", "agent_thought_chunk"])).map(
        lambda pair: notification({"sessionId": SID, "update": {"sessionUpdate": pair[1], "content": {
            "type": "text", "text": pair[0]}}}, "surrogate"))


BAD_BYTES = st.sampled_from([b"\xe9", b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf0\x9f"])


def bad_utf8_requests() -> Strategy:
    """A permission request whose title holds invalid UTF-8 bytes."""
    def build(raw: bytes) -> Payload:
        line = encode({"jsonrpc": "2.0", "id": RID, "method": "session/request_permission", "params": {
            "sessionId": SID, "toolCall": {"toolCallId": "t-bad", "title": "bad @BYTES@"},
            "options": [{"optionId": "yes", "name": "Allow", "kind": "allow_once"}]}})
        return Payload(line.replace(b"@BYTES@", raw), True, "bad utf-8 request")
    return BAD_BYTES.map(build)


def batches(*kinds: Strategy, max_size: int = 8) -> Strategy:
    """Batches of payloads drawn from ``kinds``."""
    return st.lists(st.one_of(*kinds), min_size=1, max_size=max_size)


__all__ = ["Payload", "any_json", "batches"]
