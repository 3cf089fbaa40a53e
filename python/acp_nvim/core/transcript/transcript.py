"""The transcript model: session updates in, render operations out.

A transcript is a list of blocks (user message, agent message, thought, tool call,
plan, notice, the agent's notices, compactions). It keeps every block's full text (a finished
long block compressed, so a long session's text costs a fraction of its size); the chat shows a
bounded view of each (see block_view.py). Each change is a render operation the editor applies
(``core/render_ops.py``: ``new``, ``append``, ``set``, ``clip``).

Message boundaries: a streamed block ends where the kind of text changes, and where the agent's
``messageId`` changes (each block keeps the id of its message). A subagent's tool calls are drawn
folded under the tool call that runs it, a compaction is one folded line with its summary: <CR>
on a ▸ line unfolds it (``toggle``).

A long transcript is drawn from its newest blocks (the frame budget: no draw of 10,000 turns at
once). A chat opened on it (``replay_ops``) and the blocks added during ``quiet`` (a reopened
session's history, an agent's replay) draw one page of the newest blocks and a ``gap`` above
them; ``page`` draws the blocks of a gap next to the ones drawn, newest first, a page at a time,
as the user scrolls up to it.
"""

from __future__ import annotations

import bisect
import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from acp.schema import PlanEntry

from .. import render_ops
from ..log.redact import Redactor, StreamRedactor
from ..media.items import MediaItem
from ..media.shelf import MediaShelf
from ..render_ops import Meta, RenderOp
from . import packing, tool_calls
from .block_view import StreamView, ViewLimits, clip_lines, project
from .paths import WHOLE
from .plan_view import plan_line
from .tool_calls import FOLDED, UNFOLDED

Op = RenderOp
OpSink = Callable[[Op], None]

PLAN_MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}
NOTICE_MARKS = {"info": "ℹ", "warning": "⚠", "error": "✗"}
CONTEXT_KINDS = frozenset(("user", "heading", "agent", "tool", "plan"))
"""Blocks that make up the conversation itself (``as_context``)."""
COMPACT_EVERY = 4096
"""Join a streamed block's chunks after this many, so 100k tiny chunks stay cheap to hold."""
PACK_MIN_CHARS = 128
"""A finished block this long or longer is held compressed (``Block.settle``)."""
PAGE_LINES = 400
"""Lines of the blocks drawn at once from a long transcript (at least one block), each block
counted as ``BLOCK_LINES`` more (its marks and highlights cost the chat what lines do): a chat
window's worth several times over, and a few ms of Neovim's time."""
BLOCK_LINES = 4


Restored = tuple[str, str, str | None]
"""A block of a record: its kind, its text as saved, and its message id."""


@dataclass(slots=True, eq=False)
class Block:
    id: int
    kind: str
    chunks: list[str] = field(default_factory=list)
    view: StreamView | None = None
    """The incremental view of a streamed block (None for blocks rendered whole)."""
    meta: Meta | None = None
    guard: StreamRedactor | None = None
    """Redacts a streamed block as one text (holds back what may still become a secret)."""
    packed: bytes | None = None
    """The whole text, zlib-compressed, once the block is finished and long (``chunks`` is then empty)."""
    packed_chars: int = 0
    message_id: str | None = None
    """The agent's ``messageId`` of the message this block shows (None: the agent sent none)."""
    packed_lines: int = 0
    unredacted: bool = False
    """Restored from a record (redacted when it was saved): this session's redactor has not seen
    it yet; it does before the text is drawn or read (``Transcript._clean``)."""

    def text(self) -> str:
        if self.packed is not None:
            return packing.unpack(self.packed)
        return "".join(self.chunks)

    def size(self) -> int:
        """The length of the text in characters."""
        return self.packed_chars if self.packed is not None else sum(len(c) for c in self.chunks)

    def set_text(self, text: str) -> None:
        self.chunks = [text]
        self.packed = None

    def settle(self) -> None:
        """The block is finished: one string, compressed when long (``packing``; a long one on
        a worker thread, held as its chunks until then)."""
        if self.packed is not None:
            return
        parts, count = self.chunks, len(self.chunks)
        if packing.pack_later(parts, lambda packed: self._packed(packed, parts, count)):
            return
        text = "".join(parts)
        self.chunks = [text]
        if len(text) >= PACK_MIN_CHARS:
            self._packed(packing.pack(text), self.chunks, 1)

    def _packed(self, packed: packing.Packed, parts: list[str], count: int) -> None:
        if self.packed is not None or self.chunks is not parts or len(parts) != count:
            return  # changed while it was being compressed
        self.packed = packed.data
        self.packed_chars = packed.chars
        self.packed_lines = packed.lines
        self.chunks = []


