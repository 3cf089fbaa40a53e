"""The protocol as agents speak it now, in the core: message ids as block boundaries, subagents folded
under their tool call, tool names, compactions, the agent's notices, unknown update kinds, what is
advertised, and message ids kept by the history."""

from __future__ import annotations

import json
from pathlib import Path

from acp.helpers import start_tool_call, update_tool_call
from acp.schema import AgentMessageChunk, TextContentBlock, ToolCallStart, UserMessageChunk
from acp.utils import serialize_params

from acp_nvim.core.agent.process import CAPABILITIES, CLIENT_INFO, InitializeAdvertised
from acp_nvim.core.conversation.details import SessionDetails
from acp_nvim.core.conversation.updates import UpdateRouter
from acp_nvim.core.history.record import Entry, HistorySettings, SessionRecord
from acp_nvim.core.history.store import HistoryStore
from acp_nvim.core.log.ring import LogRing
from acp_nvim.core.transcript import tool_calls
from acp_nvim.core.transcript.conversation import Conversation
from acp_nvim.core.transcript.projection import ChatProjection
from acp_nvim.core.transcript.restore import restore, restore_many


def recorder() -> tuple[Conversation, list[dict]]:
    ops: list[dict] = []
    transcript = Conversation(agent_label="demo")
    ChatProjection(transcript, ops.append)
    return transcript, ops


def shown(ops: list[dict]) -> dict[int, str]:
    """Apply ops like the chat does: block id -> shown text."""
    text: dict[int, str] = {}
    for op in ops:
        if op["op"] in ("new", "set"):
            text[op["id"]] = "\n".join(op["lines"])
        elif op["op"] == "append":
            text[op["id"]] += op["text"]
    return text


def router() -> tuple[UpdateRouter, Conversation, list[dict], LogRing]:
    transcript, ops = recorder()
    log = LogRing(level="trace")
    return UpdateRouter(transcript, SessionDetails(), log, [], lambda: None), transcript, ops, log


# -- message ids -------------------------------------------------------------------------------


def test_a_new_message_id_starts_a_new_block_with_no_other_boundary() -> None:
    transcript, _ = recorder()
    for text, message_id in (("one ", "m1"), ("two", "m1"), ("three", "m2"), (" four", None)):
        transcript.agent_chunk(text, message_id)
    agents = [b for b in transcript.blocks if b.kind == "agent"]
    assert [(b.text(), b.message_id) for b in agents] == [("one two", "m1"), ("three four", "m2")]
    assert [b.kind for b in transcript.blocks].count("heading") == 1, "one answer, one heading"


def test_a_block_without_an_id_ends_where_ids_begin() -> None:
    transcript, _ = recorder()
    transcript.agent_chunk("**Notice:** a fallback line")
    transcript.agent_chunk("the reply", "m1")
    assert [(b.text(), b.message_id) for b in transcript.blocks if b.kind == "agent"] == [
        ("**Notice:** a fallback line", None), ("the reply", "m1")]


def test_thoughts_and_replayed_user_messages_carry_their_ids() -> None:
    transcript, _ = recorder()
    transcript.user_chunk("first", "u1")
    transcript.user_chunk(" prompt", "u1")
    transcript.user_chunk("second prompt", "u2")
    transcript.thought_chunk("hm", "a1")
    transcript.agent_chunk("answer", "a1")
    assert [(b.kind, b.message_id) for b in transcript.blocks if b.kind != "heading"] == [
        ("user", "u1"), ("user", "u2"), ("thought", "a1"), ("agent", "a1")]
    assert transcript.blocks[1].text() == "## You\nsecond prompt"


def test_the_router_passes_ids_from_the_hot_path_and_the_models_alike() -> None:
    stream, transcript, _, _ = router()
    stream.chunk("agent_message_chunk", "hot ", "m1")
    def text(value: str) -> TextContentBlock:
        return TextContentBlock(type="text", text=value)

    stream.route(AgentMessageChunk(session_update="agent_message_chunk", content=text("model"), message_id="m1"))
    stream.route(AgentMessageChunk(session_update="agent_message_chunk", content=text("next"), message_id="m2"))
    stream.route(UserMessageChunk(session_update="user_message_chunk", content=text("u"), message_id="u9"))
    assert [(b.kind, b.text(), b.message_id) for b in transcript.blocks if b.kind != "heading"] == [
        ("agent", "hot model", "m1"), ("agent", "next", "m2"), ("user", "## You\nu", "u9")]


# -- tool calls: names and subagents -----------------------------------------------------------


