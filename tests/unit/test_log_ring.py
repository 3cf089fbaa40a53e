"""The per-session log ring: bounds, levels, entry fields, export lines."""

from __future__ import annotations

import itertools
import json

import pytest

from acp_nvim.core.log.redact import Redactor
from acp_nvim.core.log.ring import ENTRY_OVERHEAD, MAX_PENDING, LogRing

pytestmark = pytest.mark.timeout(10)


def request(msg_id, method="session/prompt", **params):
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}


def chunk(text):
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": update}}


def test_bounded_by_entry_count_oldest_dropped_first():
    ring = LogRing(max_entries=3, level="trace")
    for n in range(10):
        ring.add("info", "stderr", f"line {n}")
    assert [e.summary for e in ring.entries()] == ["line 7", "line 8", "line 9"]
    assert ring.first_seq == 8 and ring.last_seq == 10 and len(ring) == 3


def test_bounded_by_bytes():
    ring = LogRing(max_entries=1000, max_bytes=3 * (ENTRY_OVERHEAD + 100))
    for n in range(20):
        ring.add("info", "stderr", f"{n:02d}" + "x" * 98)
        assert ring.total_bytes <= ring.max_bytes
    assert len(ring) == 3
    assert ring.entries()[-1].summary.startswith("19")


@pytest.mark.parametrize("bounds", [(0, 1 << 20), (100, 0)])
def test_capacity_zero_turns_the_log_off(bounds):
    ring = LogRing(*bounds, level="trace")
    assert ring.add("error", "error", "boom") is None
    ring.record_message("out", request(1))
    ring.record_stdout("Open https://example.invalid to log in")
    assert ring.entries() == [] and not ring.enabled


def test_level_filter_and_per_session_override():
    ring = LogRing(level="info")
    assert ring.add("debug", "lifecycle", "hidden") is None
    assert ring.add("info", "lifecycle", "shown") is not None
    ring.set_level("error")
    assert ring.add("warn", "lifecycle", "now hidden") is None
    ring.set_level("trace")
    ring.record_message("in", chunk("tok"))
    assert [e.summary for e in ring.entries()][-1].startswith("notification session/update agent_message_chunk")
    with pytest.raises(ValueError, match="unknown log level"):
        ring.set_level("loud")


def test_streaming_chunks_are_trace_other_traffic_debug():
    ring = LogRing(level="debug")
    ring.record_message("in", chunk("tok"))
    ring.record_message("out", request(1))
    assert [e.kind for e in ring.entries()] == ["request"]


def test_entry_fields_and_time_to_response():
    ring = LogRing(level="trace")
    prompt = request(4, prompt=[{"type": "text", "text": "hello there"}])
    line = json.dumps(prompt, indent=1)  # kept exactly as it crossed the wire
    ring.record_message("out", prompt, raw=line)
    ring.record_message("in", {"jsonrpc": "2.0", "id": 4, "result": {"stopReason": "end_turn"}})
    sent, answer = ring.entries()
    assert (sent.direction, sent.kind, sent.method, sent.msg_id, sent.raw) == ("out", "request", "session/prompt", 4,
                                                                               line)
    assert sent.summary == 'request session/prompt #4 "hello there"'
    assert (answer.direction, answer.kind, answer.method, answer.msg_id) == ("in", "response", "session/prompt", 4)
    assert answer.elapsed_ms is not None and answer.elapsed_ms >= 0
    assert answer.summary.endswith("end_turn") and f"{answer.elapsed_ms:g}ms" in answer.summary
    assert json.loads(answer.raw) == {"jsonrpc": "2.0", "id": 4, "result": {"stopReason": "end_turn"}}
    assert sent.time <= answer.time


def test_a_large_answer_is_kept_as_a_view_of_the_written_line_and_read_back_as_text():
    from acp_nvim.core.agent.wire import encode_line

    ring = LogRing(level="trace", redact=Redactor.for_env({"TOKEN": "s3cret-value"}))
    ring.record_message("in", request(7, "fs/read_text_file", path="/w/big.txt", sessionId="s"))
    answer = {"jsonrpc": "2.0", "id": 7, "result": {"content": "é line\n" * 20_000 + "s3cret-value"}}
    line = encode_line(answer)
    ring.record_message("out", answer, memoryview(line)[:-1])
    entry = ring.entries()[-1]
    assert json.loads(entry.raw) == {**answer, "result": {"content": "é line\n" * 20_000 + "[redacted:$TOKEN]"}}
    assert entry.summary.startswith("response fs/read_text_file #7")
    exported = json.loads(entry.export_line())
    assert exported["message"]["result"]["content"].endswith("[redacted:$TOKEN]")


def test_agent_requests_are_timed_by_the_clients_response():
    ring = LogRing(level="trace")
    ring.record_message("in", request("uuid-1", "fs/read_text_file", path="/tmp/x", sessionId="s"))
    ring.record_message("out", {"jsonrpc": "2.0", "id": "uuid-1", "result": {"content": ""}})
    assert ring.entries()[1].method == "fs/read_text_file"
    assert ring.entries()[0].summary == "request fs/read_text_file #uuid-1 /tmp/x"


def test_error_responses_are_warnings_with_the_error_in_the_summary():
    ring = LogRing(level="warn")
    ring.record_message("out", request(2, "session/new", cwd="/w"))
    ring.record_message("in", {"jsonrpc": "2.0", "id": 2, "error": {"code": -32603, "message": "Internal"}})
    (entry,) = ring.entries()
    assert entry.level == "warn" and entry.method == "session/new"
    assert 'error -32603: "Internal"' in entry.summary


