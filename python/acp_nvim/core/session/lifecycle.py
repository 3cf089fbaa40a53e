"""A session's lifecycle: its state, why it offers the way back, and its one lifecycle task.

The states are the strings the chat and the statusline show (``starting``, ``idle``, ``running``,
``waiting``, ``closed``, ``failed``). Every move goes through :data:`TRANSITIONS`; ``closed`` is
the end (nothing moves out of it). ``recovery`` says why the chat offers the restart key, as a
kind (:class:`Trouble`) and the words shown; meaning is read from the kind, never the words.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from enum import Enum, StrEnum

from .. import tasks
from ..log.ring import LogRing


class State(StrEnum):
    STARTING = "starting"
    IDLE = "idle"
    RUNNING = "running"
    WAITING = "waiting"
    CLOSED = "closed"
    FAILED = "failed"


ENDED = frozenset({State.CLOSED, State.FAILED})
"""States without a live agent: ``failed`` comes back with a restart, ``closed`` never does."""
TURN = frozenset({State.RUNNING, State.WAITING})
_ANY = frozenset(State)

TRANSITIONS: Mapping[State, frozenset[State]] = {
    State.STARTING: _ANY - {State.RUNNING},  # a turn starts only from idle
    State.IDLE: _ANY,
    State.RUNNING: _ANY,
    State.WAITING: _ANY,
    State.FAILED: _ANY - {State.RUNNING},  # a review of a write may wait while no agent runs
    State.CLOSED: frozenset(),
}
"""Where each state may go: a question (a permission request, the review of a write) may wait in
any live state; ``closed`` is the end. A move to the same state still tells the editor."""


class Trouble(Enum):
    """Why the chat offers the restart key."""

    SLOW = "slow"
    """A request of the handshake (or a mode change) is slow to be answered."""
    SILENT = "silent"
    """No output from the agent during a turn."""
    STUCK = "stuck"
    """The agent ignores a cancel."""
    DOWN = "down"
    """No agent runs: it did not start, exited, or the connection was lost."""


@dataclass(frozen=True, slots=True)
class Recovery:
    trouble: Trouble
    text: str
    """What the chat line says."""


class Lifecycle:
    """One session's state machine and the task that opens, reopens or reconnects it."""

    def __init__(self, key: str, log: LogRing, changed: Callable[[], None], report: tasks.ErrorReporter) -> None:
        self._key = key
        self._log = log
        self._changed = changed
        self._report = report
        self.state = State.STARTING
        self.recovery: Recovery | None = None
        self.stuck = False
        """The agent ignores a cancel: a prompt restarts it first."""
        self._task: asyncio.Task[Exception | None] | None = None

    @property
    def ended(self) -> bool:
        return self.state in ENDED

    @property
    def in_turn(self) -> bool:
        return self.state in TURN

    @property
    def why(self) -> str:
        """The recovery's words ('' when all is well)."""
        return self.recovery.text if self.recovery is not None else ""

    def move(self, state: State) -> None:
        """Go to ``state`` if the table allows it (a move out of ``closed`` is logged and ignored)."""
        if state not in TRANSITIONS[self.state]:
            self._log.add("debug", "lifecycle", f"ignored a move from {self.state} to {state}")
            return
        self.state = state
        self._changed()

    def trouble(self, trouble: Trouble, text: str) -> None:
        self._set(Recovery(trouble, text))

    def clear(self, *troubles: Trouble) -> None:
        """Forget the recovery (only when it is one of ``troubles``, if given)."""
        if self.recovery is not None and (not troubles or self.recovery.trouble in troubles):
            self._set(None)

    def _set(self, recovery: Recovery | None) -> None:
        if recovery != self.recovery:
            self.recovery = recovery
            self._changed()

    async def run(self, step: Coroutine[object, None, None], what: str) -> Exception | None:
        """Run ``step`` (an open, reopen or reconnect) as the one lifecycle task, after cancelling
        the one in progress. Its failure is returned (already shown in the chat), not raised."""
        previous = self._task
        task = self._task = tasks.spawn(_after(previous, step), self._report, f"{self._key} {what}")
        return await task

    def cancel(self) -> None:
        """A close: the open, reopen or reconnect in progress stops."""
        if self._task is not None and not self._task.done():
            self._task.cancel()


async def _after(previous: asyncio.Task[Exception | None] | None,
                 step: Coroutine[object, None, None]) -> Exception | None:
    try:
        if previous is not None and not previous.done():
            previous.cancel()
            await asyncio.wait({previous})
    except asyncio.CancelledError:
        step.close()
        raise
    try:
        await step
    except Exception as exc:
        return exc
    return None
