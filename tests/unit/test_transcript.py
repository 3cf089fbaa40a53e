"""The transcript model: ops out for every update kind, bounded views, in-place updates."""

from __future__ import annotations

import asyncio

from acp.helpers import plan_entry, start_tool_call, text_block, tool_content, tool_diff_content, update_tool_call
from acp.schema import TerminalToolCallContent, ToolCallLocation

from acp_nvim.core.transcript import packing
from acp_nvim.core.transcript.block_view import StreamView, ViewLimits, clip_lines, marker_text, project
from acp_nvim.core.transcript.conversation import Conversation
from acp_nvim.core.transcript.projection import ChatProjection
from helpers import async_wait_for


def recorder(limits: ViewLimits | None = None) -> tuple[Conversation, list[list]]:
    ops: list[list] = []
    transcript = Conversation(agent_label="demo")
    ChatProjection(transcript, ops.append, limits)
    return transcript, ops


def chat(transcript: Conversation) -> ChatProjection:
    """The chat projection ``recorder`` set on ``transcript``."""
    assert isinstance(transcript.events, ChatProjection)
    return transcript.events


def view_text(ops: list) -> dict[int, str]:
    """Apply ops like the chat does: block id -> shown text."""
    shown: dict[int, str] = {}
    for op in ops:
        if op["op"] in ("new", "set"):
            shown[op["id"]] = "\n".join(op["lines"])
        elif op["op"] == "append":
            shown[op["id"]] += op["text"]
    return shown


def test_streamed_agent_text_appends_to_one_block_under_a_heading():
    transcript, ops = recorder()
    transcript.user_message("hi")
    for chunk in ("Hello", " wor", "ld\nline 2"):
        transcript.agent_chunk(chunk)
    assert [op["op"] for op in ops] == ["new", "new", "new", "append", "append"]
    assert (ops[1]["kind"], ops[1]["lines"]) == ("heading", ["## demo"])
    assert view_text(ops)[ops[2]["id"]] == "Hello world\nline 2"


def test_thoughts_are_quoted_and_their_own_block():
    transcript, ops = recorder()
    transcript.thought_chunk("think\nmore")
    transcript.agent_chunk("answer")
    kinds = [op["kind"] for op in ops if op["op"] == "new"]
    assert kinds == ["heading", "thought", "agent"]
    assert view_text(ops)[2] == "> think\n> more"


def test_tool_call_updates_its_block_in_place():
    transcript, ops = recorder()
    transcript.tools.tool_call(start_tool_call("t1", "Read a.py", kind="read", status="pending"))
    transcript.tools.tool_call(update_tool_call("t1", status="in_progress"))
    transcript.tools.tool_call(update_tool_call("t1", status="completed",
                                                content=[tool_content(text_block("x\n" * 30))],
                                                locations=[ToolCallLocation(path="/w/a.py", line=3)]))
    tool_ops = [op for op in ops if op["id"] == 2]
    assert [op["op"] for op in tool_ops] == ["new", "set", "set"]
    assert tool_ops[0]["meta"]["status"] == "pending" and tool_ops[-1]["meta"]["status"] == "completed"
    text = view_text(ops)[2]
    assert text.startswith("● read · Read a.py · completed")
    assert "… 19 more lines" in text
    assert "→ /w/a.py:3" in text
    assert transcript.tools.locations() == [("/w/a.py", 3, "Read a.py")]
    full = transcript.full_text(2)
    assert full is not None and full.count("│ x") == 30


def test_diff_and_terminal_content():
    transcript, ops = recorder()
    diff = tool_diff_content("/w/a.py", "a\nB\nc\nd\n", "a\nb\nc\n")
    transcript.tools.tool_call(start_tool_call("t1", "Edit", kind="edit", content=[diff]))
    transcript.tools.tool_call(update_tool_call("t1", content=[diff, TerminalToolCallContent(type="terminal",
                                                                                          terminal_id="term-1")]))
    transcript.tools.tool_call(start_tool_call("t2", "Create", kind="edit",
                                               content=[tool_diff_content("/w/n.py", "x\n")]))
    shown = view_text(ops)
    assert "± /w/a.py +2 −1" in shown[2]
    assert "▸ terminal term-1" in shown[2]
    assert "± /w/n.py +1 −0 (new file)" in shown[3]
    state = transcript.tool_calls["t1"]
    assert "-a" not in state.diff_text() and "+a\n" not in state.diff_text()
    assert "+B" in state.diff_text() and "-b" in state.diff_text()


