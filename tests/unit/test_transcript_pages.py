"""A long transcript is drawn from its newest blocks: replays, quiet periods and pages (core, no Neovim)."""

from __future__ import annotations

from acp_nvim.core.log.redact import Redactor
from acp_nvim.core.transcript import projection as projection_module
from acp_nvim.core.transcript.conversation import Conversation
from acp_nvim.core.transcript.export import as_context
from acp_nvim.core.transcript.projection import PAGE_LINES, ChatProjection
from acp_nvim.core.transcript.restore import restore_many


class Chat:
    """Applies ops as lua/acp_nvim/chat/init.lua does: blocks in drawn order, their text, and the gaps."""

    def __init__(self) -> None:
        self.order: list[int] = []
        self.text: dict[int, str] = {}
        self.gaps: dict[int, tuple[int | None, int]] = {}

    def apply(self, ops: list) -> None:
        for op in ops:
            kind = op["op"]
            if kind == "new" and op["id"] not in self.text:
                self.order.append(op["id"])
                self.text[op["id"]] = "\n".join(op["lines"])
            elif kind == "insert" and op["id"] not in self.text and op["before"] in self.text:
                self.order.insert(self.order.index(op["before"]), op["id"])
                self.text[op["id"]] = "\n".join(op["lines"])
            elif kind == "append" and op["id"] in self.text:
                self.text[op["id"]] += op["text"]
            elif kind == "gap":
                if op["count"]:
                    self.gaps[op["id"]] = (op["after"], op["count"])
                else:
                    self.gaps.pop(op["id"], None)

    def scroll_up(self, view: ChatProjection) -> int:
        """Draw every gap a page at a time, as a user scrolling up; how many pages it took."""
        pages = 0
        while self.gaps:
            before, (after, _count) = next(iter(self.gaps.items()))
            self.apply(view.page(before, after))
            pages += 1
        return pages


def turns(transcript: Conversation, count: int, lines: int = 10) -> None:
    for n in range(count):
        transcript.user_message(f"question {n}")
        transcript.agent_chunk("\n".join(f"answer {n} line {i}" for i in range(lines)))
        transcript.turn_end("end_turn")


def every_block(transcript: Conversation, view: ChatProjection) -> dict[int, str]:
    chat = Chat()
    for block in transcript.blocks:
        chat.apply(view.block_ops(block))
    return chat.text


def test_a_chat_opened_on_a_long_transcript_draws_its_newest_page_and_a_gap_above():
    transcript = Conversation()
    view = ChatProjection(transcript)
    turns(transcript, 500)
    chat = Chat()
    chat.apply(view.replay_ops())
    drawn = sum(text.count("\n") + 1 for text in chat.text.values())
    assert chat.order[-1] == transcript.blocks[-1].id and drawn <= PAGE_LINES + 20
    ((before, (after, count)),) = chat.gaps.items()
    assert after is None and before == chat.order[0] and count == len(transcript.blocks) - len(chat.order)
    pages = chat.scroll_up(view)
    assert pages > 5
    assert chat.order == [block.id for block in transcript.blocks], "every block, in order"
    assert chat.text == every_block(transcript, view)


def test_a_short_transcript_is_drawn_whole_without_a_gap():
    transcript = Conversation()
    view = ChatProjection(transcript)
    turns(transcript, 3)
    chat = Chat()
    chat.apply(view.replay_ops())
    assert not chat.gaps and chat.order == [block.id for block in transcript.blocks]


def test_blocks_added_quietly_are_drawn_newest_first_after_what_was_drawn_before():
    ops: list = []
    transcript = Conversation()
    view = ChatProjection(transcript, ops.append)
    transcript.notice("── earlier conversation ──", "info")
    drawn_before = transcript.blocks[-1].id
    with view.quiet():
        turns(transcript, 300)
        assert all(op["id"] <= drawn_before for op in ops), "nothing of the quiet blocks is drawn meanwhile"
        assert view.replay_ops()[-1]["id"] == drawn_before, "a chat opened meanwhile shows what came before"
    chat = Chat()
    chat.apply(ops)
    ((before, (after, _count)),) = chat.gaps.items()
    assert after == drawn_before and chat.order[0] == drawn_before and chat.order[1] == before
    transcript.agent_chunk("a live answer after the replay")
    chat.apply(ops[len(ops) - 2:])
    chat.scroll_up(view)
    assert chat.order == [block.id for block in transcript.blocks]
    assert chat.text == every_block(transcript, view)


def test_a_quiet_period_with_little_in_it_draws_it_all(monkeypatch):
    ops: list = []
    transcript = Conversation()
    view = ChatProjection(transcript, ops.append)
    with view.quiet():
        turns(transcript, 2)
    chat = Chat()
    chat.apply(ops)
    assert not chat.gaps and chat.order == [block.id for block in transcript.blocks]


def test_a_page_for_blocks_that_are_not_there_only_closes_the_gap():
    transcript = Conversation()
    view = ChatProjection(transcript)
    turns(transcript, 3)
    assert view.page(999, None) == [{"op": "gap", "id": 999, "after": None, "count": 0}]
    first, second = transcript.blocks[0].id, transcript.blocks[1].id
    assert view.page(first, second) == [{"op": "gap", "id": first, "after": second, "count": 0}]


def test_a_huge_block_is_a_page_of_its_own(monkeypatch):
    monkeypatch.setattr(projection_module, "PAGE_LINES", 50)
    transcript = Conversation()
    view = ChatProjection(transcript)
    transcript.user_message("q")
    transcript.agent_chunk("\n".join(f"line {i}" for i in range(1000)))
    transcript.notice("end")
    chat = Chat()
    chat.apply(view.replay_ops())
    assert len(chat.order) == 1 and chat.gaps
    chat.scroll_up(view)
    assert chat.order == [block.id for block in transcript.blocks]


def test_restored_blocks_are_redacted_when_drawn_or_read_not_when_restored():
    calls: list[str] = []
    secret = "sk-ant-api03-" + "a" * 90
    base = Redactor.for_env({})

    def redact(text: str) -> str:
        calls.append(text)
        return base(text)

    ops: list = []
    transcript = Conversation(redactor=redact)
    view = ChatProjection(transcript, ops.append)
    with view.quiet():
        restore_many(transcript, [("user", f"## You\nq {n}", None) for n in range(1000)]
                     + [("agent", f"key {secret}", None)])
    assert len(calls) <= PAGE_LINES // 2, "only the drawn page went through the redactor, not 1,001 blocks"
    assert secret not in str(ops) and "key " in str(ops)
    assert secret not in (transcript.full_text(transcript.blocks[-1].id) or "")
    assert secret not in as_context(transcript, 10_000)
