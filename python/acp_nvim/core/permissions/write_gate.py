"""The one gate every write passes: what lands on disk is what the user saw and accepted.

Under policy ``ask`` an agent's write (``fs/write_text_file``, into a buffer or the disk) lands
only when an allowed request of this turn showed that file (its ``Shown`` snapshot: diff paths,
raw-input edits and locations, relative ones taken from the session's cwd) and the content is
the text the user accepted for it (``AcceptedEdits``: their version when they edited the review).
Every write is checked, not only the first. Anything else opens a review of its own, built
through the broker like any request (so rules, the policy, the queue and cancel apply), and the
write waits for it: accepted, the accepted text lands; rejected or cancelled, the agent gets a
JSON-RPC error that says why. While a request that shows the file is still being asked, writes
to it wait for the answer. Under ``auto-edit`` and ``trust`` writes inside the workspace land,
except to files that configure code execution (``exec_files.py``): those are always reviewed.

Files are compared by what the opener's no-follow walk finds (``Opener.locate``), never by a
path string. The user's own writes (``:Ai changes`` revert) and acp.nvim's corrections (putting
back what the user accepted) pass as they are, and are recorded in ``own_writes``.

Agents that write the disk themselves are followed through the turn's changeset: a change of a
reviewed file that differs from the decision is put back to it; under ``ask`` (and for a file
that configures code execution, under any policy) a change of a file nobody reviewed this turn
opens a review of that change (base: the file before it; reject puts the base back).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
from collections import deque
from collections.abc import Callable
from pathlib import Path

from acp import RequestError
from acp.helpers import tool_diff_content
from acp.schema import PermissionOption, ToolCallLocation, ToolCallUpdate

from ..files.changes import FileChange
from ..files.service import AGENT
from ..questions import Ticket
from ..tasks import ErrorReporter, spawn
from ..transcript.conversation import Conversation
from . import review as review_model
from .accepted import AcceptedEdit, AcceptedEdits, FileKey, refused
from .approvals import ALLOWED, REJECTED, Shown, outcome_of
from .broker import PermissionBroker
from .exec_files import configures_execution

REQUEST_CANCELLED = -32800
"""A write whose review was closed by a cancel, the session's end or the agent (ACP: request cancelled)."""
WRITE = "acp.nvim-write"
REFUSE = "acp.nvim-refuse-write"
OPTIONS = [
    PermissionOption(option_id=WRITE, name="Write it", kind="allow_once"),
    PermissionOption(option_id=REFUSE, name="Don't write it", kind="reject_once"),
]
OWN_WRITES = 200

Unreviewable = Callable[[FileChange, str], None]
"""Told of a disk change that no review can be shown for, and why (the chat flags it)."""
Deciding = Callable[[str], bool]
"""Whether a three-way view of the file is open (the user decides a disk change there)."""