def test_plan_is_a_checklist_updated_in_place():
    transcript, ops = recorder()
    transcript.plan([plan_entry("one"), plan_entry("two")])
    transcript.plan([plan_entry("one", status="completed"), plan_entry("two", status="in_progress")])
    plan_ops = [op for op in ops if op["id"] == 2]
    assert [op["op"] for op in plan_ops] == ["new", "set"]
    assert plan_ops[-1]["lines"] == ["Plan:", "- [x] one", "- [~] two"]
    transcript.turn_end("end_turn")
    transcript.plan([plan_entry("next turn")])
    assert ops[-1]["op"] == "new", "each turn gets its own plan block"


def test_turn_end_names_the_stop_reason_and_usage():
    transcript, ops = recorder()
    transcript.turn_end("max_tokens", "3 in / 4 out tokens")
    assert ops[-1]["op"] == "new" and ops[-1]["lines"] == ["── turn ended: max_tokens · 3 in / 4 out tokens ──"]


def test_a_huge_single_chunk_is_broken_and_clipped():
    transcript, ops = recorder(ViewLimits(max_lines=5, max_line_chars=10))
    transcript.agent_chunk("x" * 10_000_000)
    new = next(op for op in ops if op["op"] == "new" and op["kind"] == "agent")
    assert new["lines"] == ["x" * 10] * 5
    clip = next(op for op in ops if op["op"] == "clip")
    assert clip["marker"] == marker_text(1, 10_000_000 - 50)
    assert len(transcript.full_text(new["id"]) or "") == 10_000_000


def test_streaming_past_the_limits_stops_appending_and_refreshes_the_marker_rarely():
    transcript, ops = recorder(ViewLimits(max_lines=3, max_line_chars=100))
    for _ in range(100_000):
        transcript.agent_chunk("line\n")
    appends = [op for op in ops if op["op"] == "append"]
    clips = [op for op in ops if op["op"] == "clip"]
    assert len(appends) == 2, "only the chunks that fit are sent"
    assert 1 <= len(clips) <= 10
    assert view_text(ops)[2] == "line\nline\nline"
    assert transcript.full_text(2) == "line\n" * 100_000


def test_replay_rebuilds_the_bounded_view():
    transcript, ops = recorder(ViewLimits(max_lines=3, max_line_chars=100))
    transcript.user_message("q", ["a.py:1-2"])
    for _ in range(10):
        transcript.agent_chunk("l\n")
    transcript.tools.tool_call(start_tool_call("t", "T", status="failed"))
    replay = chat(transcript).replay_ops()
    assert view_text(replay) == view_text(ops)
    assert next(op for op in replay if op["op"] == "clip")["marker"] == marker_text(7, 15)
    assert "— attached: a.py:1-2" in view_text(replay)[1]


def test_stream_view_line_breaking_matches_whole_projection():
    limits = ViewLimits(max_lines=50, max_line_chars=7)
    text = "abc\n" + "y" * 30 + "\n\nzz"
    view = StreamView(limits)
    pieces = "".join(view.feed(text[i : i + 3]) for i in range(0, len(text), 3))
    lines, marker = project(text, limits)
    assert pieces.split("\n") == lines and marker is None
    assert all(len(line) <= 7 for line in lines)


def test_clip_lines_caps_lines_and_width():
    shown = clip_lines(["a" * 20, "b", "c", "d"], ViewLimits(max_lines=2, max_line_chars=5))
    assert shown == ["aaaaa…", "b", marker_text(2, 4)]


# -- bounded memory: finished blocks and tool calls held compressed ------------------


def test_a_finished_streamed_block_is_held_compressed_and_reads_back_whole():
    transcript, _ = recorder()
    chunks = [f"chunk {i} of a long answer, with a lone surrogate \ud83d and é\n" for i in range(500)]
    for chunk in chunks:
        transcript.agent_chunk(chunk)
    agent = transcript.blocks[-1]
    assert agent.packed is None, "the block still streaming is not packed"
    replay_before = chat(transcript).replay_ops()
    transcript.turn_end("end_turn")
    assert agent.packed is not None and agent.chunks == []
    assert len(agent.packed) < agent.size() // 4
    assert agent.size() == len("".join(chunks))
    assert transcript.full_text(agent.id) == "".join(chunks)
    drawn_before = [op for op in replay_before if op["id"] == agent.id]
    end = transcript.blocks[-1].id  # the agent block is drawn above the turn's end, as the user scrolls up
    drawn_after = [op for op in chat(transcript).page(end, None) if op["id"] == agent.id]
    assert [(op["op"], op.get("lines"), op.get("marker")) for op in drawn_after] == [
        ("insert" if op["op"] == "new" else op["op"], op.get("lines"), op.get("marker")) for op in drawn_before]