def test_the_tools_name_is_shown_beside_its_title_unless_the_title_starts_with_it() -> None:
    transcript, ops = recorder()
    transcript.tools.tool_call(start_tool_call("t1", "Read a.py", kind="read", status="pending"), name="Read")
    transcript.tools.tool_call(start_tool_call("t2", "nvim: diagnostics", kind="other"), name="mcp__nvim__diagnostics")
    text = shown(ops)
    assert text[2].startswith("○ read · Read a.py · pending")
    assert text[3].startswith("○ other · nvim: diagnostics (mcp__nvim__diagnostics) · pending")


def claude_call(call_id: str, title: str, status: str = "pending", parent: str | None = None,
                tool: str = "Read") -> tuple[ToolCallStart, dict]:
    """A tool_call as claude-agent-acp 0.101 sends it (``name``, ``_meta.claudeCode``)."""
    meta: dict[str, object] = {"claudeCode": {"toolName": tool, **({"parentToolUseId": parent} if parent else {})}}
    raw = {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": title, "kind": "read", "status": status,
           "name": tool, "_meta": meta}
    return ToolCallStart.model_validate(raw), raw


def test_a_subagents_calls_are_drawn_folded_under_the_call_that_runs_it() -> None:
    stream, transcript, ops, _ = router()
    stream.route(*claude_call("task", "Explore the repo", "in_progress", tool="Task"))
    stream.route(*claude_call("c1", "Read a.py", parent="task"))
    stream.route(*claude_call("c2", "Read b.py", parent="task"))
    stream.route(update_tool_call("c1", status="completed"), None)
    tools = [b for b in transcript.blocks if b.kind == "tool"]
    assert len(tools) == 1, "the subagent's calls have no blocks of their own"
    block = tools[0].id
    lines = shown(ops)[block].split("\n")
    assert lines[0] == "◐ read · Explore the repo (Task) · in_progress"
    fold = lines[-1]
    assert fold.startswith("  ▸ subagent · 2 tool calls: ") and "1 done" in fold and "1 pending" in fold
    assert transcript.tools.running_subagents() == 1
    assert transcript.tools.tool_call_of(block) is transcript.tool_calls["task"]

    assert transcript.toggle(block)
    unfolded = shown(ops)[block].split("\n")
    assert unfolded[-3].startswith("  ▾ subagent · 2 tool calls")
    assert unfolded[-2].startswith("    ● read · Read a.py · completed · ") and unfolded[-2].endswith("s")
    assert unfolded[-1].startswith("    ○ read · Read b.py · pending · ")
    stream.route(update_tool_call("task", status="completed"), None)
    assert transcript.tools.running_subagents() == 0
    assert transcript.toggle(block) and shown(ops)[block].split("\n")[-1].startswith("  ▸ subagent")


def test_nested_subagents_are_indented_and_a_cycle_is_harmless() -> None:
    stream, transcript, ops, _ = router()
    stream.route(*claude_call("task", "outer", "in_progress", tool="Task"))
    stream.route(*claude_call("inner", "inner task", "in_progress", parent="task", tool="Task"))
    stream.route(*claude_call("leaf", "Read c.py", parent="inner"))
    transcript.tool_calls["task"].parent = "leaf"  # a lie that would loop
    block = next(b.id for b in transcript.blocks if b.kind == "tool")
    transcript.toggle(block)
    lines = shown(ops)[block].split("\n")
    assert any(line.startswith("    ◐ read · inner task (Task)") for line in lines)
    assert any(line.startswith("      ○ read · Read c.py") for line in lines)
    assert transcript.tools.running_subagents() == 2


def test_a_child_whose_parent_was_never_seen_is_drawn_alone() -> None:
    stream, transcript, _, _ = router()
    stream.route(*claude_call("c1", "Read a.py", parent="never-announced"))
    assert [b.kind for b in transcript.blocks] == ["heading", "tool"]
    assert transcript.tool_calls["c1"].parent is None


def test_a_subagents_text_stays_with_its_call_not_in_the_answer() -> None:
    stream, transcript, ops, _ = router()
    stream.route(*claude_call("task", "Explore", "in_progress", tool="Task"))
    said = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "found 3 files"},
            "_meta": {"claudeCode": {"parentToolUseId": "task"}}}
    stream.route(AgentMessageChunk.model_validate(said), said)
    assert not any(b.kind == "agent" for b in transcript.blocks)
    state = transcript.tool_calls["task"]
    assert state.said == "found 3 files" and "the subagent said:\n  found 3 files" in state.full_text()
    block = next(b.id for b in transcript.blocks if b.kind == "tool")
    assert "1 lines said" in shown(ops)[block]
    orphan = {**said, "_meta": {"claudeCode": {"parentToolUseId": "gone"}}}
    stream.route(AgentMessageChunk.model_validate(orphan), orphan)
    assert [b.text() for b in transcript.blocks if b.kind == "agent"] == ["found 3 files"]