class Transcript:
    """Keeps the blocks of one session and emits render operations as they change."""

    def __init__(self, sink: OpSink | None = None, agent_label: str = "Agent",
                 limits: ViewLimits | None = None, redactor: Redactor | None = None) -> None:
        self.agent_label = agent_label
        self._redactor = redactor
        """Every text shown passes it: blocks whole, streamed blocks through a StreamRedactor."""
        self.limits = limits or ViewLimits()
        self.blocks: list[Block] = []
        self.tool_calls: dict[str, tool_calls.ToolCallState] = {}
        self.paths = WHOLE
        """How tool call blocks show paths (the session sets its workspace roots and home)."""
        self._by_id: dict[int, Block] = {}
        self._tool_blocks: dict[str, int] = {}
        self._tool_of_block: dict[int, str] = {}
        self._plans: dict[str, int] = {}
        self._tree_sizes: dict[str, int] = {}
        """Calls drawn under each call that has a block and runs a subagent."""
        self._running: set[str] = set()
        """Calls that run a subagent and have not finished (the statusline counts them)."""
        self._unfolded: set[int] = set()
        """Blocks whose fold (subagent calls, compaction summary) the user opened."""
        self.compactions: dict[str, Compaction] = {}
        self._compaction_blocks: dict[str, int] = {}
        self._compaction_of_block: dict[int, str] = {}
        self._last: Block | None = None
        self._sink = sink or (lambda op: None)
        self._quiet_after: int | None = None
        """While ``quiet``: blocks with a greater id are not drawn as they come."""
        self._older: tuple[int, int, int] | None = None
        """(first id, count, the block they go above) of a record's older entries still to come."""
        self._next_id = 0
        self._answering = False
        self.terminal_view: Callable[[str], list[str] | None] | None = None
        """Set by a session that runs terminals: the live lines of an embedded terminal."""
        self.undone: list[tuple[int, int]] = []
        """Block id ranges (first, last) of turns a rewind took back: shown, but no longer context."""
        self.media = MediaShelf(redact=self._redact)
        """The links, resources, images and audio the agent sent, by block (the session sets its cap)."""

    def replay_ops(self) -> list[Op]:
        """Operations that draw the transcript in a new chat buffer: its newest page of blocks, and
        a gap above them for the older ones."""
        drawable = self._drawable()
        start = self._page_start(drawable, 0, len(drawable))
        ops = [op for block in drawable[start:] for op in self._block_ops(block)]
        if start:
            ops.append(render_ops.gap(drawable[start].id, None, start))
        return ops

    def page(self, before: int, after: int | None) -> list[Op]:
        """The newest page of the blocks between block ``after`` (None: the first) and block
        ``before``, drawn above ``before``, and the gap left above them (count 0: none)."""
        drawable = self._drawable()
        end = self._position(drawable, before)
        low = 0 if after is None else self._position(drawable, after)
        if after is not None and low < len(drawable) and drawable[low].id == after:
            low += 1
        if end >= len(drawable) or drawable[end].id != before or low > end:
            return [render_ops.gap(before, after, 0)]
        start = self._page_start(drawable, low, end)
        ops: list[Op] = [render_ops.gap(before, after, 0)]
        for block in drawable[start:end]:
            for op in self._block_ops(block):
                if op["op"] == "new":
                    ops.append(render_ops.insert(op["id"], op["kind"], op["lines"], op["meta"], before))
                else:
                    ops.append(op)
        if start > low:
            ops.append(render_ops.gap(drawable[start].id, after, start - low))
        return ops

    def _block_ops(self, block: Block) -> list[Op]:
        """How the chat draws ``block`` as it is now: a ``new`` and, when it is cut, a ``clip``."""
        if block.view is None:
            return [render_ops.new(block.id, block.kind, clip_lines(self._clean(block).split("\n"), self.limits),
                                   block.meta)]
        lines, marker = project(block.text(), block.view.limits)
        ops: list[Op] = [render_ops.new(block.id, block.kind, lines, block.meta)]
        if marker:
            ops.append(render_ops.clip(block.id, marker))
        return ops

    def _drawable(self) -> list[Block]:
        """The blocks the chat may show now (while ``quiet``, not those added since it began)."""
        if self._quiet_after is None:
            return self.blocks
        return self.blocks[:self._position(self.blocks, self._quiet_after + 1)]

    @staticmethod
    def _position(blocks: list[Block], block_id: int) -> int:
        """Where block ``block_id`` is in ``blocks`` (ids grow along the list), or where it would go."""
        return bisect.bisect_left(blocks, block_id, key=lambda block: block.id)

    def _page_start(self, blocks: list[Block], low: int, end: int) -> int:
        """The first of the newest blocks before ``end`` (down to ``low``) that fit a page."""
        lines, start = 0, end
        while start > low:
            size = self._shown_lines(blocks[start - 1]) + BLOCK_LINES
            if lines and lines + size > PAGE_LINES:
                break
            lines += size
            start -= 1
        return start

    def _shown_lines(self, block: Block) -> int:
        if block.packed is not None:
            return min(self.limits.max_lines, block.packed_lines)
        return min(self.limits.max_lines, sum(chunk.count("\n") for chunk in block.chunks) + 1)

    @contextlib.contextmanager
    def quiet(self) -> Iterator[None]:
        """Blocks added meanwhile are not drawn as they come (a reopened session's history, an
        agent's replay); once it ends, the newest page of them is, and a gap above for the rest."""
        if self._quiet_after is not None:
            yield
            return
        first = len(self.blocks)
        after = self.blocks[-1].id if self.blocks else None
        self._quiet_after = after or 0
        try:
            yield
        finally:
            self._quiet_after = None
            self._reveal(first, after)

    def _reveal(self, first: int, after: int | None) -> None:
        start = self._page_start(self.blocks, first, len(self.blocks))
        for block in self.blocks[start:]:
            for op in self._block_ops(block):
                self._sink(op)
        if start > first:
            self._sink(render_ops.gap(self.blocks[start].id, after, start - first))

    def _clean(self, block: Block) -> str:
        """The block's text, through this session's redactor once (a restored block's first read)."""
        if not block.unredacted:
            return block.text()
        block.set_text(self._redact(block.text()))
        block.unredacted = False
        return block.chunks[0]

    def _emit(self, op: Op) -> None:
        if self._quiet_after is None or op["id"] <= self._quiet_after:
            self._sink(op)

    # -- lookups (the chat's keys) -------------------------------------------------

    def full_text(self, block_id: int) -> str | None:
        """A block's whole text, nothing clipped (a tool call's input, output and diffs too)."""
        state = self.tool_call_of(block_id)
        if state is not None:
            return self._redact(state.full_text())
        compaction = self.compaction_of(block_id)
        if compaction is not None:
            return self._redact(compaction.full_text())
        block = self._by_id.get(block_id)
        return self._clean(block) if block is not None else None

    def entry_text(self, block: Block) -> str:
        """What a record or an export keeps of a block: its text, a compaction's summary included."""
        compaction = self.compaction_of(block.id)
        return self._redact(compaction.full_text()) if compaction is not None else block.text()

    def compaction_of(self, block_id: int) -> Compaction | None:
        compaction_id = self._compaction_of_block.get(block_id)
        return self.compactions.get(compaction_id) if compaction_id is not None else None

    def tool_call_of(self, block_id: int) -> tool_calls.ToolCallState | None:
        call_id = self._tool_of_block.get(block_id)
        return self.tool_calls.get(call_id) if call_id is not None else None

    def locations(self) -> list[tuple[str, int | None, str]]:
        """Every tool call location, in order: (path, line or None, tool call title)."""
        return [(path, line, self._redact(state.title)) for state in self.tool_calls.values()
                for path, line in state.locations]

    # -- streamed text -------------------------------------------------------------

    def user_message(self, text: str, attached: list[str] | None = None, mark: str = "") -> None:
        """The user's prompt, echoed under a heading (``mark`` after it: " · steered ..."); the
        agent's answer gets its own heading."""
        suffix = f"\n— attached: {', '.join(attached)}" if attached else ""
        self._new_stream_block("user", f"## You{mark}\n{text}{suffix}")
        self._answering = False

    def user_chunk(self, text: str, message_id: str | None = None) -> None:
        """A user message replayed by the agent (session/load)."""
        if not self._stream("user", text, message_id):
            self._new_stream_block("user", f"## You\n{text}", message_id)
            self._answering = False

    def agent_chunk(self, text: str, message_id: str | None = None) -> None:
        if not self._stream("agent", text, message_id):
            self._answer_heading()
            self._new_stream_block("agent", text, message_id)

    def thought_chunk(self, text: str, message_id: str | None = None) -> None:
        quoted = text.replace("\n", "\n> ")
        if not self._stream("thought", quoted, message_id):
            self._answer_heading()
            self._new_stream_block("thought", "> " + quoted, message_id)

    def media_item(self, item: MediaItem) -> None:
        """A link, resource, image or audio of the agent's message: its own one-line block (``media``)."""
        self._answer_heading()
        block = self._new_block("media", item.line, {"media": item.kind})
        self.media.keep(block.id, item)

    def _answer_heading(self) -> None:
        if not self._answering:
            self._answering = True
            self._new_block("heading", f"## {self.agent_label}")

    def notice(self, text: str, kind: str = "notice") -> None:
        self._new_block(kind, text)

    def marker(self, text: str, meta: Meta) -> int:
        """A notice the chat draws by its ``meta`` (a rewind's ``fold`` of the turns it took back); its id."""
        return self._new_block("info", text, meta).id

    def restore(self, kind: str, text: str, message_id: str | None = None) -> None:
        """A block of an earlier conversation, drawn as it was (``:Ai resume``, local history); a
        compaction folded again."""
        if kind == "compaction":
            head, _, summary = text.partition("\n")
            compaction = Compaction(f"restored-{self._next_id + 1}", head, summary, restored=True)
            self._show_compaction(compaction)
        else:
            self._new_block(kind, text).message_id = message_id
        self._answering = False

    def restore_many(self, entries: list[Restored], older: int = 0) -> None:
        """Blocks of an earlier conversation, many at once (a long record): kept as they are and
        redacted only when drawn or read, so that reopening 10,000 turns costs what a page costs.
        ``older`` more entries come before these later (``restore_older``): their ids are kept."""
        self._finish_last()
        if older and entries:
            self._older = (self._next_id + 1, older, self._next_id + older + 1)
            self._next_id += older
        for entry in entries:
            self._take_id()
            block = self._restored_block(self._next_id, entry)
            self.blocks.append(block)
            self._by_id[block.id] = block
            if self._quiet_after is None:
                self._sink(render_ops.new(block.id, block.kind, clip_lines(self._clean(block).split("\n"), self.limits),
                                          block.meta))
        self._last = self.blocks[-1] if entries else self._last
        self._answering = False

    def restore_older(self, entries: list[Restored]) -> None:
        """The entries ``restore_many`` said would come (the newest of them if more came), drawn in
        their place above the ones restored then: the chat gets a gap there to draw them from."""
        if self._older is None:
            return
        first, count, before = self._older
        self._older = None
        entries = entries[-count:] if count else []
        skip = count - len(entries)
        blocks = [self._restored_block(first + skip + n, entry) for n, entry in enumerate(entries)]
        index = self._position(self.blocks, before)
        self.blocks[index:index] = blocks
        self._by_id.update((block.id, block) for block in blocks)
        if blocks:
            above = self.blocks[index - 1].id if index else None
            self._emit(render_ops.gap(before, above, len(blocks)))

    def _restored_block(self, block_id: int, entry: Restored) -> Block:
        """A block of a record, kept as it was saved (redacted when first drawn or read); a compaction
        folded again."""
        kind, text, message_id = entry
        meta: Meta | None = None
        if kind == "compaction":
            head, _, summary = text.partition("\n")
            compaction = Compaction(f"restored-{block_id}", head, summary, restored=True)
            self.compactions[compaction.compaction_id] = compaction
            self._compaction_blocks[compaction.compaction_id] = block_id
            self._compaction_of_block[block_id] = compaction.compaction_id
            text, meta = compaction.render(False), {"status": compaction.status}
        return Block(block_id, kind, [text], None, meta, unredacted=self._redactor is not None,
                     message_id=message_id)

    @property
    def older_pending(self) -> bool:
        """Blocks of a reopened record are still to come before the ones shown (``restore_older``)."""
        return self._older is not None

    def flag(self, text: str) -> int:
        """A warning the user may act on with a key on its line; returns its block id."""
        return self._new_block("error", text).id

    def _stream(self, kind: str, text: str, message_id: str | None = None) -> bool:
        """Extend the last block when it is of ``kind`` and of the same message (a chunk without an id
        continues the block); False when a new block is needed."""
        last = self._last
        if last is None or last.kind != kind or last.view is None:
            return False
        if message_id is not None and message_id != last.message_id:
            return False
        if last.guard is not None:
            text = last.guard.feed(text)
            if not text:
                return True
        self._append_shown(last, text)
        return True

    def _append_shown(self, last: Block, text: str) -> None:
        """Append redacted ``text`` to the streamed block ``last`` and to its view."""
        chunks = last.chunks
        chunks.append(text)
        if len(chunks) >= COMPACT_EVERY:
            chunks[:] = ["".join(chunks)]
        view = last.view
        assert view is not None
        shown = view.feed(text)
        if shown:
            self._emit(render_ops.append(last.id, shown))
        elif view.marker_due():
            self._emit(render_ops.clip(last.id, view.marker()))

    def _new_stream_block(self, kind: str, text: str, message_id: str | None = None) -> Block:
        guard = StreamRedactor(self._redactor) if self._redactor is not None else None
        if guard is not None:
            text = guard.feed(text)
        view = StreamView(self.limits)
        shown = view.feed(text)
        block = self._add(Block(self._take_id(), kind, [text], view, guard=guard, message_id=message_id))
        self._emit(render_ops.new(block.id, kind, shown.split("\n")))
        if view.marker_due():
            self._emit(render_ops.clip(block.id, view.marker()))
        return block

    def _new_block(self, kind: str, text: str, meta: Meta | None = None) -> Block:
        text = self._redact(text)
        block = self._add(Block(self._take_id(), kind, [text], None, meta))
        self._emit(render_ops.new(block.id, kind, clip_lines(_lines(block), self.limits), meta))
        return block

    def _take_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _add(self, block: Block) -> Block:
        self._finish_last()
        self.blocks.append(block)
        self._by_id[block.id] = block
        self._last = block
        return block

    def _finish_last(self) -> None:
        """A streamed block is done: show what its redactor held back; a clipped one's marker
        gets the final counts."""
        last = self._last
        if last is not None and last.guard is not None:
            tail = last.guard.flush()
            if tail:
                self._append_shown(last, tail)
        if last is not None and last.view is not None and last.view.clipped:
            self._emit(render_ops.clip(last.id, last.view.marker()))
        if last is not None:
            last.guard = None
            last.settle()

    def _set_block(self, block_id: int | None, kind: str, text: str,
                   meta: Meta | None = None) -> int:
        block = self._by_id.get(block_id) if block_id is not None else None
        if block is None:
            return self._new_block(kind, text, meta).id
        text = self._redact(text)
        block.set_text(text)
        block.meta = meta
        self._emit(render_ops.set_lines(block.id, clip_lines(_lines(block), self.limits), meta))
        return block.id

    # -- structured updates --------------------------------------------------------

    def tool_call(self, update: tool_calls.ToolCallPiece, name: str | None = None, parent: str | None = None,
                  subagent: bool = False) -> tool_calls.ToolCallState:
        """Merge a ``tool_call`` or ``tool_call_update`` and re-render its block in place: ``name`` is the
        tool's name, ``parent`` the call whose subagent made this one (drawn under it when known),
        ``subagent`` that this call runs a subagent."""
        call_id = update.tool_call_id
        state = self.tool_calls.get(call_id)
        if state is None:
            state = self.tool_calls[call_id] = tool_calls.ToolCallState(call_id, terminal_view=self.terminal_view,
                                                                        paths=self.paths)
            self._adopt(state, parent)
        state.merge(update)
        state.name = name or state.name
        state.subagent = state.subagent or subagent
        self._track(state)
        if state.parent is None and call_id not in self._tool_blocks:
            self._answer_heading()
        self._render_tool_call(state)
        return state

    def _adopt(self, state: tool_calls.ToolCallState, parent_id: str | None) -> None:
        """A new call of a subagent goes under the call that runs it (drawn alone: a parent never seen, or
        a tree of ``MAX_TREE`` calls already)."""
        parent = self.tool_calls.get(parent_id) if parent_id is not None else None
        if parent is None or parent_id == state.tool_call_id:
            return
        root = self.root_of(parent).tool_call_id
        if self._tree_sizes.get(root, 0) >= tool_calls.MAX_TREE:
            return
        self._tree_sizes[root] = self._tree_sizes.get(root, 0) + 1
        state.parent = parent_id
        is_child = parent.tool_call_id.startswith(tool_calls.CHILD_PREFIX)
        state.asker = parent.title if is_child else f"subagent “{parent.title}”"
        parent.children = (*parent.children, state.tool_call_id)
        parent.subagent = True
        self._track(parent)

    def adopt(self, call_id: str, parent_id: str) -> None:
        """A call not seen yet belongs to the subagent ``parent_id`` runs (a child's permission request
        that comes before the call's first update); it is drawn when it is merged."""
        if call_id in self.tool_calls:
            return
        state = self.tool_calls[call_id] = tool_calls.ToolCallState(call_id, terminal_view=self.terminal_view,
                                                                    paths=self.paths)
        self._adopt(state, parent_id)

    def child_call(self, call_id: str, title: str, status: str, parent: str | None, *, new: bool) -> None:
        """The call that stands for a child session (``tool_calls.CHILD_PREFIX``): drawn like a call that
        runs a subagent, its title and status the child's (the agent's word on its state is the last)."""
        state = self.tool_calls.get(call_id)
        if state is None:
            state = self.tool_calls[call_id] = tool_calls.ToolCallState(call_id, kind="think",
                                                                        paths=self.paths)
            self._adopt(state, parent)
        elif not new and state.title == title and state.status == status:
            return
        state.title, state.subagent = title, True
        state.set_status(status)
        self._track(state)
        if state.parent is None and call_id not in self._tool_blocks:
            self._answer_heading()
        self._render_tool_call(state)

    def root_of(self, state: tool_calls.ToolCallState) -> tool_calls.ToolCallState:
        """The call whose block draws ``state``: the nearest one up its parents with a block of its own
        (a call never loops back to itself, whatever the agent says)."""
        seen = {state.tool_call_id}
        while state.tool_call_id not in self._tool_blocks and state.parent is not None \
                and (up := self.tool_calls.get(state.parent)) is not None and up.tool_call_id not in seen:
            seen.add(up.tool_call_id)
            state = up
        return state

    def subagent_said(self, parent_id: str, text: str) -> bool:
        """Text of the subagent that call ``parent_id`` runs (False: no such call; show it as usual)."""
        parent = self.tool_calls.get(parent_id)
        if parent is None:
            return False
        parent.subagent = True
        self._track(parent)
        if text:
            parent.hear(text)
            self._render_tool_call(parent)
        return True

    def comment_tool_call(self, call_id: str, comments: list[tuple[str, str]]) -> None:
        """Draw the user's review comments under tool call ``call_id`` (path, rest of the line)."""
        state = self.tool_calls.get(call_id)
        if state is None or not comments:
            return
        state.comments = (*state.comments, *comments)
        self._render_tool_call(state)

    def running_subagents(self) -> int:
        """Calls that run a subagent and have not finished."""
        return len(self._running)

    def subagent_board_lines(self) -> tuple[str, ...]:
        """The board's lines for the subagents still running (the outermost of each tree)."""
        running = [self.tool_calls[call_id] for call_id in self._running if call_id in self.tool_calls]
        outermost = [state for state in running if state.parent not in self._running]
        outermost.sort(key=lambda state: state.started)
        return tool_calls.board_lines(outermost, self.tool_calls)

    def _track(self, state: tool_calls.ToolCallState) -> None:
        if state.subagent and state.status in tool_calls.OPEN_STATUSES:
            self._running.add(state.tool_call_id)
        else:
            self._running.discard(state.tool_call_id)

    def _render_tool_call(self, changed: tool_calls.ToolCallState) -> None:
        state = self.root_of(changed)
        call_id = state.tool_call_id
        meta: Meta = {"status": state.status, "kind": state.kind}
        block_id = self._tool_blocks.get(call_id)
        unfolded = block_id is not None and block_id in self._unfolded
        fold = tool_calls.subagent_lines(state, self.tool_calls, unfolded)
        text = state.render() + ("\n" + "\n".join(fold) if fold else "")
        block_id = self._set_block(block_id, "tool", text, meta)
        self._tool_blocks[call_id] = block_id
        self._tool_of_block[block_id] = call_id
        if not self._open_below(state):
            self._settle_if_done(state, block_id)
        if changed is not state and changed.status not in tool_calls.OPEN_STATUSES:
            changed.settle()

    def _open_below(self, state: tool_calls.ToolCallState) -> bool:
        return any(self.tool_calls[c].status in tool_calls.OPEN_STATUSES for c in state.children
                   if c in self.tool_calls)

    def toggle(self, block_id: int) -> bool:
        """Fold or unfold a block's ▸ line (a subagent's calls, a compaction's summary); False when the
        block has none."""
        state = self.tool_call_of(block_id)
        compaction = self.compaction_of(block_id)
        if (state is None or not (state.subagent or state.children)) and compaction is None:
            return False
        self._unfolded ^= {block_id}
        if state is not None:
            self._render_tool_call(state)
        elif compaction is not None:
            self._show_compaction(compaction)
        return True

    # -- the agent's notices and compactions (updates newer than the SDK) ----------

    def agent_notice(self, severity: str, title: str, description: str = "") -> None:
        """A notice of the agent (ACP ``notice``): a mark for its severity, its title, its description."""
        mark = NOTICE_MARKS.get(severity, NOTICE_MARKS["info"])
        detail = "".join(f"\n  {line}" for line in description.split("\n")) if description else ""
        self._new_block("agent_notice", f"{mark} {title}{detail}", {"severity": severity})

    def compaction(self, compaction_id: str, status: str, summary: str | None = None,
                   error: str | None = None) -> None:
        """A ``compaction_update``: a new compaction's folded line, or the change of a known one."""
        compaction = self.compactions.get(compaction_id) or Compaction(compaction_id, status)
        self.compactions[compaction_id] = compaction
        compaction.status = status
        compaction.summary = compaction.summary if summary is None else summary
        compaction.error = compaction.error if error is None else error
        self._show_compaction(compaction)

    def compaction_chunk(self, compaction_id: str, text: str) -> None:
        """A ``compaction_summary_chunk``: the summary grows (a first-seen id starts a compaction)."""
        compaction = self.compactions.get(compaction_id)
        if compaction is None:
            compaction = self.compactions[compaction_id] = Compaction(compaction_id, "in_progress")
        compaction.summary = (compaction.summary + text)[-MAX_SUMMARY:]
        self._show_compaction(compaction)

    def _show_compaction(self, compaction: Compaction) -> None:
        self.compactions[compaction.compaction_id] = compaction
        block_id = self._compaction_blocks.get(compaction.compaction_id)
        text = compaction.render(block_id is not None and block_id in self._unfolded)
        block_id = self._set_block(block_id, "compaction", text, {"status": compaction.status})
        self._compaction_blocks[compaction.compaction_id] = block_id
        self._compaction_of_block[block_id] = compaction.compaction_id

    def _settle_if_done(self, state: tool_calls.ToolCallState, block_id: int) -> None:
        """A finished call's details and drawn block are held compressed (10k tool calls in one
        session must not cost their full texts and diffs); a later update unpacks them."""
        if state.status in tool_calls.OPEN_STATUSES:
            return
        state.settle()
        block = self._by_id.get(block_id)
        if block is not None:
            block.settle()

    def refresh_terminal(self, terminal_id: str) -> None:
        """A terminal's output or status changed: re-render the tool calls that embed it."""
        for state in self.tool_calls.values():
            if terminal_id in state.terminal_ids():
                self._render_tool_call(state)

    def cancel_tool_call(self, call_id: str) -> None:
        """Mark a tool call that had not finished as cancelled (ACP: the client does, on cancel).

        A later ``completed`` or ``failed`` from the agent still shows; nothing else undoes it.
        """
        state = self.tool_calls.get(call_id)
        if state is None or state.status not in tool_calls.OPEN_STATUSES:
            return
        state.set_status(tool_calls.CANCELLED)
        self._track(state)
        self._render_tool_call(state)

    def as_context(self, limit: int) -> str:
        """The conversation as markdown for an agent that lost it (a restart into a new session):
        prompts, answers, tool calls and plans, without notices, thoughts and the turns a rewind
        took back; at most the last ``limit`` characters."""
        parts = [self._clean(block) for block in self.blocks
                 if block.kind in CONTEXT_KINDS and not self.is_undone(block.id)]
        text = "\n\n".join(parts)
        if len(text) > limit:
            text = "[… earlier conversation cut …]\n" + text[-limit:]
        return text

    def is_undone(self, block_id: int) -> bool:
        """Whether the block belongs to a turn a rewind took back."""
        return any(first <= block_id <= last for first, last in self.undone)

    def has_prompts(self) -> bool:
        """Whether the user sent anything in this transcript yet."""
        return any(block.kind == "user" for block in self.blocks)

    def plan(self, entries: list[PlanEntry], plan_id: str = "") -> None:
        """Show the plan as a checklist, updated in place for the rest of the turn."""
        lines = ["Plan:"] + [plan_line(e) for e in entries]
        self._show_plan(plan_id, "\n".join(lines))

    def plan_text(self, text: str, plan_id: str = "") -> None:
        """A plan the agent sent as markdown or as a file reference."""
        self._show_plan(plan_id, f"Plan:\n{text}")

    def plan_removed(self, plan_id: str) -> None:
        if plan_id in self._plans:
            self._show_plan(plan_id, "Plan: (removed by the agent)")

    def _show_plan(self, plan_id: str, text: str) -> None:
        if plan_id not in self._plans:
            self._answer_heading()
        self._plans[plan_id] = self._set_block(self._plans.get(plan_id), "plan", text)

    def _redact(self, text: str) -> str:
        return self._redactor(text) if self._redactor is not None else text

    def turn_end(self, stop_reason: str, usage: str | None = None) -> None:
        self._plans.clear()
        self._answering = False
        self._new_block("turn_end", turn_end_text(stop_reason, usage))


