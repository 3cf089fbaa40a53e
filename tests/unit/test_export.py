"""``:Ai export``'s Markdown (core/transcript/export.py): headings as in the chat, message ids in HTML
comments that nothing can close early, tool calls fenced, a compaction's summary in <details>."""

from __future__ import annotations

from acp.helpers import start_tool_call

from acp_nvim.core.transcript import export
from acp_nvim.core.transcript.conversation import Conversation


def test_each_message_is_under_its_heading_with_its_id() -> None:
    transcript = Conversation(agent_label="claude")
    transcript.user_message("fix the bug")
    transcript.thought_chunk("look at parse()", "msg_1")
    transcript.agent_chunk("Found it.", "msg_1")
    transcript.tools.tool_call(start_tool_call("t1", "Edit ```x```", kind="edit", status="completed"), name="Edit")
    transcript.agent_chunk("Done.", "msg_2")
    transcript.agent_notice("warning", "Model fallback", "smaller model")
    transcript.turn_end("end_turn")
    text = export.markdown(transcript, "acp.nvim · claude/1", "about -- this")
    assert text == (
        "# acp.nvim · claude/1\n\n<!-- about %2D%2D this -->\n\n## You\nfix the bug\n\n## claude\n\n"
        "<!-- message-id: msg_1 -->\n> look at parse()\n\n<!-- message-id: msg_1 -->\nFound it.\n\n"
        "````text\n● edit · Edit ```x``` · completed\n````\n\n<!-- message-id: msg_2 -->\nDone.\n\n"
        "⚠ Model fallback  \n  smaller model\n\n── turn ended: end_turn ──\n")


def test_a_replayed_user_message_keeps_its_id_below_its_heading() -> None:
    transcript = Conversation()
    transcript.user_chunk("earlier prompt", "u-7")
    assert export.block_markdown(transcript, transcript.blocks[0]) == "## You\n<!-- message-id: u-7 -->\nearlier prompt"


def test_a_compaction_is_folded_in_details_and_a_hostile_id_cannot_end_its_comment() -> None:
    transcript = Conversation()
    transcript.compaction("c1", "completed", summary="We <b>fixed</b> it.")
    transcript.compaction("c2", "failed", error="too small")
    transcript.agent_chunk("x", "a-->b\n<script>")
    first, second, _, agent = transcript.blocks
    assert export.block_markdown(transcript, first) == (
        "<details><summary>conversation compacted · summary: 1 line</summary>\n\nWe <b>fixed</b> it.\n\n</details>")
    assert export.block_markdown(transcript, second) == "*compaction failed: too small*"
    assert export.block_markdown(transcript, agent) == "<!-- message-id: a%2D%2D>b <script> -->\nx"
