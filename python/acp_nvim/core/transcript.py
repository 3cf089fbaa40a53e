"""The transcript model: session updates in, render operations out.

A transcript is a list of blocks (user message, agent message, thought, tool call,
plan, notice). Each change is described by a render operation the editor applies:

* ``["new", id, kind, lines]``  append a block at the end of the transcript
* ``["append", id, text]``      extend the last line of a block (``text`` may hold newlines)
* ``["set", id, lines]``        replace a block's lines (tool call status, plan progress)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import tool_calls

Op = list[Any]
OpSink = Callable[[Op], None]

PLAN_MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}


@dataclass(slots=True)
class Block:
    id: int
    kind: str
    chunks: list[str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(self.chunks)


class Transcript:
    """Keeps the blocks of one session and emits render operations as they change."""

    def __init__(self, sink: OpSink | None = None, agent_label: str = "Agent") -> None:
        self.agent_label = agent_label
        self.blocks: list[Block] = []
        self.tool_calls: dict[str, tool_calls.ToolCallState] = {}
        self._tool_blocks: dict[str, int] = {}
        self._plan_block: int | None = None
        self._sink = sink or (lambda op: None)
        self._next_id = 0
        self._answering = False

    def set_sink(self, sink: OpSink) -> None:
        self._sink = sink

    def replay_ops(self) -> list[Op]:
        """Operations that rebuild the whole transcript (a reopened chat buffer)."""
        return [["new", b.id, b.kind, _lines(b)] for b in self.blocks]

    # -- streamed text -------------------------------------------------------------

    def user_message(self, text: str) -> None:
        """The user's prompt, echoed under a heading; the agent's answer gets its own heading."""
        self._new_block("user", f"## You\n{text}")
        self._answering = False

    def user_chunk(self, text: str) -> None:
        self._stream("user", text)

    def agent_chunk(self, text: str) -> None:
        self._answer_heading()
        self._stream("agent", text)

    def thought_chunk(self, text: str) -> None:
        self._answer_heading()
        self._stream("thought", text.replace("\n", "\n> "), first_prefix="> ")

    def _answer_heading(self) -> None:
        if not self._answering:
            self._answering = True
            self._new_block("heading", f"## {self.agent_label}")

    def notice(self, text: str, kind: str = "notice") -> None:
        self._new_block(kind, text)

    def _stream(self, kind: str, text: str, first_prefix: str = "") -> None:
        last = self.blocks[-1] if self.blocks else None
        if last is None or last.kind != kind:
            self._new_block(kind, first_prefix + text)
            return
        last.chunks.append(text)
        self._sink(["append", last.id, text])

    def _new_block(self, kind: str, text: str) -> Block:
        self._next_id += 1
        block = Block(self._next_id, kind, [text])
        self.blocks.append(block)
        self._sink(["new", block.id, kind, _lines(block)])
        return block

    def _set_block(self, block_id: int | None, kind: str, text: str) -> int:
        block = self._find(block_id)
        if block is None:
            return self._new_block(kind, text).id
        block.chunks = [text]
        self._sink(["set", block.id, _lines(block)])
        return block.id

    def _find(self, block_id: int | None) -> Block | None:
        if block_id is None:
            return None
        for block in reversed(self.blocks):
            if block.id == block_id:
                return block
        return None

    # -- structured updates --------------------------------------------------------

    def tool_call(self, update: Any) -> tool_calls.ToolCallState:
        """Merge a ``tool_call`` or ``tool_call_update`` and re-render its block."""
        self._answer_heading()
        call_id = update.tool_call_id
        state = self.tool_calls.get(call_id)
        if state is None:
            state = self.tool_calls[call_id] = tool_calls.ToolCallState(call_id)
        state.merge(update)
        block_id = self._set_block(self._tool_blocks.get(call_id), "tool", state.render())
        self._tool_blocks[call_id] = block_id
        return state

    def plan(self, entries: list[Any]) -> None:
        """Show the plan as a checklist, updated in place for the rest of the turn."""
        self._answer_heading()
        lines = ["Plan:"] + [f"- {PLAN_MARKS.get(_value(e.status), '[ ]')} {e.content}" for e in entries]
        self._plan_block = self._set_block(self._plan_block, "plan", "\n".join(lines))

    def turn_end(self, stop_reason: str, usage: str | None = None) -> None:
        self._plan_block = None
        self._answering = False
        suffix = f" · {usage}" if usage else ""
        self._new_block("turn_end", f"── turn ended: {stop_reason}{suffix} ──")


def _lines(block: Block) -> list[str]:
    return block.text().split("\n")


def _value(enum_or_str: Any) -> str:
    return getattr(enum_or_str, "value", enum_or_str)
