"""The tool calls of a conversation as a tree: each call merged from its pieces (``tool_calls.py``),
a subagent's calls under the call that runs it, each tree drawn as the block of its root.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from ..render_ops import Meta
from . import tool_calls
from .blocks import Block
from .paths import PathView
from .tool_calls import ToolCallState


class Blocks(Protocol):
    """What the tree needs of its conversation (``conversation.Conversation``)."""

    paths: PathView
    terminal_view: Callable[[str], list[str] | None] | None
    unfolded: set[int]
    by_id: dict[int, Block]

    def answer_heading(self) -> None: ...
    def set_block(self, block_id: int | None, kind: str, text: str, meta: Meta | None = None) -> int: ...
    def redact(self, text: str) -> str: ...


class ToolCallTree:
    """The tool calls of one conversation, and the blocks that draw them."""

    def __init__(self, conversation: Blocks) -> None:
        self._conversation = conversation
        self.calls: dict[str, ToolCallState] = {}
        self._blocks: dict[str, int] = {}
        self._of_block: dict[int, str] = {}
        self._tree_sizes: dict[str, int] = {}
        """Calls drawn under each call that has a block and runs a subagent."""
        self._running: set[str] = set()
        """Calls that run a subagent and have not finished (the statusline counts them)."""

    def tool_call(self, update: tool_calls.ToolCallPiece, name: str | None = None, parent: str | None = None,
                  subagent: bool = False) -> ToolCallState:
        """Merge a ``tool_call`` or ``tool_call_update`` and re-render its block in place: ``name`` is the
        tool's name, ``parent`` the call whose subagent made this one (drawn under it when known),
        ``subagent`` that this call runs a subagent."""
        call_id = update.tool_call_id
        state = self.calls.get(call_id)
        if state is None:
            state = self.calls[call_id] = self._new_state(call_id)
            self._adopt(state, parent)
        state.merge(update)
        state.name = name or state.name
        state.subagent = state.subagent or subagent
        self._track(state)
        if state.parent is None and call_id not in self._blocks:
            self._conversation.answer_heading()
        self.draw(state)
        return state

    def _new_state(self, call_id: str) -> ToolCallState:
        conversation = self._conversation
        return ToolCallState(call_id, terminal_view=conversation.terminal_view, paths=conversation.paths)

    def _adopt(self, state: ToolCallState, parent_id: str | None) -> None:
        """A new call of a subagent goes under the call that runs it (drawn alone: a parent never seen, or
        a tree of ``MAX_TREE`` calls already)."""
        parent = self.calls.get(parent_id) if parent_id is not None else None
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
        if call_id in self.calls:
            return
        state = self.calls[call_id] = self._new_state(call_id)
        self._adopt(state, parent_id)

    def child_call(self, call_id: str, title: str, status: str, parent: str | None, *, new: bool) -> None:
        """The call that stands for a child session (``tool_calls.CHILD_PREFIX``): drawn like a call that
        runs a subagent, its title and status the child's (the agent's word on its state is the last)."""
        state = self.calls.get(call_id)
        if state is None:
            state = self.calls[call_id] = ToolCallState(call_id, kind="think", paths=self._conversation.paths)
            self._adopt(state, parent)
        elif not new and state.title == title and state.status == status:
            return
        state.title, state.subagent = title, True
        state.set_status(status)
        self._track(state)
        if state.parent is None and call_id not in self._blocks:
            self._conversation.answer_heading()
        self.draw(state)

    def root_of(self, state: ToolCallState) -> ToolCallState:
        """The call whose block draws ``state``: the nearest one up its parents with a block of its own
        (a call never loops back to itself, whatever the agent says)."""
        seen = {state.tool_call_id}
        while state.tool_call_id not in self._blocks and state.parent is not None \
                and (up := self.calls.get(state.parent)) is not None and up.tool_call_id not in seen:
            seen.add(up.tool_call_id)
            state = up
        return state

    def tool_call_of(self, block_id: int) -> ToolCallState | None:
        call_id = self._of_block.get(block_id)
        return self.calls.get(call_id) if call_id is not None else None

    def locations(self) -> list[tuple[str, int | None, str]]:
        """Every tool call location, in order: (path, line or None, tool call title)."""
        redact = self._conversation.redact
        return [(path, line, redact(state.title)) for state in self.calls.values() for path, line in state.locations]

    def subagent_said(self, parent_id: str, text: str) -> bool:
        """Text of the subagent that call ``parent_id`` runs (False: no such call; show it as usual)."""
        parent = self.calls.get(parent_id)
        if parent is None:
            return False
        parent.subagent = True
        self._track(parent)
        if text:
            parent.hear(text)
            self.draw(parent)
        return True

    def comment_tool_call(self, call_id: str, comments: list[tuple[str, str]]) -> None:
        """Draw the user's review comments under tool call ``call_id`` (path, rest of the line)."""
        state = self.calls.get(call_id)
        if state is None or not comments:
            return
        state.comments = (*state.comments, *comments)
        self.draw(state)

    def running_subagents(self) -> int:
        """Calls that run a subagent and have not finished."""
        return len(self._running)

    def subagent_board_lines(self) -> tuple[str, ...]:
        """The board's lines for the subagents still running (the outermost of each tree)."""
        running = [self.calls[call_id] for call_id in self._running if call_id in self.calls]
        outermost = [state for state in running if state.parent not in self._running]
        outermost.sort(key=lambda state: state.started)
        return tool_calls.board_lines(outermost, self.calls)

    def _track(self, state: ToolCallState) -> None:
        if state.subagent and state.status in tool_calls.OPEN_STATUSES:
            self._running.add(state.tool_call_id)
        else:
            self._running.discard(state.tool_call_id)

    def draw(self, changed: ToolCallState) -> None:
        """Draw the block of the tree ``changed`` is in."""
        state = self.root_of(changed)
        call_id = state.tool_call_id
        meta: Meta = {"status": state.status, "kind": state.kind}
        block_id = self._blocks.get(call_id)
        unfolded = block_id is not None and block_id in self._conversation.unfolded
        fold = tool_calls.subagent_lines(state, self.calls, unfolded)
        text = state.render() + ("\n" + "\n".join(fold) if fold else "")
        block_id = self._conversation.set_block(block_id, "tool", text, meta)
        self._blocks[call_id] = block_id
        self._of_block[block_id] = call_id
        if not self._open_below(state):
            self._settle_if_done(state, block_id)
        if changed is not state and changed.status not in tool_calls.OPEN_STATUSES:
            changed.settle()

    def _open_below(self, state: ToolCallState) -> bool:
        return any(self.calls[c].status in tool_calls.OPEN_STATUSES for c in state.children if c in self.calls)

    def _settle_if_done(self, state: ToolCallState, block_id: int) -> None:
        """A finished call's details and drawn block are held compressed (10k tool calls in one
        session must not cost their full texts and diffs); a later update unpacks them."""
        if state.status in tool_calls.OPEN_STATUSES:
            return
        state.settle()
        block = self._conversation.by_id.get(block_id)
        if block is not None:
            block.settle()

    def refresh_terminal(self, terminal_id: str) -> None:
        """A terminal's output or status changed: re-render the tool calls that embed it."""
        for state in self.calls.values():
            if terminal_id in state.terminal_ids():
                self.draw(state)

    def cancel_tool_call(self, call_id: str) -> None:
        """Mark a tool call that had not finished as cancelled (ACP: the client does, on cancel).

        A later ``completed`` or ``failed`` from the agent still shows; nothing else undoes it.
        """
        state = self.calls.get(call_id)
        if state is None or state.status not in tool_calls.OPEN_STATUSES:
            return
        state.set_status(tool_calls.CANCELLED)
        self._track(state)
        self.draw(state)
