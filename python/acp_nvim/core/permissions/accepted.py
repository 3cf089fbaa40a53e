"""What the user decided in a review, for the rest of the turn.

Each reviewed file keeps its last decision, keyed by what the opener found (``Opener.locate``:
the containing folder's identity and the leaf name, never a path string): the text the user
accepted (maybe edited in the review), or None when they rejected it. The write gate lets an
agent's write land only with that text; agents that write the disk themselves are corrected
to it once their tool call ends.
"""

from __future__ import annotations

import asyncio
import difflib
from dataclasses import dataclass, field

from acp import RequestError

from ..files.opener import Opener
from ..files.paths import PathPolicy

REFUSED = -32602

NOTE_DIFF_LINES = 40

FileKey = tuple[int, int, str]
"""(st_dev, st_ino) of the file's folder and the rest of its path below it (see ``Located``)."""


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
    key: FileKey | None = field(default=None, compare=False)

    @property
    def target(self) -> str | None:
        """The text the file must end up with (None: nothing to put back)."""
        return self.text if self.text is not None else self.base

    def allows(self, content: str) -> bool:
        """Whether an agent's write of ``content`` is what the user accepted (its proposal or their version)."""
        return self.text is not None and content in (self.agent_text, self.text)


class AcceptedEdits:
    """The last decision on each reviewed file this turn (a new review of the file replaces it)."""

    def __init__(self, policy: PathPolicy | None = None) -> None:
        self._policy = policy
        self._decisions: dict[FileKey, AcceptedEdit] = {}

    async def key_of(self, path: str) -> FileKey | None:
        """The key of ``path`` (None: outside the roots, or the walk to it is refused)."""
        policy = self._policy
        if policy is None:
            return None
        try:
            return await asyncio.to_thread(locate_key, policy, path)
        except (RequestError, OSError):
            return None

    async def add(self, edit: AcceptedEdit) -> None:
        """Record an accepted (``text`` set) or rejected (``text`` None) file."""
        edit.key = await self.key_of(edit.path)
        if edit.key is not None:
            self._decisions[edit.key] = edit

    refuse = add

    def decision(self, key: FileKey) -> AcceptedEdit | None:
        return self._decisions.get(key)

    def of_tool_call(self, tool_call_id: str) -> list[AcceptedEdit]:
        """The decisions a tool call's review made (still current)."""
        return [edit for edit in self._decisions.values() if edit.tool_call_id == tool_call_id]

    def pending(self) -> list[AcceptedEdit]:
        return list(self._decisions.values())

    def clear(self) -> None:
        """A new turn: every decision expires."""
        self._decisions.clear()


def locate_key(policy: PathPolicy, path: str) -> FileKey:
    """The key of ``path`` through the no-follow walk (blocking; RequestError when refused)."""
    return Opener(policy.roots).locate(policy.check(path)).key


def refused(path: str, reason: str) -> RequestError:
    """The JSON-RPC error of a write the user did not accept."""
    return RequestError(REFUSED, f"{path}: not written: {reason}", {"path": path, "reason": reason})


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
