"""The chat's view of a conversation: its events in, render operations out (``core/render_ops.py``:
``new``, ``append``, ``set``, ``clip``, ``gap``, ``insert``).

It alone decides how much of a block the chat shows (``limits``: lines per block, characters per
line; see block_view.py) and which blocks it draws. A long conversation is drawn from its newest
blocks (the frame budget: no draw of 10,000 turns at once). A chat opened on it (``replay_ops``)
and the blocks added during ``quiet`` (a reopened session's history, an agent's replay) draw one
page of the newest blocks and a ``gap`` above them; ``page`` draws the blocks of a gap next to the
ones drawn, newest first, a page at a time, as the user scrolls up to it.
"""

from __future__ import annotations

import bisect
import contextlib
from collections.abc import Callable, Iterator

from .. import render_ops
from ..render_ops import RenderOp
from .block_view import StreamView, ViewLimits, clip_lines, project
from .blocks import Block
from .conversation import Conversation

Op = RenderOp
OpSink = Callable[[Op], None]

PAGE_LINES = 400
"""Lines of the blocks drawn at once from a long conversation (at least one block), each block
counted as ``BLOCK_LINES`` more (its marks and highlights cost the chat what lines do): a chat
window's worth several times over, and a few ms of Neovim's time."""
BLOCK_LINES = 4


class ChatProjection:
    """Turns one conversation's events into the render operations of its chat."""

    def __init__(self, conversation: Conversation, sink: OpSink | None = None,
                 limits: ViewLimits | None = None) -> None:
        self.limits = limits or ViewLimits()
        """How much of each block the chat shows (the Neovim layer sets the user's)."""
        self._conversation = conversation
        self._sink = sink or (lambda op: None)
        self._views: dict[int, StreamView] = {}
        """The incremental view of each streamed block (the limits it began with stay its own)."""
        self._quiet_after: int | None = None
        """While ``quiet``: blocks with a greater id are not drawn as they come."""
        conversation.events = self

    # -- the conversation's events -------------------------------------------------

    def stream_started(self, block: Block, text: str) -> None:
        view = self._views[block.id] = StreamView(self.limits)
        shown = view.feed(text)
        self._emit(render_ops.new(block.id, block.kind, shown.split("\n")))
        if view.marker_due():
            self._emit(render_ops.clip(block.id, view.marker()))

    def appended(self, block: Block, text: str) -> None:
        view = self._views[block.id]
        shown = view.feed(text)
        if shown:
            self._emit(render_ops.append(block.id, shown))
        elif view.marker_due():
            self._emit(render_ops.clip(block.id, view.marker()))

    def stream_ended(self, block: Block) -> None:
        """A clipped streamed block's marker gets the final counts."""
        view = self._views[block.id]
        if view.clipped:
            self._emit(render_ops.clip(block.id, view.marker()))

    def added(self, block: Block) -> None:
        if self._quiet_after is None or block.id <= self._quiet_after:
            self._sink(render_ops.new(block.id, block.kind, self._clipped(self._conversation.clean(block)),
                                      block.meta))

    def changed(self, block: Block) -> None:
        self._emit(render_ops.set_lines(block.id, self._clipped(block.text()), block.meta))

    def older_restored(self, before: int, above: int | None, count: int) -> None:
        """``count`` blocks of a record went in above block ``before``: the chat draws them from a gap."""
        self._emit(render_ops.gap(before, above, count))

    # -- opening a chat, and paging --------------------------------------------------

    def replay_ops(self) -> list[Op]:
        """Operations that draw the conversation in a new chat buffer: its newest page of blocks, and
        a gap above them for the older ones."""
        drawable = self._drawable()
        start = self._page_start(drawable, 0, len(drawable))
        ops = [op for block in drawable[start:] for op in self.block_ops(block)]
        if start:
            ops.append(render_ops.gap(drawable[start].id, None, start))
        return ops

    def page(self, before: int, after: int | None) -> list[Op]:
        """The newest page of the blocks between block ``after`` (None: the first) and block
        ``before``, drawn above ``before``, and the gap left above them (count 0: none)."""
        drawable = self._drawable()
        end = _position(drawable, before)
        low = 0 if after is None else _position(drawable, after)
        if after is not None and low < len(drawable) and drawable[low].id == after:
            low += 1
        if end >= len(drawable) or drawable[end].id != before or low > end:
            return [render_ops.gap(before, after, 0)]
        start = self._page_start(drawable, low, end)
        ops: list[Op] = [render_ops.gap(before, after, 0)]
        for block in drawable[start:end]:
            for op in self.block_ops(block):
                if op["op"] == "new":
                    ops.append(render_ops.insert(op["id"], op["kind"], op["lines"], op["meta"], before))
                else:
                    ops.append(op)
        if start > low:
            ops.append(render_ops.gap(drawable[start].id, after, start - low))
        return ops

    @contextlib.contextmanager
    def quiet(self) -> Iterator[None]:
        """Blocks added meanwhile are not drawn as they come (a reopened session's history, an
        agent's replay); once it ends, the newest page of them is, and a gap above for the rest."""
        if self._quiet_after is not None:
            yield
            return
        blocks = self._conversation.blocks
        first = len(blocks)
        after = blocks[-1].id if blocks else None
        self._quiet_after = after or 0
        try:
            yield
        finally:
            self._quiet_after = None
            self._reveal(first, after)

    def block_ops(self, block: Block) -> list[Op]:
        """How the chat draws ``block`` as it is now: a ``new`` and, when it is cut, a ``clip``."""
        view = self._views.get(block.id)
        if view is None:
            return [render_ops.new(block.id, block.kind, self._clipped(self._conversation.clean(block)), block.meta)]
        lines, marker = project(block.text(), view.limits)
        ops: list[Op] = [render_ops.new(block.id, block.kind, lines, block.meta)]
        if marker:
            ops.append(render_ops.clip(block.id, marker))
        return ops

    def _reveal(self, first: int, after: int | None) -> None:
        blocks = self._conversation.blocks
        start = self._page_start(blocks, first, len(blocks))
        for block in blocks[start:]:
            for op in self.block_ops(block):
                self._sink(op)
        if start > first:
            self._sink(render_ops.gap(blocks[start].id, after, start - first))

    def _clipped(self, text: str) -> list[str]:
        return clip_lines(text.split("\n"), self.limits)

    def _drawable(self) -> list[Block]:
        """The blocks the chat may show now (while ``quiet``, not those added since it began)."""
        blocks = self._conversation.blocks
        if self._quiet_after is None:
            return blocks
        return blocks[:_position(blocks, self._quiet_after + 1)]

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

    def _emit(self, op: Op) -> None:
        if self._quiet_after is None or op["id"] <= self._quiet_after:
            self._sink(op)


def _position(blocks: list[Block], block_id: int) -> int:
    """Where block ``block_id`` is in ``blocks`` (ids grow along the list), or where it would go."""
    return bisect.bisect_left(blocks, block_id, key=lambda block: block.id)