class WriteGate:
    """Decides every write of one session (``FileService``'s ``WriteGate``), and follows disk writers."""

    def __init__(self, broker: PermissionBroker, transcript: Conversation, cwd: str, report: ErrorReporter,
                 unreviewable: Unreviewable | None = None, deciding: Deciding | None = None) -> None:
        self._broker = broker
        self._accepted: AcceptedEdits = broker.settlement.accepted
        self._transcript = transcript
        self._cwd = cwd
        self._report = report
        self._unreviewable = unreviewable
        self._deciding = deciding or (lambda path: False)
        self._locks: dict[FileKey, asyncio.Lock] = {}
        self._numbers = itertools.count(1)
        self.own_writes: deque[tuple[str, str]] = deque(maxlen=OWN_WRITES)
        """(origin, path) of the user's and acp.nvim's own writes, newest last."""

    # -- every write -------------------------------------------------------------------

    async def admit(self, path: Path, content: str, origin: str) -> str:
        """The text that may land for this write (a RequestError saying why when none may)."""
        if origin != AGENT:
            self.own_writes.append((origin, str(path)))
            return content
        key = await self._accepted.key_of(str(path))
        if key is None:
            raise refused(str(path), "the path changed while it was being checked (a symlink on the way?)")
        if self._broker.policy != "ask" and not await self._guarded(path):
            return content
        async with self._lock(key):
            await self._settled(key)
            decision = self._accepted.decision(key)
            if decision is not None and decision.text is None:
                raise refused(str(path), "the user rejected this change in the review (refused for the rest of "
                              "the turn unless they review it again)")
            if decision is not None and decision.allows(content) and await self._shown_allowed(key, decision):
                assert decision.text is not None
                return decision.text
            return await self._review_write(path, key, content)

    async def _guarded(self, path: Path) -> bool:
        return await asyncio.to_thread(configures_execution, path, self._broker.files_policy.roots)

    def _lock(self, key: FileKey) -> asyncio.Lock:
        return self._locks.setdefault(key, asyncio.Lock())

    async def _settled(self, key: FileKey) -> None:
        """Wait while a request that shows this file is being asked."""
        while True:
            asking = [a for a in self._broker.approvals.asking() if key in await self._keys(a.shown)]
            if not asking:
                return
            await asking[0].decided.wait()

    async def _shown_allowed(self, key: FileKey, decision: AcceptedEdit) -> bool:
        """Whether the allowed request that made ``decision`` still holds and showed this file."""
        approval = self._broker.approvals.holding(decision.tool_call_id)
        return approval is not None and key in await self._keys(approval.shown)

    async def _keys(self, shown: Shown) -> set[FileKey]:
        keys = set()
        for path in shown_paths(shown, self._cwd):
            key = await self._accepted.key_of(path)
            if key is not None:
                keys.add(key)
        return keys

    async def _review_write(self, path: Path, key: FileKey, content: str) -> str:
        current = await self._broker.current(str(path))
        asked: list[Ticket] = []
        approval, call_id = await self._ask(path, content, current.text, None, asked)
        decision = self._accepted.decision(key)
        if approval == ALLOWED:
            if decision is None or decision.tool_call_id != call_id:
                return content  # allowed by a rule of the user's (never for a file that configures execution)
            if decision.text is not None:
                return decision.text
        if approval != REJECTED and any(ticket.cancelled for ticket in asked):
            # closed by a cancel, the session's end or the agent: "request cancelled", not a refusal
            raise RequestError(REQUEST_CANCELLED, f"{path}: not written: the turn was cancelled",
                               {"path": str(path), "reason": "cancelled"})
        reason = "the user rejected this write in its review" if approval == REJECTED else "its review was cancelled"
        raise refused(str(path), reason)

    async def _ask(self, path: Path, content: str, base: str | None, bases: dict[str, str | None] | None,
                   asked: list[Ticket] | None = None, verb: str = "Write") -> tuple[str, str]:
        """Put one write (or one change already on disk) to the broker as an edit request of its own."""
        call_id = f"acp.nvim/write-{next(self._numbers)}"
        name = os.path.relpath(path, self._cwd) if str(path).startswith(self._cwd.rstrip("/") + "/") else str(path)
        call = ToolCallUpdate(tool_call_id=call_id, title=f"{verb} {name}", kind="edit", status="pending",
                              content=[tool_diff_content(str(path), content, base)],
                              locations=[ToolCallLocation(path=str(path))])
        response = await self._broker.handle(call, list(OPTIONS), bases=bases, asked=asked)
        outcome = outcome_of(OPTIONS, response)
        self._transcript.tools.tool_call(ToolCallUpdate(tool_call_id=call_id,
                                                        status="completed" if outcome == ALLOWED else "failed"))
        return outcome, call_id

    # -- changes a boxed agent made in its overlay ------------------------------------------

    async def propose(self, path: Path, shown: str, verb: str, guarded: bool = False) -> bool:
        """Whether a change the agent made in its overlay that is not a text write (a deletion,
        content that is not text, a new exec bit: ``guarded``) may land. Under ``ask``, and for a
        file that configures execution under every policy, it gets a review of its own (``shown``
        against the file now, titled ``verb`` and the file's name). A text write of the overlay goes
        through ``admit`` like ``fs/write_text_file``."""
        if self._broker.policy != "ask" and not guarded and not await self._guarded(path):
            return True
        key = await self._accepted.key_of(str(path))
        if key is None:
            return False
        async with self._lock(key):
            base = (await self._broker.current(str(path))).text
            if guarded:
                self._broker.runs_code.add(str(path))
            try:
                outcome, _ = await self._ask(path, shown, base, {str(path): base}, verb=verb)
            finally:
                self._broker.runs_code.discard(str(path))
        return outcome == ALLOWED

    # -- agents that write the disk themselves ---------------------------------------------

    def disk_changed(self, turn: int, change: FileChange) -> None:
        """A changeset listener: the agent changed a file on disk itself."""
        if change.via == "disk":
            spawn(self._disk_change(change), self._report, f"review of {change.path} changed on disk")

    async def _disk_change(self, change: FileChange) -> None:
        path, settlement = change.path, self._broker.settlement
        key = await self._accepted.key_of(path)
        if key is None:
            return
        decision = self._accepted.decision(key)
        if decision is not None:
            if change.after != decision.target:
                rejected = decision.text is None
                await settlement.put_back(path, decision.target, "its text before the review you rejected"
                                          if rejected else "the text you accepted in the review", restore=rejected)
            return
        if self._broker.policy != "ask" and not await self._guarded(Path(path)):
            return
        if self._deciding(path):
            return  # under unsaved edits: the three-way view the reconcile opened shows the change
        if not change.known or change.after is None:
            why = "its content before the turn is unknown" if not change.known else "the agent deleted it"
            if self._unreviewable is not None:
                self._unreviewable(change, why)
            return
        async with self._lock(key):
            await self._review_change(path, key, change)

    async def _review_change(self, path: str, key: FileKey, change: FileChange) -> None:
        assert change.after is not None
        outcome, call_id = await self._ask(Path(path), change.after, change.before, {path: change.before})
        decision = self._accepted.decision(key)
        settlement = self._broker.settlement
        if outcome == ALLOWED:
            if decision is not None and decision.tool_call_id == call_id and decision.text not in (None, change.after):
                await settlement.put_back(path, decision.text, "the text you accepted in the review")
            return
        now = await asyncio.to_thread(review_model.disk_text, path, self._broker.files_policy)
        if now != change.before:
            await settlement.put_back(path, change.before, "its text before the agent changed it", restore=True)


def shown_paths(shown: Shown, cwd: str) -> list[str]:
    """Every file a request showed: its diffs, the edits in its raw input, its locations (absolute)."""
    names: list[str] = []
    try:
        content = json.loads(shown.content)
    except ValueError:
        content = []
    for item in content if isinstance(content, list) else []:
        if isinstance(item, dict) and item.get("type") == "diff" and isinstance(item.get("path"), str):
            names.append(item["path"])
    names += [edit.path for edit in review_model.raw_input_edits(shown.raw_input)]
    names += [path for path, _ in shown.locations if isinstance(path, str)]
    return list(dict.fromkeys(os.path.normpath(os.path.join(cwd, name)) for name in names if name))

