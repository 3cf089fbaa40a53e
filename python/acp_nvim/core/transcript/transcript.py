"""The transcript model: session updates in, render operations out.

A transcript is a list of blocks (user message, agent message, thought, tool call,
plan, notice). It keeps every block's full text (a finished long block compressed, so a
long session's text costs a fraction of its size); the chat shows a bounded view of each
(see block_view.py). Each change is a render operation the editor applies (``core/render_ops.py``:
``new``, ``append``, ``set``, ``clip``).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

from acp.schema import PlanEntry

from .. import render_ops
from ..log.redact import Redactor, StreamRedactor
from ..render_ops import Meta, RenderOp
from . import tool_calls
from .block_view import StreamView, ViewLimits, clip_lines, project
from .paths import WHOLE

Op = RenderOp
OpSink = Callable[[Op], None]

PLAN_MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}
CONTEXT_KINDS = frozenset(("user", "heading", "agent", "tool", "plan"))
"""Blocks that make up the conversation itself (``as_context``)."""
COMPACT_EVERY = 4096
"""Join a streamed block's chunks after this many, so 100k tiny chunks stay cheap to hold."""
PACK_MIN_CHARS = 128
"""A finished block this long or longer is held compressed (``Block.settle``)."""


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
    """The ACP ``messageId`` of the message the block shows (None: the agent sent none)."""

    def text(self) -> str:
        if self.packed is not None:
            return zlib.decompress(self.packed).decode("utf-8", "surrogatepass")
        return "".join(self.chunks)

    def size(self) -> int:
        """The length of the text in characters."""
        return self.packed_chars if self.packed is not None else sum(len(c) for c in self.chunks)

    def set_text(self, text: str) -> None:
        self.chunks = [text]
        self.packed = None

    def settle(self) -> None:
        """The block is finished: one string, compressed when long (10k chunks of a few bytes
        each cost ~70 bytes of object apiece; compressed prose costs a third of its length)."""
        if self.packed is not None:
            return
        text = "".join(self.chunks)
        if len(text) < PACK_MIN_CHARS:
            self.chunks = [text]
            return
        self.packed = zlib.compress(text.encode("utf-8", "surrogatepass"), 1)
        self.packed_chars = len(text)
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
        self._last: Block | None = None
        self._sink = sink or (lambda op: None)
        self._next_id = 0
        self._answering = False
        self.terminal_view: Callable[[str], list[str] | None] | None = None
        """Set by a session that runs terminals: the live lines of an embedded terminal."""
        self.undone: list[tuple[int, int]] = []
        """Block id ranges (first, last) of turns a rewind took back: shown, but no longer context."""

    def replay_ops(self) -> list[Op]:
        """Operations that rebuild the whole transcript (a reopened chat buffer)."""
        ops: list[Op] = []
        for block in self.blocks:
            if block.view is None:
                ops.append(render_ops.new(block.id, block.kind, clip_lines(_lines(block), self.limits), block.meta))
                continue
            lines, marker = project(block.text(), block.view.limits)
            ops.append(render_ops.new(block.id, block.kind, lines, block.meta))
            if marker:
                ops.append(render_ops.clip(block.id, marker))
        return ops

    # -- lookups (the chat's keys) -------------------------------------------------

    def full_text(self, block_id: int) -> str | None:
        """A block's whole text, nothing clipped (a tool call's input, output and diffs too)."""
        state = self.tool_call_of(block_id)
        if state is not None:
            return self._redact(state.full_text())
        block = self._by_id.get(block_id)
        return block.text() if block is not None else None

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

    def user_chunk(self, text: str) -> None:
        """A user message replayed by the agent (session/load)."""
        if not self._stream("user", text):
            self._new_stream_block("user", f"## You\n{text}")
            self._answering = False

    def agent_chunk(self, text: str) -> None:
        if not self._stream("agent", text):
            self._answer_heading()
            self._new_stream_block("agent", text)

    def thought_chunk(self, text: str) -> None:
        quoted = text.replace("\n", "\n> ")
        if not self._stream("thought", quoted):
            self._answer_heading()
            self._new_stream_block("thought", "> " + quoted)

    def note_message(self, message_id: str | None) -> None:
        """The ``messageId`` of the update just shown: the streamed block it went to keeps the first one."""
        last = self._last
        if message_id and last is not None and last.view is not None and last.message_id is None:
            last.message_id = message_id

    def _answer_heading(self) -> None:
        if not self._answering:
            self._answering = True
            self._new_block("heading", f"## {self.agent_label}")

    def notice(self, text: str, kind: str = "notice") -> None:
        self._new_block(kind, text)

    def marker(self, text: str, meta: Meta) -> int:
        """A notice the chat draws by its ``meta`` (a rewind's ``fold`` of the turns it took back); its id."""
        return self._new_block("info", text, meta).id

    def restore(self, kind: str, text: str) -> None:
        """A block of an earlier conversation, drawn as it was (``:Ai resume``, local history)."""
        self._new_block(kind, text)
        self._answering = False

    def flag(self, text: str) -> int:
        """A warning the user may act on with a key on its line; returns its block id."""
        return self._new_block("error", text).id

    def _stream(self, kind: str, text: str) -> bool:
        """Extend the last block when it is of ``kind``; False when a new block is needed."""
        last = self._last
        if last is None or last.kind != kind or last.view is None:
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
            self._sink(render_ops.append(last.id, shown))
        elif view.marker_due():
            self._sink(render_ops.clip(last.id, view.marker()))

    def _new_stream_block(self, kind: str, text: str) -> Block:
        guard = StreamRedactor(self._redactor) if self._redactor is not None else None
        if guard is not None:
            text = guard.feed(text)
        view = StreamView(self.limits)
        shown = view.feed(text)
        block = self._add(Block(self._take_id(), kind, [text], view, guard=guard))
        self._sink(render_ops.new(block.id, kind, shown.split("\n")))
        if view.marker_due():
            self._sink(render_ops.clip(block.id, view.marker()))
        return block

    def _new_block(self, kind: str, text: str, meta: Meta | None = None) -> Block:
        text = self._redact(text)
        block = self._add(Block(self._take_id(), kind, [text], None, meta))
        self._sink(render_ops.new(block.id, kind, clip_lines(_lines(block), self.limits), meta))
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
            self._sink(render_ops.clip(last.id, last.view.marker()))
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
        self._sink(render_ops.set_lines(block.id, clip_lines(_lines(block), self.limits), meta))
        return block.id

    # -- structured updates --------------------------------------------------------

    def tool_call(self, update: tool_calls.ToolCallPiece) -> tool_calls.ToolCallState:
        """Merge a ``tool_call`` or ``tool_call_update`` and re-render its block in place."""
        call_id = update.tool_call_id
        state = self.tool_calls.get(call_id)
        if state is None:
            state = self.tool_calls[call_id] = tool_calls.ToolCallState(call_id, terminal_view=self.terminal_view,
                                                                        paths=self.paths)
        state.merge(update)
        if call_id not in self._tool_blocks:
            self._answer_heading()
        self._render_tool_call(state)
        return state

    def _render_tool_call(self, state: tool_calls.ToolCallState) -> None:
        call_id = state.tool_call_id
        meta: Meta = {"status": state.status, "kind": state.kind}
        block_id = self._set_block(self._tool_blocks.get(call_id), "tool", state.render(), meta)
        self._tool_blocks[call_id] = block_id
        self._tool_of_block[block_id] = call_id
        self._settle_if_done(state, block_id)

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
        state.status = tool_calls.CANCELLED
        meta: Meta = {"status": state.status, "kind": state.kind}
        self._settle_if_done(state, self._set_block(self._tool_blocks.get(call_id), "tool", state.render(), meta))

    def as_context(self, limit: int) -> str:
        """The conversation as markdown for an agent that lost it (a restart into a new session):
        prompts, answers, tool calls and plans, without notices, thoughts and the turns a rewind
        took back; at most the last ``limit`` characters."""
        parts = [block.text() for block in self.blocks
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
        lines = ["Plan:"] + [f"- {PLAN_MARKS.get(e.status, '[ ]')} {e.content}" for e in entries]
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
        suffix = f" · {usage}" if usage else ""
        self._new_block("turn_end", f"── turn ended: {stop_reason}{suffix} ──")


def _lines(block: Block) -> list[str]:
    return block.text().split("\n")
