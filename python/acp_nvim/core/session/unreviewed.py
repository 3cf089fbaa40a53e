"""Edits nobody reviewed: under policy ``ask``, a file the agent changed without a permission
request is flagged in the chat, with a one-key revert (``X`` on the flag, see ``nvim/unreviewed.py``).

The turn's changeset (``core/files/changes.py``) tells of every file the agent changed, through
the editor or on disk; a change is reviewed when a permission request of the same turn named
the file (or named no file at all: a command the user allowed may change any).
"""

from __future__ import annotations

from collections.abc import Callable

from ..files.changes import ChangeLog, FileChange
from ..files.reconcile import touched_paths
from ..transcript.transcript import Transcript


class UnreviewedEdits:
    """Per session: which tool calls were asked about, which chat lines flag an unreviewed edit."""

    def __init__(self, transcript: Transcript, changes: ChangeLog, policy: Callable[[], str]) -> None:
        self._transcript = transcript
        self._changes = changes
        self._policy = policy
        self._asked: dict[str, int] = {}
        """Tool call id -> the turn in which a permission request named it."""
        self.flags: dict[int, FileChange] = {}
        """Chat block id of each flag -> the change it is about (until reverted)."""
        changes.listeners.append(self._changed)

    def asked(self, tool_call_id: str) -> None:
        """A permission request for ``tool_call_id`` reached the session (whatever the answer)."""
        turn = self._changes.current.turn
        self._asked = {call: seen for call, seen in self._asked.items() if seen == turn}
        self._asked[tool_call_id] = turn

    def _changed(self, turn: int, change: FileChange) -> None:
        if self._policy() != "ask" or self._reviewed(turn, change.path):
            return
        how = "on disk" if change.via == "disk" else "through Neovim"
        undo = "X on this line reverts it" if change.known else "its content before the turn is unknown"
        block = self._transcript.flag(
            f"⚠ not reviewed: the agent changed {change.path} {how} without asking for permission "
            f"(policy ask). {undo}; :Ai changes lists every change of the turn.")
        self.flags[block] = change

    def _reviewed(self, turn: int, path: str) -> bool:
        for call_id, seen in self._asked.items():
            state = self._transcript.tool_calls.get(call_id) if seen == turn else None
            if state is None:
                continue
            paths = touched_paths(state)
            if not paths or path in paths:
                return True
        return False

    def reverted(self, block_id: int) -> FileChange | None:
        """The user reverted the flagged change: say so; None when the line flags nothing (any more)."""
        change = self.flags.pop(block_id, None)
        if change is not None:
            self._transcript.notice(f"reverted {change.path}: it is back as it was before the turn", "info")
        return change
