"""Formatting of log buffer lines (the Lua side is tested in tests/nvim/test_log_buffer.py)."""

from __future__ import annotations

import json
import re

import pytest

from acp_nvim.core.log.ring import LogRing
from acp_nvim.nvim.log.log_view import body_lines, entry_item, header_line

pytestmark = pytest.mark.timeout(10)


def test_header_has_time_level_arrow_and_summary():
    ring = LogRing(level="trace")
    ring.record_message("out", {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w"}})
    ring.add("info", "stderr", "line one\nline two", direction="in")
    ring.add("info", "lifecycle", "spawned pid 1: agent")
    request, stderr, lifecycle = (header_line(e) for e in ring.entries())
    assert re.fullmatch(r"\d\d:\d\d:\d\d\.\d{3} DBG → request session/new #1 /w", request)
    assert stderr.endswith(" INF ← stderr: line one⏎line two")
    assert lifecycle.endswith(" INF · lifecycle: spawned pid 1: agent")


def test_body_is_pretty_json_indented_or_one_line_for_chunks():
    ring = LogRing(level="trace")
    message = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w"}}
    ring.record_message("out", message)
    chunk = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {
        "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "a\nb"}}}}
    ring.record_message("in", chunk)
    ring.add("info", "stderr", "no body")
    pretty, one_line, empty = (body_lines(e) for e in ring.entries())
    assert all(line.startswith("  ") for line in pretty + one_line)
    assert json.loads("\n".join(pretty)) == message and len(pretty) > 3
    assert len(one_line) == 1 and json.loads(one_line[0]) == chunk
    assert empty == []
    assert entry_item(ring.entries()[0])[0] == 1
