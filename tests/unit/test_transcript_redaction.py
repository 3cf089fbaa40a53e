"""The chat shows nothing a redactor would hide: streamed text as one text, blocks whole."""

from __future__ import annotations

from acp.helpers import start_tool_call, text_block, tool_content, update_tool_call

from acp_nvim.core.log.redact import Redactor
from acp_nvim.core.transcript.block_view import ViewLimits
from acp_nvim.core.transcript.conversation import Conversation
from acp_nvim.core.transcript.projection import ChatProjection

SECRET = "abc123-very-secret-value"
REDACT = Redactor.for_env({"MY_API_KEY": SECRET}, inherited={})


def recorder(limits: ViewLimits | None = None) -> tuple[Conversation, list[list]]:
    ops: list[list] = []
    transcript = Conversation(agent_label="demo", redactor=REDACT)
    ChatProjection(transcript, ops.append, limits)
    return transcript, ops


def chat(transcript: Conversation) -> ChatProjection:
    """The chat projection ``recorder`` set on ``transcript``."""
    assert isinstance(transcript.events, ChatProjection)
    return transcript.events


def shown(ops: list[list]) -> str:
    """Everything the chat was sent, in order."""
    parts = []
    for op in ops:
        if op["op"] in ("new", "set"):
            parts.append("\n".join(op["lines"]))
        elif op["op"] == "append":
            parts.append(op["text"])
    return "\n".join(parts)


def test_a_configured_secret_split_across_chunks_never_reaches_the_chat():
    transcript, ops = recorder()
    whole = f"The key is {SECRET} and a token ghp_{'a1' * 18} end.\n"
    for cut in range(1, len(whole)):
        ops.clear()
        transcript.agent_chunk(whole[:cut])
        transcript.agent_chunk(whole[cut:])
        transcript.turn_end("end_turn")
        text = shown(ops)
        assert SECRET[:8] not in text and "ghp_a1a1" not in text, cut
        assert "[redacted:$MY_API_KEY]" in text and "end." in text


def test_the_held_back_word_appears_when_the_block_ends():
    transcript, ops = recorder()
    transcript.agent_chunk("Hello wor")
    assert shown(ops).endswith("Hello ")
    transcript.turn_end("end_turn")
    held = {"op": "append", "id": 2, "text": "wor"}
    assert held in ops and ops.index(held) < len(ops) - 1
    assert transcript.blocks[1].text() == "Hello wor"


def test_every_chunk_size_gives_the_text_redacted_as_a_whole():
    whole = f"start {SECRET} middle Authorization: Bearer {'Zq8xY7wV6u' * 3} and password=hunter22 end\n"
    for size in (1, 2, 3, 7, 24):
        transcript, ops = recorder()
        for i in range(0, len(whole), size):
            transcript.agent_chunk(whole[i:i + size])
        transcript.turn_end("end_turn")
        assert transcript.blocks[1].text() == REDACT(whole)
        assert "hunter22" not in shown(ops) and "Zq8xY7wV6u" not in shown(ops)


def test_thoughts_and_user_messages_are_redacted_too():
    transcript, ops = recorder()
    transcript.user_message(f"use {SECRET} please")
    transcript.thought_chunk(f"the key {SECRET[:5]}")
    transcript.thought_chunk(f"{SECRET[5:]} is set")
    transcript.turn_end("end_turn")
    assert SECRET not in shown(ops) and SECRET[5:] not in shown(ops)


def test_tool_calls_notices_and_full_text_are_redacted():
    transcript, ops = recorder()
    transcript.tools.tool_call(start_tool_call("t1", f"curl -H 'Authorization: Bearer {SECRET}'", kind="execute",
                                               raw_input={"command": f"curl -u admin:{SECRET} https://x"}))
    transcript.tools.tool_call(update_tool_call("t1", status="completed",
                                                content=[tool_content(text_block(f"token={SECRET}"))]))
    transcript.notice(f"failed to start: stderr: {SECRET}", "error")
    assert SECRET not in shown(ops)
    block = transcript.blocks[-2].id
    assert SECRET not in (transcript.full_text(block) or "")
    assert all(SECRET not in title for _, _, title in transcript.tools.locations())


def test_replayed_chat_is_redacted():
    transcript, _ = recorder()
    transcript.agent_chunk(f"a {SECRET[:4]}")
    transcript.agent_chunk(f"{SECRET[4:]} b")
    transcript.turn_end("end_turn")
    assert SECRET not in str(chat(transcript).replay_ops())


def test_a_clipped_block_stays_redacted():
    transcript, ops = recorder(ViewLimits(max_lines=3, max_line_chars=20))
    for _ in range(10):
        transcript.agent_chunk(f"line {SECRET}\n")
    transcript.turn_end("end_turn")
    assert SECRET not in shown(ops) and SECRET not in transcript.blocks[1].text()


def test_warming_compiles_the_shapes_a_turns_end_announces():
    from acp_nvim.core.conversation.prompt import warm_redaction
    from acp_nvim.core.log import redact
    from acp_nvim.core.transcript.conversation import turn_end_text

    redact._shapes_pattern.cache_clear()
    warm_redaction()
    compiled = redact._shapes_pattern.cache_info().misses
    transcript, ops = recorder()
    transcript.turn_end("end_turn", "120 in / 4096 out tokens")
    assert shown(ops).endswith(turn_end_text("end_turn", "120 in / 4096 out tokens"))
    assert redact._shapes_pattern.cache_info().misses == compiled  # nothing compiled at the turn's end
