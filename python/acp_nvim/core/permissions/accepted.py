"""What the user accepted in a review, until the agent's write lands.

Agents that write through ``fs/write_text_file`` get their content swapped for the user's
version (``filter`` consumes the entry; a file the user rejected is refused). Agents that
write the disk themselves are corrected once their tool call completes (``settle`` returns
the files whose final text still has to be put in place).
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from os import PathLike

from acp import RequestError

REFUSED = -32602

NOTE_DIFF_LINES = 40


@dataclass(slots=True)
class AcceptedEdit:
    """One reviewed file: ``text`` is what must land (None: leave the file as the user has it).

    ``base`` is the file as the review showed it (None: it did not exist).
    """

    tool_call_id: str
    path: str
    agent_text: str
    text: str | None
    base: str | None

    @property
    def target(self) -> str | None:
        """The text the file must end up with (None: nothing to put back)."""
        return self.text if self.text is not None else self.base


class AcceptedEdits:
    """Accepted files per tool call, consumed by the agent's write or settled on completion; and
    the last decision on each file, which holds for the rest of the turn: a rejected file stays
    refused, and a retry of an accepted proposal gets the accepted text again, until a new
    review of that file."""

    def __init__(self) -> None:
        self._edits: list[AcceptedEdit] = []
        self._decisions: dict[str, AcceptedEdit] = {}

    def add(self, edit: AcceptedEdit) -> None:
        self._edits.append(edit)
        self._decisions[os.path.realpath(edit.path)] = edit

    def refuse(self, edit: AcceptedEdit) -> None:
        """A file rejected with its whole review: the agent's writes to it are refused for the rest of
        the turn (nothing is put back: an agent that writes the disk itself was told no)."""
        self._decisions[os.path.realpath(edit.path)] = edit

    def pending(self) -> list[AcceptedEdit]:
        return list(self._edits)

    def clear(self) -> None:
        """A new turn: every decision expires."""
        self._edits.clear()
        self._decisions.clear()

    async def filter(self, path: str | PathLike[str], content: str) -> str:
        """The text to write instead of ``content``; a file the user rejected is refused.

        The first write after a review gets the accepted text; a later one in the same turn gets
        it when it repeats the proposal (a retry), and is left alone otherwise.
        """
        wanted = os.path.realpath(path)  # the write names the resolved path; the diff may not
        first = next((edit for edit in self._edits if os.path.realpath(edit.path) == wanted), None)
        if first is not None:
            self._edits.remove(first)
        decision = first or self._decisions.get(wanted)
        if decision is None:
            return content
        if decision.text is None:
            raise RequestError(REFUSED, f"{decision.path}: not written: the user rejected this change in the "
                               "review (refused for the rest of the turn unless they review it again)",
                               {"path": decision.path, "reason": "rejected in review"})
        if first is not None or content in (decision.agent_text, decision.text):
            return decision.text
        return content

    def settle(self, tool_call_id: str) -> list[AcceptedEdit]:
        """Forget the tool call's edits; those the agent did not write through us are returned."""
        mine = [edit for edit in self._edits if edit.tool_call_id == tool_call_id]
        self._edits = [edit for edit in self._edits if edit.tool_call_id != tool_call_id]
        return mine


def agent_note(path: str, agent_text: str, accepted: str | None) -> str | None:
    """The short note that tells the agent its edit did not land as proposed (None: it did)."""
    if accepted == agent_text:
        return None
    if accepted is None:
        return f"The user rejected your change to {path}; the file was left as it was."
    diff = list(difflib.unified_diff(agent_text.splitlines(), accepted.splitlines(),
                                     "your proposal", "accepted", n=1, lineterm=""))
    if len(diff) > NOTE_DIFF_LINES:
        diff = [*diff[:NOTE_DIFF_LINES], f"… {len(diff) - NOTE_DIFF_LINES} more diff lines"]
    return (f"The user changed your edit of {path} before accepting it; the file now holds their version "
            "(re-read it before editing it again). Difference from your proposal:\n" + "\n".join(diff))
