"""The update shapes newer than the SDK (schema 1.19), decoded by hand (schema_ext.py): one test per
shape, as claude-agent-acp 0.101 sends it, and its bad inputs."""

from __future__ import annotations

import pytest

from acp_nvim.core.conversation import schema_ext
from acp_nvim.core.conversation.schema_ext import CompactionChunk, CompactionUpdate, Notice

# -- notice: {"sessionUpdate": "notice", "severity", "title", "description"?} ----------------------


def test_a_notice_as_claude_sends_it() -> None:
    """session-notices.js noticeUpdate(): severity and title, a description only when there is one."""
    title, description = 'MCP server "probe" failed to start', "Its tools are unavailable. Run /mcp for the error."
    update = {"sessionUpdate": "notice", "severity": "warning", "title": title, "description": description}
    assert schema_ext.newer_update(update) == Notice("warning", title, description)
    assert schema_ext.newer_update({"sessionUpdate": "notice", "severity": "info", "title": "t"}) == Notice("info", "t")
    assert schema_ext.newer_update({"sessionUpdate": "notice", "severity": "info", "title": "t",
                                    "description": None, "_meta": {"x": 1}}) == Notice("info", "t")


def test_a_notice_keeps_a_severity_it_does_not_know_and_bounds_its_title() -> None:
    notice = schema_ext.newer_update({"sessionUpdate": "notice", "severity": "critical", "title": "x" * 9000})
    assert isinstance(notice, Notice) and notice.severity == "critical" and len(notice.title) == schema_ext.MAX_TITLE


@pytest.mark.parametrize("bad", [
    {"sessionUpdate": "notice", "severity": "info"},
    {"sessionUpdate": "notice", "severity": "info", "title": "  "},
    {"sessionUpdate": "notice", "severity": 3, "title": "t"},
    {"sessionUpdate": "notice", "title": "t"},
    {"sessionUpdate": "notice", "severity": "info", "title": "t", "description": ["no"]},
])
def test_a_notice_that_does_not_hold_is_none(bad: dict[str, object]) -> None:
    assert schema_ext.newer_update(bad) is None


# -- compaction_update: {"compactionId", "status", "summary"?, "error"?} (patch semantics) ----------


def test_a_compaction_update_as_claude_sends_it() -> None:
    """context-compaction.js: in_progress at the start, then the terminal status with the summary."""
    assert schema_ext.newer_update({"sessionUpdate": "compaction_update", "compactionId": "c1",
                                    "status": "in_progress", "_meta": {}}) == CompactionUpdate("c1", "in_progress")
    summary = [{"type": "text", "text": "We fixed "}, {"type": "text", "text": "a bug."}]
    done = schema_ext.newer_update({"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "completed",
                                    "summary": summary})
    assert done == CompactionUpdate("c1", "completed", summary="We fixed a bug.")
    failed = schema_ext.newer_update({"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "failed",
                                      "error": "context too small"})
    assert failed == CompactionUpdate("c1", "failed", error="context too small")


def test_a_compaction_update_clears_with_null_or_an_empty_summary() -> None:
    for summary in (None, []):
        update = schema_ext.newer_update({"sessionUpdate": "compaction_update", "compactionId": "c1",
                                          "status": "completed", "summary": summary, "error": None})
        assert update == CompactionUpdate("c1", "completed", summary="", error="")


@pytest.mark.parametrize("bad", [
    {"sessionUpdate": "compaction_update", "status": "completed"},
    {"sessionUpdate": "compaction_update", "compactionId": "", "status": "completed"},
    {"sessionUpdate": "compaction_update", "compactionId": "c1"},
    {"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "completed", "summary": "text"},
    {"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "failed", "error": 5},
])
def test_a_compaction_update_that_does_not_hold_is_none(bad: dict[str, object]) -> None:
    assert schema_ext.newer_update(bad) is None


# -- compaction_summary_chunk: {"compactionId", "content"} -------------------------------------------


def test_a_compaction_summary_chunk_as_claude_sends_it() -> None:
    chunk = {"sessionUpdate": "compaction_summary_chunk", "compactionId": "c1",
             "content": {"type": "text", "text": "So"}}
    assert schema_ext.newer_update(chunk) == CompactionChunk("c1", "So")
    image = {"sessionUpdate": "compaction_summary_chunk", "compactionId": "c1",
             "content": {"type": "resource_link", "uri": "file:///a.png", "name": "a"}}
    assert schema_ext.newer_update(image) == CompactionChunk("c1", "[resource_link file:///a.png]")


@pytest.mark.parametrize("bad", [
    {"sessionUpdate": "compaction_summary_chunk", "content": {"type": "text", "text": "x"}},
    {"sessionUpdate": "compaction_summary_chunk", "compactionId": "c1"},
    {"sessionUpdate": "compaction_summary_chunk", "compactionId": "c1", "content": "x"},
])
def test_a_compaction_chunk_that_does_not_hold_is_none(bad: dict[str, object]) -> None:
    assert schema_ext.newer_update(bad) is None


def test_content_that_is_no_block_reads_as_a_question_mark() -> None:
    assert schema_ext.content_text({"type": "text", "text": 3}) == "[text]"
    assert schema_ext.content_text("text") == "[?]"


# -- unknown kinds ---------------------------------------------------------------------------------


def test_an_unknown_kind_is_named_with_its_keys_bounded() -> None:
    update = {"sessionUpdate": "subagent_update", "sessionId": "child", "state": {}, "title": "t"}
    assert schema_ext.newer_update(update) is None
    assert schema_ext.unknown_update(update) == ("subagent_update", ["sessionId", "state", "title"])
    many = {"sessionUpdate": "x" * 200, **{f"k{i:02d}": i for i in range(30)}}
    kind, keys = schema_ext.unknown_update(many)
    assert len(kind) == 80 and len(keys) == 12


# -- tool calls: name, parent, subagent -------------------------------------------------------------


def test_a_tool_calls_name_as_claude_sends_it() -> None:
    """renderer.js toolCall(): ``name: toolUse.name`` beside the title."""
    assert schema_ext.tool_name({"sessionUpdate": "tool_call", "toolCallId": "t", "name": "Read"}) == "Read"
    assert schema_ext.tool_name({"name": ""}) is None
    assert schema_ext.tool_name({"name": 5}) is None
    assert schema_ext.tool_name(None) is None


def test_the_parent_of_a_subagents_update_as_claude_stamps_it() -> None:
    """acp-agent.js stampParentToolUseId(): ``_meta.claudeCode.parentToolUseId``."""
    meta = {"claudeCode": {"toolName": "Read", "parentToolUseId": "toolu_parent"}}
    assert schema_ext.parent_tool_call(meta) == "toolu_parent"
    for bad in (None, {}, {"claudeCode": "x"}, {"claudeCode": {"parentToolUseId": ""}},
                {"claudeCode": {"parentToolUseId": 3}}):
        assert schema_ext.parent_tool_call(bad) is None


def test_a_call_that_runs_a_subagent() -> None:
    """claude-agent-acp's Task/Agent tools (``toolName``), the AIR mark (codex-acp, claude for AIR)."""
    assert schema_ext.runs_subagent({"claudeCode": {"toolName": "Task"}})
    assert schema_ext.runs_subagent({"claudeCode": {"toolName": "Agent"}})
    assert schema_ext.runs_subagent({"jetbrains": {"air": {"subagent": True}}})
    assert not schema_ext.runs_subagent({"jetbrains": {"air": {"subagent": "yes"}}})
    assert not schema_ext.runs_subagent({"claudeCode": {"toolName": "Read"}})
    assert not schema_ext.runs_subagent(None)