async def test_a_long_finished_block_is_compressed_off_the_loop_and_reads_the_same_meanwhile():
    transcript, _ = recorder()
    chunks = [f"chunk {i} of a long answer \ud83d é\n" for i in range(4000)]
    for chunk in chunks:
        transcript.agent_chunk(chunk)
    transcript.turn_end("end_turn")
    agent = transcript.blocks[-2]
    assert agent.size() >= packing.OFF_LOOP_CHARS
    assert agent.packed is None and "".join(agent.chunks) == "".join(chunks), "its chunks until the thread is done"
    assert transcript.full_text(agent.id) == "".join(chunks)
    await async_wait_for(lambda: agent.packed is not None)
    assert agent.chunks == [] and transcript.full_text(agent.id) == "".join(chunks)
    assert agent.size() == len("".join(chunks)) and agent.packed_lines == 4001


async def test_a_block_changed_while_it_is_compressed_keeps_its_new_text(monkeypatch):
    landed = asyncio.Event()
    real = packing.pack_later

    def observed(parts, done):  # the compressed old text reaches the block, then the test looks
        def done_and_tell(packed):
            done(packed)
            landed.set()
        return real(parts, done_and_tell)

    monkeypatch.setattr(packing, "pack_later", observed)
    transcript, _ = recorder()
    transcript.agent_chunk("x" * packing.OFF_LOOP_CHARS)
    transcript.turn_end("end_turn")
    agent = transcript.blocks[-2]
    agent.set_text("replaced")
    await async_wait_for(landed.is_set)
    assert agent.packed is None and agent.text() == "replaced"


def test_a_short_finished_block_stays_one_plain_string():
    transcript, _ = recorder()
    for chunk in ("a", "b", "c"):
        transcript.agent_chunk(chunk)
    transcript.turn_end("end_turn")
    agent = transcript.blocks[-2]
    assert agent.packed is None and agent.chunks == ["abc"] and agent.size() == 3


def test_a_settled_tool_call_keeps_its_diff_whole_and_a_later_update_still_applies():
    transcript, ops = recorder()
    old, new = "".join(f"line {i}\n" for i in range(3000)), "".join(f"line {i}\n" for i in range(1, 3001))
    diff = tool_diff_content("/w/big.py", new, old)
    terminal = TerminalToolCallContent(type="terminal", terminal_id="term-9")
    transcript.tools.tool_call(start_tool_call("t1", "Edit big", kind="edit", status="in_progress",
                                               content=[diff, terminal], raw_input={"path": "/w/big.py"}))
    state = transcript.tool_calls["t1"]
    assert not state.settled, "an open call is not packed"
    full_open, diff_open = transcript.full_text(2), state.diff_text()
    transcript.tools.tool_call(update_tool_call("t1", status="completed", raw_output={"ok": True}))
    assert state.settled
    assert state.diff_text() == diff_open and "-line 0" in diff_open and "+line 3000" in diff_open
    assert [d.old_text for d in state.diffs()] == [old]
    assert state.terminal_ids() == ["term-9"] and state.raw_input == {"path": "/w/big.py"}
    full = transcript.full_text(2)
    assert full is not None and full.endswith('"ok": true\n  }')
    assert full_open is not None and full_open.split("\n", 1)[1] in full
    assert chat(transcript).replay_ops()[-1]["lines"] == view_text(ops)[2].split("\n")
    transcript.tools.tool_call(update_tool_call("t1", status="failed", content=[tool_content(text_block("undone"))]))
    assert state.settled and state.diffs() == [] and "│ undone" in view_text(ops)[2]
    assert state.raw_input == {"path": "/w/big.py"} and state.raw_output == {"ok": True}


def test_a_cancelled_tool_call_is_settled_and_a_late_completion_still_shows():
    transcript, ops = recorder()
    transcript.tools.tool_call(start_tool_call("t1", "Run", kind="execute", status="in_progress",
                                               raw_input={"command": "make"}))
    transcript.tools.cancel_tool_call("t1")
    state = transcript.tool_calls["t1"]
    assert state.status == "cancelled" and state.settled
    assert "$ make" in view_text(ops)[2]
    transcript.tools.tool_call(update_tool_call("t1", status="completed"))
    assert view_text(ops)[2].startswith("● execute · Run · completed") and "$ make" in view_text(ops)[2]