def test_a_plain_call_has_no_fold_and_toggling_it_does_nothing() -> None:
    transcript, _ = recorder()
    transcript.tools.tool_call(start_tool_call("t1", "Read", kind="read"))
    block = next(b.id for b in transcript.blocks if b.kind == "tool")
    assert not transcript.toggle(block)
    assert not transcript.toggle(999)


def test_durations_read_like_a_clock() -> None:
    assert [tool_calls.duration_text(s) for s in (0.04, 9.95, 12.7, 125, 3725)] == [
        "0.0s", "9.9s", "12s", "2m05s", "1h02m"]


# -- compactions and notices ---------------------------------------------------------------------


def test_a_compaction_is_one_folded_line_with_its_summary() -> None:
    stream, transcript, ops, _ = router()
    stream.newer({"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "in_progress"})
    block = transcript.blocks[-1]
    assert block.kind == "compaction" and shown(ops)[block.id] == "• compacting the conversation…"
    for text in ("We fixed\n", "the parser."):
        stream.newer({"sessionUpdate": "compaction_summary_chunk", "compactionId": "c1",
                      "content": {"type": "text", "text": text}})
    stream.newer({"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "completed"})
    assert shown(ops)[block.id] == "▸ conversation compacted · summary: 2 lines"
    assert transcript.toggle(block.id)
    assert shown(ops)[block.id] == "▾ conversation compacted · summary: 2 lines\n  │ We fixed\n  │ the parser."
    assert transcript.full_text(block.id) == "conversation compacted · summary: 2 lines\nWe fixed\nthe parser."
    assert transcript.entry_text(block) == transcript.full_text(block.id)
    assert [b.kind for b in transcript.blocks] == ["compaction"]


def test_a_failed_compaction_says_why_and_a_replaced_summary_replaces() -> None:
    transcript, ops = recorder()
    transcript.compaction("c1", "completed", summary="old")
    transcript.compaction("c1", "completed", summary="new")
    transcript.compaction("c2", "failed", error="context too small")
    assert shown(ops)[transcript.blocks[0].id] == "▸ conversation compacted · summary: 1 line"
    assert transcript.compactions["c1"].summary == "new"
    assert shown(ops)[transcript.blocks[1].id] == "• compaction failed: context too small"


def test_the_agents_notice_is_marked_by_severity() -> None:
    stream, transcript, ops, _ = router()
    stream.newer({"sessionUpdate": "notice", "severity": "warning", "title": "Model fallback",
                  "description": "Using a smaller model.\nFor this turn."})
    stream.newer({"sessionUpdate": "notice", "severity": "loud", "title": "odd"})
    first, second = transcript.blocks
    assert first.kind == "agent_notice" and first.meta == {"severity": "warning"}
    assert shown(ops)[first.id] == "⚠ Model fallback\n  Using a smaller model.\n  For this turn."
    assert shown(ops)[second.id] == "ℹ odd"


def test_an_unknown_kind_is_said_once_per_kind_and_logged_whole_every_time() -> None:
    stream, transcript, _, log = router()
    update = {"sessionUpdate": "hologram_update", "hologramId": "h1", "frames": [1]}
    stream.newer(update)
    stream.newer(update)
    stream.newer({"sessionUpdate": "notice", "title": "no severity"})
    said = [b.text() for b in transcript.blocks]
    assert said == ["the agent sent an unknown update 'hologram_update' (frames, hologramId); not shown, the whole "
                    "update is in :Ai log",
                    "the agent sent a malformed update 'notice' (title); not shown, the whole update is in :Ai log"]
    logged = [e for e in log.entries() if "session update" in e.summary]
    assert len(logged) == 3 and json.loads(logged[0].raw or "") == update


def test_an_agent_inventing_kinds_is_named_in_the_chat_only_so_often() -> None:
    from acp_nvim.core.conversation.updates import UNKNOWN_TOLD

    stream, transcript, _, log = router()
    for n in range(UNKNOWN_TOLD + 30):
        stream.newer({"sessionUpdate": f"kind_{n}"})
    said = [b.text() for b in transcript.blocks]
    assert len(said) == UNKNOWN_TOLD + 1
    assert said[-1] == (f"the agent sent more than {UNKNOWN_TOLD} kinds of update acp.nvim does not know: "
                        "further ones are only in :Ai log")
    assert len([e for e in log.entries() if "session update 'kind_" in e.summary]) == UNKNOWN_TOLD + 30


def test_a_held_replay_drops_compactions_but_not_notices_and_a_replay_drops_both() -> None:
    stream, transcript, _, _ = router()
    stream.hold(True)
    stream.newer({"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "completed"})
    stream.newer({"sessionUpdate": "notice", "severity": "info", "title": "live"})
    assert [b.kind for b in transcript.blocks] == ["agent_notice"]
    stream.replay(True)
    stream.newer({"sessionUpdate": "notice", "severity": "info", "title": "replayed"})
    assert len(transcript.blocks) == 1


# -- history and what is advertised -------------------------------------------------------------------


def test_message_ids_round_trip_through_a_record_and_older_records_still_read(tmp_path: Path) -> None:
    record = SessionRecord(agent="demo", cwd="/w", session_id="s", created=1.0, updated=1.0,
                           entries=[Entry("user", "## You\nhi"), Entry("agent", "hello", "msg_1")])
    store = HistoryStore(str(tmp_path), HistorySettings())
    store.save(record, lambda text: text)
    assert store.load("/w", "demo", "s") == record
    lines = record.to_json().splitlines()  # JSON Lines: the header, then one line per entry
    assert [json.loads(line) for line in lines[1:]] == [["user", "## You\nhi"], ["agent", "hello", "msg_1"]]
    older = json.dumps({"format": 1, "agent": "demo", "cwd": "/w", "session_id": "s", "entries": [["agent", "x"]]})
    assert SessionRecord.from_json(older).entries == [Entry("agent", "x")]
    for bad in ([["agent", "x", 3]], [["agent", "x", "m", "more"]]):
        try:
            SessionRecord.from_json(json.dumps({"format": 2, "count": 1}) + "\n" + json.dumps(bad[0]) + "\n")
        except ValueError as exc:
            assert "[kind, text, message id]" in str(exc)
        else:
            raise AssertionError(f"{bad} was read")


def test_restored_blocks_keep_their_ids_and_a_compaction_folds_again() -> None:
    transcript, ops = recorder()
    restore(transcript, "agent", "hello", "msg_1")
    restore(transcript, "compaction", "conversation compacted · summary: 1 line\nWe fixed it.")
    assert transcript.blocks[0].message_id == "msg_1"
    block = transcript.blocks[1]
    assert shown(ops)[block.id] == "▸ conversation compacted · summary: 1 line"
    assert transcript.entry_text(block) == "conversation compacted · summary: 1 line\nWe fixed it."


def test_a_long_records_blocks_keep_their_ids_and_a_compaction_folds_again() -> None:
    transcript, ops = recorder()
    restore_many(transcript, [("agent", "hello", "msg_1"),
                              ("compaction", "conversation compacted · summary: 1 line\nWe fixed it.", None)])
    assert transcript.blocks[0].message_id == "msg_1"
    block = transcript.blocks[1]
    assert shown(ops)[block.id] == "▸ conversation compacted · summary: 1 line"
    assert transcript.entry_text(block) == "conversation compacted · summary: 1 line\nWe fixed it."
    transcript.toggle(block.id)
    assert shown(ops)[block.id].startswith("▾ conversation compacted") and "We fixed it." in shown(ops)[block.id]


def test_initialize_advertises_plans_boolean_options_notices_and_compaction() -> None:
    request = serialize_params(InitializeAdvertised(protocol_version=1, client_info=CLIENT_INFO,
                                                    client_capabilities=CAPABILITIES))
    caps = request["clientCapabilities"]
    assert caps["plan"] == {}
    assert caps["session"] == {"configOptions": {"boolean": {}}, "notices": {}, "compaction": {}}
    assert caps["elicitation"] == {"form": {}, "url": {}} and caps["auth"] == {"terminal": True}
    assert request["clientInfo"]["name"] == "acp.nvim"


def test_a_flood_of_subagent_calls_is_bounded_under_its_call() -> None:
    stream, transcript, ops, _ = router()
    stream.route(*claude_call("task", "flood", "in_progress", tool="Task"))
    chain = "task"
    for n in range(tool_calls.MAX_TREE + 20):  # a chain: each call the parent of the next
        stream.route(*claude_call(f"c{n}", f"call {n}", parent=chain))
        chain = f"c{n}"
    tools = [b for b in transcript.blocks if b.kind == "tool"]
    assert len(tools) == 2, "past MAX_TREE calls under one call, the next is drawn on its own (and leads the rest)"
    fold = shown(ops)[tools[0].id].split("\n")[-1]
    assert fold.startswith(f"  ▸ subagent · {tool_calls.MAX_TREE} tool calls: {tool_calls.MAX_TREE} pending")
    overflow = f"○ read · call {tool_calls.MAX_TREE} (Read) · pending\n  ▸ subagent · 19 "
    assert shown(ops)[tools[1].id].startswith(overflow)
    transcript.toggle(tools[0].id)
    deepest = shown(ops)[tools[0].id].split("\n")[-1]
    assert deepest.startswith(" " * (2 * (tool_calls.MAX_DEPTH + 2)) + "○ read · call 499 (Read)")
