"""Disk changes no review can be shown for: flagged in the chat, with a one-key revert where
the file's text before the turn is known (``keymaps.revert`` on the flag, see ``nvim/permissions/unreviewed.py``).

Every other change of a file nobody reviewed opens a review of its own (the write gate,
``core/permissions/write_gate.py``); this is what is left: a change whose "before" is unknown
(so no base can be shown, nor put back) and a file the agent deleted.
"""

from __future__ import annotations

from ..files.changes import FileChange
from ..transcript.conversation import Conversation


class UnreviewedEdits:
    """Per session: which chat lines flag a change no review could be shown for."""

    def __init__(self, transcript: Conversation, revert_key: str = "<LocalLeader>x") -> None:
        self._transcript = transcript
        self._revert_key = revert_key
        """``keymaps.revert``, named on the flag ('' when it is off)."""
        self.flags: dict[int, FileChange] = {}
        """Chat block id of each flag -> the change it is about (until reverted)."""

    def flag(self, change: FileChange, why: str) -> None:
        """The write gate could not show a review of ``change`` (``why``): say so in the chat."""
        how = f"{self._revert_key} on this line" if self._revert_key else f":Ai changes revert {change.path}"
        undo = f"{how} reverts it" if change.known else "it cannot be put back from here"
        block = self._transcript.flag(
            f"⚠ not reviewed: the agent changed {change.path} on disk and no review can be shown ({why}). "
            f"{undo}; :Ai changes lists every change of the turn.")
        self.flags[block] = change

    def reverted(self, block_id: int) -> FileChange | None:
        """The user reverted the flagged change: say so; None when the line flags nothing (any more)."""
        change = self.flags.pop(block_id, None)
        if change is not None:
            self._transcript.notice(f"reverted {change.path}: it is back as it was before the turn", "info")
        return change
