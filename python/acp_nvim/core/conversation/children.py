"""A session's subagents that the agent runs as child sessions (the subagents RFD, ``subagent_update``).

A child has a session id of its own: its updates and requests carry it. In the parent's chat it is
drawn as one call that runs a subagent (``call_id``), its own tool calls folded under it; its state
comes from the agent's ``subagent_update`` patches, and whether the client may cancel it alone from
the ``cancel`` capability the agent grants it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..transcript.tool_calls import CHILD_PREFIX
from .schema_ext import ChildState, SubagentUpdate

MAX_CHILDREN = 200
"""Children a session keeps; an agent announcing more has the newest ones ignored (they are logged)."""
CALL_PREFIX = CHILD_PREFIX
"""The id of the call that stands for a child in the chat is the prefix and the child's session id."""
STATUS = {"running": "in_progress", "requires_action": "pending", "unknown": "in_progress"}
"""A child's work state as the status of the call that stands for it (``idle``: by its stop reason); one
that waits on the user is ``pending`` (○), as a call waiting for its permission is."""


@dataclass(slots=True)
class Child:
    """What the parent knows of one child session."""

    session_id: str
    parent_session: str
    title: str = ""
    description: str = ""
    can_cancel: bool = False
    state: ChildState | None = None
    parent_call: str | None = None
    """The parent's tool call that launched the child, when the agent names it (a session message's id)."""
    cancels: int = 0
    """How many times the user cancelled the child's work."""

    @property
    def call_id(self) -> str:
        return CALL_PREFIX + self.session_id

    @property
    def label(self) -> str:
        """How the chat, the board and a question's title name the child."""
        return self.title or self.description or self.session_id[:40]

    @property
    def status(self) -> str:
        """A tool call status for the child's state: in progress while it works, then how its work ended."""
        state = self.state
        if state is None:
            return "pending"
        if state.state != "idle":
            return STATUS.get(state.state, "in_progress")
        if state.stop_reason == "cancelled":
            return "cancelled"
        return "failed" if state.error or state.stop_reason in ("refusal", "error") else "completed"

    @property
    def waits_on_user(self) -> bool:
        return self.state is not None and self.state.state == "requires_action"

    def headline_title(self) -> str:
        """The title of the call that stands for the child: its label, its role, and the error its work
        ended on (a question of the child is titled by it too: ``ToolCallState.asker``)."""
        role = f" ({self.description})" if self.description and self.description != self.label else ""
        error = f" · {self.state.error}" if self.state is not None and self.state.error else ""
        return f"subagent “{self.label}”{role}{error}"


class Children:
    """The child sessions of one session, by session id (the children of children included: each names
    the session it was announced on)."""

    def __init__(self) -> None:
        self._by_session: dict[str, Child] = {}

    def get(self, session_id: str) -> Child | None:
        return self._by_session.get(session_id)

    def of_call(self, call_id: str) -> Child | None:
        """The child a chat call stands for (``Child.call_id``)."""
        if not call_id.startswith(CALL_PREFIX):
            return None
        return self._by_session.get(call_id[len(CALL_PREFIX):])

    def all(self) -> list[Child]:
        return list(self._by_session.values())

    def running(self) -> list[Child]:
        return [child for child in self._by_session.values() if child.status in ("pending", "in_progress")]

    def patch(self, parent_session: str, update: SubagentUpdate) -> Child | None:
        """Apply a ``subagent_update`` sent on ``parent_session`` (announcing the child the first time).
        None: a child of another parent (ownership never changes), or one too many."""
        child = self._by_session.get(update.session_id)
        if child is None:
            if len(self._by_session) >= MAX_CHILDREN or update.session_id == parent_session:
                return None
            child = self._by_session[update.session_id] = Child(update.session_id, parent_session)
        elif child.parent_session != parent_session:
            return None
        if update.title is not None:
            child.title = update.title
        if update.description is not None:
            child.description = update.description
        if update.cancel is not None:
            child.can_cancel = update.cancel
        if update.state is not None or update.cleared_state:
            child.state = update.state
        return child