def turn_end_text(stop_reason: str, usage: str | None = None) -> str:
    """The line that closes a turn in the chat."""
    suffix = f" · {usage}" if usage else ""
    return f"── turn ended: {stop_reason}{suffix} ──"


def _lines(block: Block) -> list[str]:
    return block.text().split("\n")


MAX_SUMMARY = 256 * 1024
"""Characters kept of a compaction's summary."""
COMPACTION_WORDS = {"in_progress": "compacting the conversation…", "completed": "conversation compacted",
                    "failed": "compaction failed", "cancelled": "compaction cancelled"}


@dataclass(slots=True)
class Compaction:
    """One context compaction of the agent: its status, its summary, its error."""

    compaction_id: str
    status: str
    summary: str = ""
    error: str = ""
    restored: bool = False
    """Drawn from a record: ``status`` holds the line as it was."""

    def headline(self) -> str:
        if self.restored:
            return self.status
        words = COMPACTION_WORDS.get(self.status, f"compaction: {self.status}")
        error = f": {self.error}" if self.error else ""
        lines = self.summary.count("\n") + 1 if self.summary else 0
        summary = f" · summary: {lines} line{'s' if lines != 1 else ''}" if lines else ""
        return f"{words}{error}{summary}"

    def render(self, unfolded: bool) -> str:
        """The folded line (▸: <CR> shows the summary), or the line and the summary."""
        if not self.summary:
            return f"• {self.headline()}"
        if not unfolded:
            return f"{FOLDED} {self.headline()}"
        return f"{UNFOLDED} {self.headline()}\n" + "\n".join("  │ " + line for line in self.summary.split("\n"))

    def full_text(self) -> str:
        return self.headline() + (f"\n{self.summary}" if self.summary else "")