def test_unanswered_requests_do_not_grow_without_bound():
    ring = LogRing(level="error")
    for n in range(MAX_PENDING + 50):
        ring.record_message("out", request(n))
    assert len(ring._started) == MAX_PENDING


def test_subscribe_sees_kept_entries_and_unsubscribes():
    ring = LogRing(level="info")
    seen = []
    stop = ring.subscribe(seen.append)
    ring.add("debug", "lifecycle", "filtered")
    ring.add("info", "lifecycle", "kept")
    stop()
    stop()
    ring.add("info", "lifecycle", "after")
    assert [e.summary for e in seen] == ["kept"]


def test_since_returns_only_newer_entries():
    ring = LogRing(max_entries=5)
    for n in range(8):
        ring.add("info", "stderr", str(n))
    assert [e.summary for e in ring.since(6)] == ["6", "7"]
    assert [e.summary for e in ring.since(0)] == ["3", "4", "5", "6", "7"]
    assert ring.since(ring.last_seq) == []


def test_a_streamed_chunk_is_recorded_as_record_message_would_record_it():
    line = b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":' \
           b'{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}'
    rings = [LogRing(level="trace"), LogRing(level="trace")]
    rings[0].record_message("in", json.loads(line), line)
    rings[1].record_streamed("in", line)
    first, second = (ring.entries()[0] for ring in rings)
    assert [(e.level, e.kind, e.method, e.msg_id, e.summary, e.raw) for e in (first, second)] == [
        (first.level, first.kind, first.method, first.msg_id, first.summary, first.raw)] * 2
    assert first.level == "trace" and rings[0].total_bytes == rings[1].total_bytes
    quiet = LogRing()  # level debug: a chunk is not kept
    quiet.record_streamed("in", line)
    assert len(quiet) == 0 and len(LogRing(max_entries=0, level="trace")) == 0


def test_older_gives_the_entries_before_a_number_newest_first_also_after_trimming():
    ring = LogRing(max_entries=50)
    for n in range(120):
        ring.add("info", "lifecycle", f"event {n}")
    assert ring.first_seq == 71 and ring.last_seq == 120
    assert [e.seq for e in itertools.islice(ring.older(100), 3)] == [99, 98, 97]
    assert [e.seq for e in ring.older(73)] == [72, 71]
    assert [e.seq for e in ring.older(500)][:2] == [120, 119] and len(list(ring.older(500))) == 50
    assert list(ring.older(71)) == [] and list(LogRing().older(5)) == []


def test_wire_entries_keep_bytes_until_read_then_summarize_and_redact():
    ring = LogRing(level="trace", redact=Redactor.for_env({"TOKEN": "abcd-secret"}, inherited={}))
    message = chunk("the key is abcd-secret")
    ring.record_message("in", message, json.dumps(message).encode())
    (entry,) = ring.entries()
    assert entry.summary == 'notification session/update agent_message_chunk "the key is [redacted:$TOKEN]"'
    assert json.loads(entry.raw)["params"]["update"]["content"]["text"] == "the key is [redacted:$TOKEN]"
    assert entry.size > 256


def test_stdout_noise_kept_as_such():
    ring = LogRing()
    entry = ring.record_stdout("Open https://example.invalid/oauth to log in")
    assert entry is not None and entry.kind == "stdout" and entry.level == "warn"
    assert entry.raw == "Open https://example.invalid/oauth to log in"


def test_export_lines_are_json_with_the_exact_message():
    ring = LogRing(level="trace")
    raw = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}'
    ring.record_message("out", json.loads(raw), raw=raw)
    ring.add("info", "stderr", "hello from stderr", direction="in")
    header, *lines = [json.loads(line) for line in ring.export({"session": "demo/1"})]
    assert header["format"] == "acp.nvim log" and header["session"] == "demo/1"
    assert lines[0]["message"] == json.loads(raw) and lines[0]["kind"] == "request"
    assert lines[1] == {**lines[1], "kind": "stderr", "text": None, "summary": "hello from stderr"}


def test_redaction_applies_to_summaries_raw_and_exports():
    ring = LogRing(level="trace", redact=Redactor.for_env({"API_KEY": "hunter2-secret"}, inherited={}))
    ring.add("info", "stderr", "using key hunter2-secret", direction="in")
    ring.record_message("out", request(1, prompt=[{"type": "text", "text": "my key is hunter2-secret"}]))
    exported = "\n".join(ring.export({"command": "agent --key hunter2-secret"}))
    texts = [e.summary for e in ring.entries()] + [e.raw or "" for e in ring.entries()] + [exported]
    assert all("hunter2-secret" not in text for text in texts)
    assert "[redacted:$API_KEY]" in exported
    for line in exported.splitlines():
        json.loads(line)


@pytest.mark.parametrize("kind", [{}, [], 5, None])
def test_an_update_kind_that_is_no_string_is_logged_not_fatal(kind):
    """A ``sessionUpdate`` that is an object or a list: the tap must not raise (it runs in the wire)."""
    ring = LogRing(level="trace")
    message = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {
        "sessionUpdate": kind}}}
    ring.record_message("in", message, json.dumps(message))
    (entry,) = ring.entries()
    assert entry.kind == "notification" and entry.level == "debug"


def test_a_line_too_deep_to_summarize_still_reads():
    ring = LogRing(level="trace")
    raw = '{"jsonrpc":"2.0","method":"x","params":' + "[" * 3000 + "]" * 3000 + "}"
    ring.record_message("in", {"jsonrpc": "2.0", "method": "x", "params": []}, raw)
    (entry,) = ring.entries()
    assert entry.summary == "notification x" and entry.raw == raw
