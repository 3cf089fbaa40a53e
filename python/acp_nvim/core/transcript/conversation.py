"""What was said in one session: session updates in, blocks kept, events published.

A conversation is a list of blocks (user message, agent message, thought, tool call, plan,
notice, the agent's notices, compactions). It keeps every block's full text, redacted (a
finished long block compressed, so a long session's text costs a fraction of its size), the
tool-call tree (``tool_tree.py``), the plans of the turn and the compactions. Each change is an
event for its chat (``ConversationEvents``; ``projection.ChatProjection`` draws them); how much
of a block is shown, and which blocks, is the chat's business, never the conversation's.

Message boundaries: a streamed block ends where the kind of text changes, and where the agent's
``messageId`` changes (each block keeps the id of its message). A subagent's tool calls are drawn
folded under the tool call that runs it, a compaction is one folded line with its summary: <CR>
on a ▸ line unfolds it (``toggle``).

History (``restore.py``) and the exports (``export.py``) are functions over a conversation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from acp.schema import PlanEntry

from ..log.redact import Redactor, StreamRedactor
from ..media.items import MediaItem
from ..media.shelf import MediaShelf
from ..render_ops import Meta
from .blocks import COMPACT_EVERY, MAX_SUMMARY, Block, Compaction
from .paths import WHOLE
from .plan_view import plan_line
from .tool_tree import ToolCallTree

NOTICE_MARKS = {"info": "ℹ", "warning": "⚠", "error": "✗"}


class ConversationEvents(Protocol):
    """What a conversation tells its chat (``projection.ChatProjection``)."""

    def stream_started(self, block: Block, text: str) -> None: ...
    def appended(self, block: Block, text: str) -> None: ...
    def stream_ended(self, block: Block) -> None: ...
    def added(self, block: Block) -> None: ...
    def changed(self, block: Block) -> None: ...
    def older_restored(self, before: int, above: int | None, count: int) -> None: ...


class Unseen:
    """The events of a conversation no chat shows."""

    def stream_started(self, block: Block, text: str) -> None: ...
    def appended(self, block: Block, text: str) -> None: ...
    def stream_ended(self, block: Block) -> None: ...
    def added(self, block: Block) -> None: ...
    def changed(self, block: Block) -> None: ...
    def older_restored(self, before: int, above: int | None, count: int) -> None: ...


class Conversation:
    """Keeps the blocks of one session and publishes each change to its chat."""

    def __init__(self, agent_label: str = "Agent", redactor: Redactor | None = None) -> None:
        self.agent_label = agent_label
        self.redactor = redactor
        """Every text kept passes it: blocks whole, streamed blocks through a StreamRedactor."""
        self.events: ConversationEvents = Unseen()
        """Where the changes go (a ``ChatProjection`` sets itself here)."""
        self.blocks: list[Block] = []
        self.by_id: dict[int, Block] = {}
        self.paths = WHOLE
        """How tool call blocks show paths (the session sets its workspace roots and home)."""
        self.terminal_view: Callable[[str], list[str] | None] | None = None
        """Set by a session that runs terminals: the live lines of an embedded terminal."""
        self.tools = ToolCallTree(self)
        self.tool_calls = self.tools.calls
        self._plans: dict[str, int] = {}
        self.unfolded: set[int] = set()
        """Blocks whose fold (subagent calls, compaction summary) the user opened."""
        self.compactions: dict[str, Compaction] = {}
        self._compaction_blocks: dict[str, int] = {}
        self._compaction_of_block: dict[int, str] = {}
        self.last: Block | None = None
        self.older: tuple[int, int, int] | None = None
        """(first id, count, the block they go above) of a record's older entries still to come."""
        self.next_id = 0
        self.answering = False
        """The agent's answer of this turn has its heading."""
        self.undone: list[tuple[int, int]] = []
        """Block id ranges (first, last) of turns a rewind took back: shown, but no longer context."""
        self.media = MediaShelf(redact=self.redact)
        """The links, resources, images and audio the agent sent, by block (the session sets its cap)."""

    # -- reading -----------------------------------------------------------------------

    def clean(self, block: Block) -> str:
        """The block's text, through this session's redactor once (a restored block's first read)."""
        if not block.unredacted:
            return block.text()
        block.set_text(self.redact(block.text()))
        block.unredacted = False
        return block.chunks[0]

    def full_text(self, block_id: int) -> str | None:
        """A block's whole text, nothing clipped (a tool call's input, output and diffs too)."""
        state = self.tools.tool_call_of(block_id)
        if state is not None:
            return self.redact(state.full_text())
        compaction = self.compaction_of(block_id)
        if compaction is not None:
            return self.redact(compaction.full_text())
        block = self.by_id.get(block_id)
        return self.clean(block) if block is not None else None

    def entry_text(self, block: Block) -> str:
        """What a record or an export keeps of a block: its text, a compaction's summary included."""
        compaction = self.compaction_of(block.id)
        return self.redact(compaction.full_text()) if compaction is not None else block.text()

    def compaction_of(self, block_id: int) -> Compaction | None:
        compaction_id = self._compaction_of_block.get(block_id)
        return self.compactions.get(compaction_id) if compaction_id is not None else None

    def is_undone(self, block_id: int) -> bool:
        """Whether the block belongs to a turn a rewind took back."""
        return any(first <= block_id <= last for first, last in self.undone)

    def has_prompts(self) -> bool:
        """Whether the user sent anything in this conversation yet."""
        return any(block.kind == "user" for block in self.blocks)

    def redact(self, text: str) -> str:
        return self.redactor(text) if self.redactor is not None else text

    # -- streamed text -------------------------------------------------------------

    def user_message(self, text: str, attached: list[str] | None = None, mark: str = "") -> None:
        """The user's prompt, echoed under a heading (``mark`` after it: " · steered ..."); the
        agent's answer gets its own heading."""
        suffix = f"\n— attached: {', '.join(attached)}" if attached else ""
        self._new_stream_block("user", f"## You{mark}\n{text}{suffix}")
        self.answering = False

    def user_chunk(self, text: str, message_id: str | None = None) -> None:
        """A user message replayed by the agent (session/load)."""
        if not self._stream("user", text, message_id):
            self._new_stream_block("user", f"## You\n{text}", message_id)
            self.answering = False

    def agent_chunk(self, text: str, message_id: str | None = None) -> None:
        if not self._stream("agent", text, message_id):
            self.answer_heading()
            self._new_stream_block("agent", text, message_id)

    def thought_chunk(self, text: str, message_id: str | None = None) -> None:
        quoted = text.replace("\n", "\n> ")
        if not self._stream("thought", quoted, message_id):
            self.answer_heading()
            self._new_stream_block("thought", "> " + quoted, message_id)

    def _stream(self, kind: str, text: str, message_id: str | None = None) -> bool:
        """Extend the last block when it is of ``kind`` and of the same message (a chunk without an id
        continues the block); False when a new block is needed."""
        last = self.last
        if last is None or last.kind != kind or not last.streamed:
            return False
        if message_id is not None and message_id != last.message_id:
            return False
        if last.guard is not None:
            text = last.guard.feed(text)
            if not text:
                return True
        chunks = last.chunks
        chunks.append(text)
        if len(chunks) >= COMPACT_EVERY:
            chunks[:] = ["".join(chunks)]
        self.events.appended(last, text)
        return True

    def _new_stream_block(self, kind: str, text: str, message_id: str | None = None) -> Block:
        guard = StreamRedactor(self.redactor) if self.redactor is not None else None
        if guard is not None:
            text = guard.feed(text)
        block = self.add(Block(self.take_id(), kind, [text], streamed=True, guard=guard, message_id=message_id))
        self.events.stream_started(block, text)
        return block

    def finish_last(self) -> None:
        """A streamed block is done: what its redactor held back is added, and it is held compressed."""
        last = self.last
        if last is None:
            return
        if last.guard is not None:
            tail = last.guard.flush()
            last.guard = None
            if tail:
                self._stream(last.kind, tail)
        if last.streamed:
            self.events.stream_ended(last)
        last.settle()

    # -- whole blocks ----------------------------------------------------------------

    def media_item(self, item: MediaItem) -> None:
        """A link, resource, image or audio of the agent's message: its own one-line block (``media``)."""
        self.answer_heading()
        block = self.new_block("media", item.line, {"media": item.kind})
        self.media.keep(block.id, item)

    def answer_heading(self) -> None:
        if not self.answering:
            self.answering = True
            self.new_block("heading", f"## {self.agent_label}")

    def notice(self, text: str, kind: str = "notice") -> None:
        self.new_block(kind, text)

    def marker(self, text: str, meta: Meta) -> int:
        """A notice the chat draws by its ``meta`` (a rewind's ``fold`` of the turns it took back); its id."""
        return self.new_block("info", text, meta).id

    def flag(self, text: str) -> int:
        """A warning the user may act on with a key on its line; returns its block id."""
        return self.new_block("error", text).id

    def agent_notice(self, severity: str, title: str, description: str = "") -> None:
        """A notice of the agent (ACP ``notice``): a mark for its severity, its title, its description."""
        mark = NOTICE_MARKS.get(severity, NOTICE_MARKS["info"])
        detail = "".join(f"\n  {line}" for line in description.split("\n")) if description else ""
        self.new_block("agent_notice", f"{mark} {title}{detail}", {"severity": severity})

    def turn_end(self, stop_reason: str, usage: str | None = None) -> None:
        self._plans.clear()
        self.answering = False
        self.new_block("turn_end", turn_end_text(stop_reason, usage))

    def new_block(self, kind: str, text: str, meta: Meta | None = None) -> Block:
        block = self.add(Block(self.take_id(), kind, [self.redact(text)], meta=meta))
        self.events.added(block)
        return block

    def set_block(self, block_id: int | None, kind: str, text: str, meta: Meta | None = None) -> int:
        """Block ``block_id``'s new text (a new block when there is none yet); its id."""
        block = self.by_id.get(block_id) if block_id is not None else None
        if block is None:
            return self.new_block(kind, text, meta).id
        block.set_text(self.redact(text))
        block.meta = meta
        self.events.changed(block)
        return block.id

    def take_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def add(self, block: Block) -> Block:
        self.finish_last()
        self.blocks.append(block)
        self.by_id[block.id] = block
        self.last = block
        return block

    # -- folds, compactions, plans -------------------------------------------------------

    def toggle(self, block_id: int) -> bool:
        """Fold or unfold a block's ▸ line (a subagent's calls, a compaction's summary); False when the
        block has none."""
        state = self.tools.tool_call_of(block_id)
        compaction = self.compaction_of(block_id)
        if (state is None or not (state.subagent or state.children)) and compaction is None:
            return False
        self.unfolded ^= {block_id}
        if state is not None:
            self.tools.draw(state)
        elif compaction is not None:
            self.show_compaction(compaction)
        return True

    def compaction(self, compaction_id: str, status: str, summary: str | None = None,
                   error: str | None = None) -> None:
        """A ``compaction_update``: a new compaction's folded line, or the change of a known one."""
        compaction = self.compactions.get(compaction_id) or Compaction(compaction_id, status)
        compaction.status = status
        compaction.summary = compaction.summary if summary is None else summary
        compaction.error = compaction.error if error is None else error
        self.show_compaction(compaction)

    def compaction_chunk(self, compaction_id: str, text: str) -> None:
        """A ``compaction_summary_chunk``: the summary grows (a first-seen id starts a compaction)."""
        compaction = self.compactions.get(compaction_id) or Compaction(compaction_id, "in_progress")
        compaction.summary = (compaction.summary + text)[-MAX_SUMMARY:]
        self.show_compaction(compaction)

    def show_compaction(self, compaction: Compaction) -> None:
        block_id = self._compaction_blocks.get(compaction.compaction_id)
        text = compaction.render(block_id is not None and block_id in self.unfolded)
        self.keep_compaction(compaction, self.set_block(block_id, "compaction", text, {"status": compaction.status}))

    def keep_compaction(self, compaction: Compaction, block_id: int) -> None:
        """``compaction`` is drawn by block ``block_id``."""
        self.compactions[compaction.compaction_id] = compaction
        self._compaction_blocks[compaction.compaction_id] = block_id
        self._compaction_of_block[block_id] = compaction.compaction_id

    def plan(self, entries: list[PlanEntry], plan_id: str = "") -> None:
        """Show the plan as a checklist, updated in place for the rest of the turn."""
        self._show_plan(plan_id, plan_checklist(entries))

    def plan_text(self, text: str, plan_id: str = "") -> None:
        """A plan the agent sent as markdown or as a file reference."""
        self._show_plan(plan_id, f"Plan:\n{text}")

    def plan_removed(self, plan_id: str) -> None:
        if plan_id in self._plans:
            self._show_plan(plan_id, "Plan: (removed by the agent)")

    def _show_plan(self, plan_id: str, text: str) -> None:
        if plan_id not in self._plans:
            self.answer_heading()
        self._plans[plan_id] = self.set_block(self._plans.get(plan_id), "plan", text)


def plan_checklist(entries: list[PlanEntry]) -> str:
    """A plan's checklist as the chat shows it."""
    return "\n".join(["Plan:"] + [plan_line(e) for e in entries])


def turn_end_text(stop_reason: str, usage: str | None = None) -> str:
    """The line that closes a turn in the chat."""
    suffix = f" · {usage}" if usage else ""
    return f"── turn ended: {stop_reason}{suffix} ──"
