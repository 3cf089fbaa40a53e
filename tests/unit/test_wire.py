"""The wire transport: the hot path for streamed updates, and every kind of bad line, through the SDK.

Each test feeds real bytes to a real ``asyncio.StreamReader`` under the SDK's own
``ClientSideConnection``; a recording client stands in for the session (the ``Inbound`` side).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from acp import connect_to_agent
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    RequestPermissionResponse,
    ToolCallProgress,
    UsageUpdate,
)

from acp_nvim.core.agent import inbound, json_lines
from acp_nvim.core.agent.wire import WireTransport
from acp_nvim.core.surrogates import clean, clean_text
from helpers import async_wait_for

pytestmark = pytest.mark.timeout(30)

SID = "s-1"


def line(message: object) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def update(payload: dict[str, Any], sid: str = SID) -> bytes:
    return line({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": payload}})


def chunk(text: str, kind: str = "agent_message_chunk") -> bytes:
    return update({"sessionUpdate": kind, "content": {"type": "text", "text": text}})


PERMISSION = line({"jsonrpc": "2.0", "id": 7, "method": "session/request_permission", "params": {
    "sessionId": SID, "toolCall": {"toolCallId": "t1", "title": "Run"},
    "options": [{"optionId": "y", "name": "Allow", "kind": "allow_once"}]}})


END = b'{"jsonrpc":"2.0","method":"_test/end","params":{}}\n'
"""The last line of every feed: an extension notification the SDK delivers after what came before."""


class Writer:
    """The agent's stdin: what the client wrote, as messages."""

    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    async def drain(self) -> None:
        return None

    def messages(self) -> list[dict[str, Any]]:
        return [json.loads(raw) for raw in self.data.splitlines()]


class Recorder:
    """The session's side: updates in order, what was dropped, what was asked."""

    def __init__(self, max_line_bytes: int = 1 << 20) -> None:
        self.max_line_bytes = max_line_bytes
        self.seen: list[tuple[str, object]] = []
        self.dropped_lines: list[tuple[str, str | None, bool, str]] = []
        self.taps: list[tuple[str, object]] = []

    # Inbound
    def updates(self, batch: list[inbound.Streamed]) -> None:
        for session_id, kind, payload, extra in batch:
            if kind in inbound.TEXT_CHUNKS and extra is not None:
                self.seen.append((kind, (payload, extra)))
            else:
                self.seen.append((kind or type(payload).__name__, payload if kind else session_id))

    def dropped(self, summary: str, raw: str | None = None, tell: bool = False, level: str = "warn") -> None:
        self.dropped_lines.append((summary, raw, tell, level))

    # the SDK's Client (what this transport still leaves to it)
    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.seen.append(("sdk", update))

    async def request_permission(self, session_id: str, tool_call: Any, options: Any, **kwargs: Any) -> Any:
        self.seen.append(("permission", tool_call.title))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="y"))

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        self.seen.append(("ext", method))

    # Tap
    def message(self, direction: str, message: Any, raw: str | bytes | memoryview) -> None:
        self.taps.append((direction, bytes(raw) if isinstance(raw, memoryview) else raw))

    def streamed(self, raw: bytes) -> None:
        self.taps.append(("in", raw))

    def noise(self, text: str) -> None:
        self.taps.append(("noise", text))


async def run(lines: list[bytes], recorder: Recorder | None = None, limit: int = 1 << 16,
              until: int = 0) -> tuple[Recorder, Writer]:
    """Feed ``lines`` to a client connection and wait until all were handled (and ``until``
    things besides the end marker were seen); the recorder and what the client wrote back."""
    recorder = recorder or Recorder()
    reader = asyncio.StreamReader(limit=limit)
    for data in [*lines, END]:
        reader.feed_data(data)
    reader.feed_eof()
    writer = Writer()
    conn = connect_to_agent(recorder, WireTransport(reader, writer, recorder, recorder))  # type: ignore[arg-type]
    try:
        # the SDK handles END after every update before it (the wire's order): then all are in
        await async_wait_for(lambda: ("ext", "test/end") in recorder.seen and len(recorder.seen) > until,
                             what="the lines read")
    finally:
        await conn.close()
    recorder.seen.remove(("ext", "test/end"))
    recorder.taps = recorder.taps[:-1]
    return recorder, writer


