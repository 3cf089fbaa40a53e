"""What the user saw when a permission request was answered, and whether that answer still holds.

A request is snapshotted (``Shown``) when its question is built, before anything is shown or a
rule or policy answers it: the tool call's kind, title, raw input, content and locations exactly
as they were then. The answer is recorded against that snapshot, never against the tool call as
it is later. A later update of the tool call that changes its raw input, content or locations
voids the approval, whether it is still being asked or was allowed already: an answer covers
only what it showed. Approvals hold for the turn they were given in.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field

from acp.schema import AllowedOutcome, PermissionOption, RequestPermissionResponse

from ..transcript.tool_calls import ToolCallState
from .command import ScriptRead

PENDING, ALLOWED, REJECTED, CANCELLED = "pending", "allowed", "rejected", "cancelled"


def content_key(state: ToolCallState) -> str:
    """The tool call's content as one canonical string (diffs and terminals included)."""
    return json.dumps([c.model_dump(mode="json", by_alias=True) for c in state.content], sort_keys=True,
                      ensure_ascii=False, default=str)


def input_key(raw_input: object) -> str:
    return json.dumps(raw_input, sort_keys=True, ensure_ascii=False, default=str)


@dataclass(frozen=True, slots=True)
class Shown:
    """A permission request as it stood when the user was asked (or a rule or the policy answered)."""

    tool_call_id: str
    kind: str
    title: str
    raw_input: object
    """A deep copy: later merges into the tool call never reach it."""
    locations: tuple[tuple[str, int | None], ...]
    content: str
    """``content_key`` of the tool call's content."""

    @classmethod
    def of(cls, state: ToolCallState) -> Shown:
        return cls(state.tool_call_id, state.kind, state.title, copy.deepcopy(state.raw_input),
                   tuple(state.locations), content_key(state))

    def differs(self, state: ToolCallState) -> bool:
        """Whether the tool call now says something else than what was shown (input, content, locations)."""
        return (tuple(state.locations) != self.locations or input_key(state.raw_input) != input_key(self.raw_input)
                or content_key(state) != self.content)


@dataclass(slots=True)
class Approval:
    """One answered (or still asked) permission request of one turn."""

    shown: Shown
    turn: int
    outcome: str = PENDING
    void: bool = False
    """The tool call changed after it was shown: this answer covers nothing any more."""
    bound: tuple[ScriptRead, ...] = ()
    """The workspace scripts whose content the answer was bound to (a rule's hash, or an "always" answer
    that made one), as read then: a command it covers runs copies of these bytes (``exec_gate``)."""
    decided: asyncio.Event = field(default_factory=asyncio.Event, compare=False, repr=False)
    """Set once the request is answered (or voided): a write waiting for this review goes on."""

    @property
    def holds(self) -> bool:
        """Allowed, of the current turn, and the tool call still says what was shown."""
        return self.outcome == ALLOWED and not self.void


Voided = Callable[[Approval], None]
"""Told of each approval an update voided (a pending one must be asked again)."""


@dataclass(slots=True)
class Approvals:
    """The approvals of one session's current turn."""

    turn: int = 0
    listeners: list[Voided] = field(default_factory=list)
    _approvals: list[Approval] = field(default_factory=list)

    def start_turn(self) -> None:
        """A new prompt: no earlier answer holds."""
        self.turn += 1
        self._approvals.clear()

    def open(self, state: ToolCallState) -> Approval:
        """Snapshot ``state`` as the question about it is built."""
        approval = Approval(Shown.of(state), self.turn)
        self._approvals.append(approval)
        return approval

    def answer(self, approval: Approval, options: list[PermissionOption],
               response: RequestPermissionResponse) -> None:
        """Record what the agent was answered (by the user, a rule or the policy)."""
        if approval.outcome == PENDING:
            approval.outcome = outcome_of(options, response)
        approval.decided.set()

    def observe(self, state: ToolCallState) -> list[Approval]:
        """The tool call changed: void every approval of it whose snapshot it no longer matches."""
        voided = []
        for approval in self._approvals:
            if approval.shown.tool_call_id == state.tool_call_id and not approval.void \
                    and approval.outcome in (PENDING, ALLOWED) and approval.shown.differs(state):
                approval.void = True
                voided.append(approval)
        for approval in voided:
            approval.decided.set()
            for listener in self.listeners:
                listener(approval)
        return voided

    def asking(self) -> list[Approval]:
        """The requests of this turn still being asked (not answered, not voided)."""
        return [a for a in self._approvals if a.outcome == PENDING and not a.void]

    def holding(self, tool_call_id: str) -> Approval | None:
        """The newest approval of ``tool_call_id`` that holds, if any."""
        return next((a for a in reversed(self._approvals) if a.shown.tool_call_id == tool_call_id and a.holds), None)

    def held(self, kind: str | None = None) -> list[Approval]:
        """Every approval of this turn that holds (of ``kind`` only, when given), oldest first."""
        return [a for a in self._approvals if a.holds and (kind is None or a.shown.kind == kind)]


def outcome_of(options: list[PermissionOption], response: RequestPermissionResponse) -> str:
    """``allowed`` when the chosen option is an allow kind, ``rejected`` for a reject kind, else ``cancelled``."""
    answer = response.outcome
    if not isinstance(answer, AllowedOutcome):
        return CANCELLED
    kind = next((o.kind for o in options if o.option_id == answer.option_id), "")
    if kind.startswith("allow"):
        return ALLOWED
    return REJECTED if kind.startswith("reject") else CANCELLED