# -- the hot path -------------------------------------------------------------------------------


async def test_text_chunks_in_their_schema_shape_skip_the_models():
    recorder, _ = await run([chunk("hello "), chunk("thinking", "agent_thought_chunk")])
    assert recorder.seen == [("agent_message_chunk", "hello "), ("agent_thought_chunk", "thinking")]


@pytest.mark.parametrize("odd", [
    {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x", "annotations": None}},
    {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}, "_meta": {"a": 1}},
    {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}, "messageId": 7},
    {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}, "messageId": None},
    {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}, "messageId": "m",
     "_meta": {}},
])
async def test_anything_unusual_in_a_chunk_takes_the_models_path(odd):
    recorder, _ = await run([update(odd)])
    (name, _sid), = recorder.seen
    assert name == "AgentMessageChunk"


async def test_a_chunk_with_its_message_id_stays_on_the_hot_path_with_the_id():
    """claude-agent-acp stamps ``messageId`` on every chunk: those must not all take the models' path."""
    with_id = {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hm"}, "messageId": "m1"}
    recorder, _ = await run([update(with_id), chunk("plain")])
    assert recorder.seen == [("agent_thought_chunk", ("hm", "m1")), ("agent_message_chunk", "plain")]
    message = json.loads(update(with_id))
    assert inbound.streamed(message) == (SID, "agent_thought_chunk", "hm", "m1")
    _, _, model, raw = inbound.validated(message["params"])
    assert model.message_id == "m1" and raw == with_id


async def test_an_update_of_a_kind_newer_than_the_sdk_goes_on_as_json():
    notice = {"sessionUpdate": "notice", "severity": "info", "title": "hello"}
    recorder, _ = await run([update(notice)])
    assert recorder.seen == [(inbound.NEWER, notice)] and not recorder.dropped_lines
    assert inbound.validated({"sessionId": SID, "update": notice}) == (SID, inbound.NEWER, notice, None)
    assert isinstance(inbound.validated({"sessionId": 5, "update": notice}), str)
    assert isinstance(inbound.validated({"sessionId": SID, "update": {"sessionUpdate": 5}}), str)


async def test_a_known_kind_the_model_rejects_is_not_passed_as_newer():
    bad = {"sessionUpdate": "usage_update", "used": "lots"}
    recorder, _ = await run([update(bad), chunk("next")])
    assert recorder.seen == [("agent_message_chunk", "next")]
    assert recorder.dropped_lines[0][0].startswith("ignored an invalid session/update: update.usage_update")


def test_the_known_kinds_are_read_from_the_sdk_models():
    assert {"agent_message_chunk", "tool_call", "plan_update", "usage_update"} <= inbound.KNOWN_KINDS
    assert "notice" not in inbound.KNOWN_KINDS


async def test_a_chunk_of_the_wrong_type_is_rejected_by_the_model_and_logged():
    recorder, _ = await run([update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": 5}}),
                             chunk("next")])
    assert recorder.seen == [("agent_message_chunk", "next")]
    (summary, _, tell, _), = recorder.dropped_lines
    assert summary.startswith("ignored an invalid session/update: update.agent_message_chunk.content") and not tell


async def test_tool_call_updates_with_text_are_validated_with_their_own_model():
    text = update({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "in_progress",
                   "content": [{"type": "content", "content": {"type": "text", "text": "out\n"}}]})
    recorder, _ = await run([text])
    (name, _), = recorder.seen
    assert name == "ToolCallProgress"
    assert inbound.streamed(json.loads(text))[2] == ToolCallProgress.model_validate(
        json.loads(text)["params"]["update"])


def test_the_hot_shapes_give_what_the_sdk_models_give():
    """Same text, same kind, whichever path: the hand check agrees with SessionNotification."""
    for raw in (chunk("a\nb ✓"), chunk("", "agent_thought_chunk")):
        message = json.loads(raw)
        session_id, kind, text, message_id = inbound.streamed(message)
        model = inbound.validated(message["params"])
        assert model[0] == session_id and model[2].session_update == kind and model[2].content.text == text
        assert message_id is None and model[2].message_id is None


@pytest.mark.parametrize("text", ["plain", "a\nb ✓ \"quoted\" \\ back", "", "\u2028 é \t", "}}}}"])
@pytest.mark.parametrize("kind", ["agent_message_chunk", "agent_thought_chunk"])
def test_a_chunk_line_read_from_its_bytes_is_what_the_parsed_message_gives(text, kind):
    schema = chunk(text, kind).strip()
    message = json.loads(schema)
    other = json.dumps({"method": message["method"], "jsonrpc": "2.0", "params": message["params"]},
                       separators=(",", ":")).encode()
    python_sdk = b'{"jsonrpc":"2.0","method":"session/update","params":' + json.dumps(
        message["params"], separators=(",", ":"), sort_keys=True).encode() + b"}"
    assert inbound.streamed_line(schema) == inbound.streamed(message) == (SID, kind, text, None)
    assert inbound.streamed_line(python_sdk) == (SID, kind, text, None)
    assert inbound.streamed_line(other) is None, "any other key order takes the parser"


@pytest.mark.parametrize("line", [
    b' ' + chunk("x").strip(),  # a space before
    chunk("x").strip() + b"\r",  # a CR after
    update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"},
            "messageId": "m"}).strip(),
    update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": 5}}).strip(),
    line({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": 5, "update": {
        "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}}}).strip(),
    chunk("lone \ud83d").strip(),
    chunk("x").strip().replace(b'"text":"x"', b'"text":"x"},"extra":{"a":"b"'),
    chunk("x").strip().replace(b"x", b"caf\xe9"),
    chunk("x").strip()[:-1],
])
def test_any_other_line_is_left_to_the_parser(line):
    assert inbound.streamed_line(line) is None


async def test_a_chunk_read_from_its_bytes_reaches_the_session_and_the_log_like_a_parsed_one():
    sorted_chunk = b'{"jsonrpc":"2.0","method":"session/update","params":' + json.dumps(
        json.loads(chunk("sorted"))["params"], separators=(",", ":"), sort_keys=True).encode() + b"}\n"
    recorder, _ = await run([chunk("hot "), sorted_chunk, chunk("lone \ud83d")])
    assert recorder.seen == [("agent_message_chunk", "hot "), ("agent_message_chunk", "sorted"),
                             ("agent_message_chunk", "lone \ufffd")]
    assert [raw for _, raw in recorder.taps] == [chunk("hot ").strip(), sorted_chunk.strip(),
                                                 chunk("lone \ud83d").strip()]


async def test_every_other_update_goes_through_the_sdk_model():
    recorder, _ = await run([update({"sessionUpdate": "usage_update", "used": 5, "size": 100})])
    (name, sid), = recorder.seen
    assert name == UsageUpdate.__name__ and sid == SID


async def test_updates_never_overtake_a_message_the_sdk_handles():
    """chunk, permission request (the SDK's task), chunk: the session sees them in that order, and
    the turn's response comes after the chunks before it."""
    recorder, writer = await run([chunk("before"), PERMISSION, chunk("after")], until=3)
    assert recorder.seen == [("agent_message_chunk", "before"), ("permission", "Run"),
                             ("agent_message_chunk", "after")]
    assert writer.messages()[0]["result"]["outcome"]["optionId"] == "y"


async def test_the_tap_sees_every_line_in_wire_order():
    recorder, _ = await run([chunk("a"), PERMISSION, b"not json\n", chunk("b")], until=3)
    assert [d for d, _ in recorder.taps][:4] == ["in", "in", "noise", "in"]
    assert recorder.taps[0][1] == chunk("a").strip()


# -- bad lines ----------------------------------------------------------------------------------


async def test_invalid_utf8_in_a_request_is_replaced_and_the_request_answered():
    bad = PERMISSION.replace(b'"Run"', b'"caf\xe9"')
    recorder, writer = await run([bad], until=1)
    assert recorder.seen == [("permission", "caf\ufffd")]
    assert writer.messages()[0]["id"] == 7
    (summary, _, tell, _), = recorder.dropped_lines
    assert summary == "repaired a message from the agent: 1 invalid UTF-8 byte sequence replaced with U+FFFD"
    assert tell


async def test_a_lone_surrogate_is_replaced_before_anything_sees_it():
    recorder, _ = await run([chunk("\ud83d x"), chunk("\ud83d\ude00")])  # json escapes both (ensure_ascii)
    assert recorder.seen == [("agent_message_chunk", "\ufffd x"), ("agent_message_chunk", "😀")]
    for _, text in recorder.seen:
        str(text).encode("utf-8")


async def test_a_line_nested_too_deeply_is_dropped_and_the_session_goes_on():
    deep = b'{"jsonrpc":"2.0","method":"session/update","params":' + b"[" * 3000 + b"]" * 3000 + b"}\n"
    recorder, _ = await run([deep, chunk("alive")])
    assert recorder.seen == [("agent_message_chunk", "alive")]
    assert recorder.dropped_lines[0][0] == "dropped a line from the agent: nested deeper than 64 levels"


async def test_a_request_nested_too_deeply_is_answered_with_an_error():
    deep = b'{"jsonrpc":"2.0","id":"r1","method":"session/request_permission","params":' + b"[" * 3000 + \
        b"]" * 3000 + b"}\n"
    recorder, writer = await run([deep])
    assert writer.messages() == [{"jsonrpc": "2.0", "id": "r1", "error": {
        "code": -32600, "message": "unreadable message: nested deeper than 64 levels"}}]
    summary, _, tell, _ = recorder.dropped_lines[0]
    assert summary == ("dropped a line from the agent (a method session/request_permission): "
                       "nested deeper than 64 levels") and tell


@pytest.mark.parametrize("bad_id", [[1], {"a": 1}, True])
async def test_a_response_with_an_id_that_is_no_number_or_string_is_ignored(bad_id):
    recorder, _ = await run([line({"jsonrpc": "2.0", "id": bad_id, "result": {}}), chunk("alive")])
    assert recorder.seen == [("agent_message_chunk", "alive")]
    assert "a response whose id is" in recorder.dropped_lines[0][0]


async def test_an_error_response_that_is_no_object_fails_the_request_instead_of_the_connection():
    reader = asyncio.StreamReader()
    writer = Writer()
    recorder = Recorder()
    conn = connect_to_agent(recorder, WireTransport(reader, writer, recorder, recorder))  # type: ignore[arg-type]
    try:
        pending = asyncio.ensure_future(conn.set_session_mode(session_id=SID, mode_id="x"))
        await async_wait_for(lambda: writer.data, what="the request")
        reader.feed_data(line({"jsonrpc": "2.0", "id": writer.messages()[0]["id"], "error": "oops"}))
        with pytest.raises(Exception, match="malformed error from the agent: 'oops'"):
            await asyncio.wait_for(pending, 5)
        reader.feed_data(chunk("alive"))
        await async_wait_for(lambda: recorder.seen, what="the connection still reading")
    finally:
        reader.feed_eof()
        await conn.close()


async def test_unknown_notifications_are_ignored_extensions_still_arrive():
    recorder, _ = await run([line({"jsonrpc": "2.0", "method": "x/unknown", "params": {}}),
                             line({"jsonrpc": "2.0", "method": "_vendor/ping", "params": {}}),
                             line({"jsonrpc": "2.0", "method": ["odd"]}), chunk("alive")], until=2)
    assert recorder.seen == [("ext", "vendor/ping"), ("agent_message_chunk", "alive")]
    assert [d[0] for d in recorder.dropped_lines] == [
        "ignored notification 'x/unknown' (acp.nvim does not handle it)",
        "ignored notification ['odd'] (acp.nvim does not handle it)"]


async def test_a_request_whose_method_is_no_string_is_answered_with_an_error():
    recorder, writer = await run([line({"jsonrpc": "2.0", "id": 3, "method": 5}), chunk("alive")])
    assert writer.messages() == [{"jsonrpc": "2.0", "id": 3, "error": {
        "code": -32600, "message": "the method must be a string, not int"}}]
    assert recorder.seen == [("agent_message_chunk", "alive")]


# -- the line cap -------------------------------------------------------------------------------


@pytest.mark.parametrize("reader_limit", [1 << 10, 1 << 16])
async def test_a_line_over_the_cap_is_dropped_and_reported_and_the_session_goes_on(reader_limit):
    huge = chunk("x" * 50_000)
    recorder, _ = await run([huge, chunk("alive")], Recorder(max_line_bytes=20_000), limit=reader_limit)
    assert recorder.seen == [("agent_message_chunk", "alive")]
    (summary, head, tell, _), = recorder.dropped_lines
    assert summary == "dropped a 50,157 bytes line from the agent: over the limit of 20,000 bytes (wire.max_line_bytes)"
    assert tell and head.startswith('{"jsonrpc":"2.0","method":"session/update"') and len(head) == 4096


async def test_a_request_over_the_cap_is_answered_with_an_error():
    big = line({"jsonrpc": "2.0", "id": 9, "method": "fs/write_text_file",
                "params": {"sessionId": SID, "path": "/x", "content": "y" * 50_000}})
    recorder, writer = await run([big], Recorder(max_line_bytes=20_000), limit=1 << 10)
    (answer,) = writer.messages()
    assert answer["id"] == 9 and answer["error"]["code"] == -32600
    assert "message too large for the client" in answer["error"]["message"]
    assert "(a method fs/write_text_file)" in recorder.dropped_lines[0][0]


async def test_a_response_over_the_cap_fails_its_request():
    reader = asyncio.StreamReader(limit=1 << 10)
    writer = Writer()
    recorder = Recorder(max_line_bytes=20_000)
    conn = connect_to_agent(recorder, WireTransport(reader, writer, recorder, recorder))  # type: ignore[arg-type]
    try:
        pending = asyncio.ensure_future(conn.set_session_mode(session_id=SID, mode_id="x"))
        await async_wait_for(lambda: writer.data, what="the request")
        request_id = writer.messages()[0]["id"]
        reader.feed_data(line({"jsonrpc": "2.0", "id": request_id, "result": {"pad": "z" * 50_000}}))
        with pytest.raises(Exception, match="response was too large"):
            await asyncio.wait_for(pending, 5)
    finally:
        reader.feed_eof()
        await conn.close()


async def test_a_line_under_the_cap_but_over_the_reader_limit_still_arrives():
    recorder, _ = await run([chunk("y" * 100_000), chunk("z")], Recorder(max_line_bytes=1 << 20), limit=1 << 10)
    assert recorder.seen == [("agent_message_chunk", "y" * 100_000), ("agent_message_chunk", "z")]


# -- the item bound: what a line may cost once parsed ------------------------------------------


@pytest.mark.parametrize("payload", [
    [0] * (json_lines.MAX_ITEMS + 1),
    {"a": [{} for _ in range(json_lines.MAX_ITEMS)]},
])
async def test_a_line_of_too_many_small_items_is_dropped_before_it_is_parsed(payload):
    big = line({"jsonrpc": "2.0", "id": 5, "method": "fs/write_text_file", "params": {"pad": payload}})
    recorder, writer = await run([big, chunk("alive")], Recorder(max_line_bytes=64 << 20), limit=1 << 16)
    assert recorder.seen == [("agent_message_chunk", "alive")]
    (summary, _, tell, _), = recorder.dropped_lines
    assert summary.startswith("dropped a line from the agent (a method fs/write_text_file): ") and tell
    assert f"over the limit of {json_lines.MAX_ITEMS:,}" in summary
    (answer,) = writer.messages()
    assert answer["id"] == 5 and "unreadable message" in answer["error"]["message"]


def test_commas_and_brackets_inside_strings_are_no_items():
    text = "a,b,[c],{d}," * (json_lines.MAX_ITEMS // 4)
    assert json_lines.too_many_items(line({"text": text, "escaped": '\\",[' * 1000})) is None
    assert json_lines.too_many_items(b"[" + b"0," * json_lines.MAX_ITEMS + b"0]") == json_lines.MAX_ITEMS + 1
    assert json_lines.too_many_items(b"[1,2,3]") is None


async def test_a_long_text_full_of_commas_still_arrives():
    text = "x,y,[z]," * (json_lines.MAX_ITEMS // 2)
    recorder, _ = await run([chunk(text)], Recorder(max_line_bytes=64 << 20), limit=1 << 16)
    assert recorder.seen == [("agent_message_chunk", text)]


async def test_the_last_line_without_a_newline_still_arrives():
    reader = asyncio.StreamReader()
    reader.feed_data(chunk("a") + chunk("b").rstrip(b"\n"))
    reader.feed_eof()
    recorder = Recorder()
    conn = connect_to_agent(recorder, WireTransport(reader, Writer(), recorder, recorder))  # type: ignore[arg-type]
    try:
        await async_wait_for(lambda: len(recorder.seen) == 2, what="both chunks")
    finally:
        await conn.close()
    assert recorder.seen == [("agent_message_chunk", "a"), ("agent_message_chunk", "b")]


@pytest.mark.parametrize("piece", [1, 7, 4096])
async def test_lines_cut_anywhere_by_the_pipe_arrive_whole_and_a_long_one_is_still_dropped(piece):
    data = b"".join([chunk("first"), b"\n", b"   \n", chunk("y" * 30_000), chunk("two\nlines"),
                     chunk("last").rstrip(b"\n")])
    reader = asyncio.StreamReader()
    recorder = Recorder(max_line_bytes=20_000)
    conn = connect_to_agent(recorder, WireTransport(reader, Writer(), recorder, recorder))  # type: ignore[arg-type]
    loop = asyncio.get_running_loop()

    def deliver(offset: int = 0) -> None:  # a piece per turn of the loop: reads get what has come so far
        if offset >= len(data):
            reader.feed_eof()
            return
        reader.feed_data(data[offset:offset + piece])
        loop.call_soon(deliver, offset + piece)

    try:
        loop.call_soon(deliver)
        await async_wait_for(lambda: len(recorder.seen) == 3, what="the chunks")
    finally:
        await conn.close()
    assert recorder.seen == [("agent_message_chunk", "first"), ("agent_message_chunk", "two\nlines"),
                             ("agent_message_chunk", "last")]
    (summary, head, _, _), = recorder.dropped_lines
    assert summary == "dropped a 30,157 bytes line from the agent: over the limit of 20,000 bytes (wire.max_line_bytes)"
    assert head.startswith('{"jsonrpc":"2.0","method":"session/update"')


# -- the pieces -----------------------------------------------------------------------------------


def test_clean_replaces_lone_surrogates_and_keeps_what_is_clean():
    value = {"a": ["ok", "\ud83d!"], "\udc80": ("\ud83d\ude00",)}
    assert clean(value) == {"a": ["ok", "\ufffd!"], "\ufffd": ("😀",)}
    untouched = {"a": ["ok", "ünï"]}
    assert clean(untouched) is untouched
    assert clean_text("ascii") == "ascii"


@pytest.mark.parametrize("raw, value, note", [
    (b'{"a":"\\ud83d"}', {"a": "\ufffd"}, "lone surrogates replaced with U+FFFD"),
    (b'{"a":"caf\xe9 \xff\xfe"}', {"a": "caf\ufffd \ufffd\ufffd"},
     "3 invalid UTF-8 byte sequences replaced with U+FFFD"),
    (b'{"id":123456789012345678901234567890}', {"id": 123456789012345678901234567890}, None),
    (b"[" * 3000 + b"]" * 3000, json_lines.NOT_JSON, "nested too deeply to read"),
    (b"not json", json_lines.NOT_JSON, None),
])
def test_careful_loading(raw, value, note):
    assert json_lines.loads_careful(raw) == (value, note)


def test_fast_loading_refuses_what_needs_care():
    for raw in (b'{"a":"\\ud83d"}', b'{"id":123456789012345678901234567890}', b"[" * 3000 + b"]" * 3000):
        if json_lines.orjson is not None:
            with pytest.raises((ValueError, RecursionError)):
                json_lines.loads_fast(raw)
    assert json_lines.loads_fast(b'{"a":"\\ud83d\\ude00"}') == {"a": "😀"}


def test_the_json_fallback_cleans_surrogates_too(monkeypatch):
    assert json_lines._loads_json(b'{"a":"\\ud83d"}') == {"a": "\ufffd"}
    assert json_lines._loads_json(b'{"a":"x"}') == {"a": "x"}


def test_a_model_path_update_is_what_the_sdk_would_deliver():
    message = json.loads(chunk("x"))
    _, _, model, raw = inbound.validated(message["params"])
    assert raw == message["params"]["update"]
    assert isinstance(model, AgentMessageChunk) and model.content.text == "x"
    assert inbound.validated({"sessionId": SID}) == "update: Field required"


# -- the session's side (core/conversation/client.py) ---------------------------------------------------


class Served:
    """What SessionClient needs of a session, recording what it is given."""

    def __init__(self, session_id: str | None = SID) -> None:
        from acp_nvim.core.log.ring import LogRing

        self.session_id = session_id
        self.log = LogRing(level="trace")
        self.chunks: list[tuple[str, str]] = []
        self.told: list[str] = []
        self.stream = self

    def chunk(self, kind: str, text: str, message_id: str | None = None) -> None:
        if text == "boom":
            raise RuntimeError("boom")
        self.chunks.append((kind, text) if message_id is None else (kind, text, message_id))

    def route(self, update: Any, raw: Any = None) -> None:
        self.chunks.append(("model", type(update).__name__))

    def newer(self, raw: Any) -> None:
        self.chunks.append(("newer", raw["sessionUpdate"]))

    def child(self, session_id: str, kind: str, payload: Any, extra: Any) -> bool:
        return False  # no child sessions here

    def tell(self, text: str) -> None:
        self.told.append(text)


def test_the_client_side_delivers_in_order_and_skips_other_sessions():
    from acp_nvim.core.conversation.client import SessionClient

    served = Served()
    client = SessionClient(served)  # type: ignore[arg-type]
    usage = UsageUpdate(session_update="usage_update", used=1, size=2)
    client.updates([(SID, "agent_message_chunk", "a", None), ("other", "agent_message_chunk", "b", None),
                    (SID, "", usage, None), (SID, "agent_message_chunk", "c", "m2"),
                    (SID, inbound.NEWER, {"sessionUpdate": "notice"}, None)])
    assert served.chunks == [("agent_message_chunk", "a"), ("model", "UsageUpdate"), ("agent_message_chunk", "c", "m2"),
                             ("newer", "notice")]
    entry = next(e for e in served.log.entries() if e.kind == "wire")
    assert entry.summary == "ignored a session/update for another session ('other')" and entry.level == "warn"
    assert served.told == []


def test_consecutive_text_chunks_of_one_kind_go_on_as_one_text_in_order():
    from acp_nvim.core.conversation.client import SessionClient

    served = Served()
    usage = UsageUpdate(session_update="usage_update", used=1, size=2)
    SessionClient(served).updates([  # type: ignore[arg-type]
        (SID, "agent_message_chunk", "a", None), (SID, "agent_message_chunk", "b", None),
        ("other", "agent_message_chunk", "x", None), (SID, "agent_message_chunk", "c", None),
        (SID, "agent_thought_chunk", "t", None), (SID, "agent_thought_chunk", "u", None),
        (SID, "", usage, None), (SID, "agent_message_chunk", "d", None)])
    assert served.chunks == [("agent_message_chunk", "abc"), ("agent_thought_chunk", "tu"), ("model", "UsageUpdate"),
                             ("agent_message_chunk", "d")]


def test_a_run_of_chunks_ends_where_the_message_id_changes():
    from acp_nvim.core.conversation.client import SessionClient

    served = Served()
    SessionClient(served).updates([  # type: ignore[arg-type]
        (SID, "agent_message_chunk", "a", "m1"), (SID, "agent_message_chunk", "b", "m1"),
        (SID, "agent_message_chunk", "c", "m2"), (SID, "agent_message_chunk", "d", None)])
    assert served.chunks == [("agent_message_chunk", "ab", "m1"), ("agent_message_chunk", "c", "m2"),
                             ("agent_message_chunk", "d")]


def test_before_the_session_is_open_any_session_id_is_taken():
    from acp_nvim.core.conversation.client import SessionClient

    served = Served(session_id=None)
    SessionClient(served).updates([("new", "agent_thought_chunk", "t", None)])  # type: ignore[arg-type]
    assert served.chunks == [("agent_thought_chunk", "t")]


def test_a_failing_update_is_reported_and_the_rest_still_shown_and_telling_is_capped():
    from acp_nvim.core.conversation.client import TELL_LIMIT, SessionClient

    served = Served()
    client = SessionClient(served)  # type: ignore[arg-type]
    usage = UsageUpdate(session_update="usage_update", used=1, size=2)
    client.updates([(SID, "agent_message_chunk", "boom", None), (SID, "", usage, None)] * (TELL_LIMIT + 2)
                   + [(SID, "agent_message_chunk", "ok", None)])
    assert served.chunks == [("model", "UsageUpdate")] * (TELL_LIMIT + 2) + [("agent_message_chunk", "ok")]
    assert len(served.told) == TELL_LIMIT
    assert served.told[0] == "internal error while showing an update: RuntimeError: boom (see :Ai log)"
    assert served.told[-1].endswith("(further such problems only in :Ai log)")
    errors = [e for e in served.log.entries() if e.level == "error"]
    assert len(errors) == TELL_LIMIT + 2 and "RuntimeError" in (errors[0].raw or "")


def test_the_line_cap_comes_from_the_wire_settings():
    from acp_nvim.core.config import parse_settings
    from acp_nvim.core.conversation.client import SessionClient

    settings = parse_settings({"wire": {"max_line_bytes": 4096}})
    assert SessionClient(Served(), settings.wire).max_line_bytes == 4096  # type: ignore[arg-type]
    assert SessionClient(Served()).max_line_bytes == 128 * 1024 * 1024  # type: ignore[arg-type]


def test_hot_chunks_reach_the_transcript_like_the_models_and_not_while_replaying():
    from acp_nvim.core.conversation.details import SessionDetails
    from acp_nvim.core.conversation.updates import UpdateRouter
    from acp_nvim.core.log.ring import LogRing
    from acp_nvim.core.transcript.conversation import Conversation
    from acp_nvim.core.transcript.projection import ChatProjection

    def ops_of(feed: str) -> list[list[object]]:
        ops: list[list[object]] = []
        transcript = Conversation()
        ChatProjection(transcript, ops.append)
        router = UpdateRouter(transcript, SessionDetails(), LogRing(), [], lambda: None)
        for kind, text in [("agent_thought_chunk", "hm\nm"), ("agent_message_chunk", "a"),
                           ("agent_message_chunk", "b")]:
            if feed == "hot":
                router.chunk(kind, text)
            else:
                router.route(inbound.validated(json.loads(chunk(text, kind))["params"])[2])  # type: ignore[arg-type]
        router.replaying = True
        router.chunk("agent_message_chunk", "replayed")
        return ops

    assert ops_of("hot") == ops_of("model")
    assert not any("replayed" in str(op) for op in ops_of("hot"))


@pytest.mark.parametrize("fast", [True, False])
def test_a_long_text_answer_is_encoded_once_and_the_same_json_every_time(monkeypatch, fast):
    from acp_nvim.core.agent import wire

    if not fast:
        monkeypatch.setattr(wire, "orjson", None)
    text = "naïve \"quoted\"\tline ✓\n" * 10_000  # over BIG_TEXT
    first = wire.encode_line({"jsonrpc": "2.0", "id": 3, "result": {"content": text}})
    again = wire.encode_line({"jsonrpc": "2.0", "id": "r-4", "result": {"content": text}})
    assert json.loads(first) == {"jsonrpc": "2.0", "id": 3, "result": {"content": text}}
    assert json.loads(again) == {"jsonrpc": "2.0", "id": "r-4", "result": {"content": text}}
    assert wire._TEXT_JSON[0][0] is text, "the text's JSON is kept for the next answer"
    other = text[:-1] + "!"
    assert json.loads(wire.encode_line({"jsonrpc": "2.0", "id": 5, "result": {"content": other}}))["result"] == {
        "content": other}, "another text is encoded afresh"
    extra = {"jsonrpc": "2.0", "id": 6, "result": {"content": text, "_meta": {"a": 1}}}
    assert json.loads(wire.encode_line(extra)) == extra, "any other shape is encoded whole"


def test_too_deep_counts_arrays_and_objects_not_brackets_in_strings():
    def nested(depth: int) -> bytes:
        value: object = 0
        for level in range(depth):
            value = [value] if level % 2 else {"a": value}
        return json.dumps(value).encode()

    assert not json_lines.too_deep(nested(json_lines.MAX_DEPTH))
    assert json_lines.too_deep(nested(json_lines.MAX_DEPTH + 1)) and json_lines.too_deep(nested(900))
    assert json_lines.too_deep(nested(900).decode())  # a WebSocket frame
    assert not json_lines.too_deep(line({"text": "[{" * 500, "escaped": '\\"[' * 500}))
    assert not json_lines.too_deep(line({"items": [[{"a": []}] for _ in range(1000)]}))
    assert not json_lines.too_deep(b"[" * 100)  # not JSON: its parser says so
