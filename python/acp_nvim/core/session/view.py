"""A session as the editor shows it: one frozen snapshot, read instead of the session's parts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from acp.schema import InitializeResponse

from ..agent.process import AgentProcess
from ..conversation.details import ConfigOption, SessionDetails, find_option
from ..conversation.failed_turns import FailedTurns
from ..conversation.queue import PromptQueue
from ..conversation.steering import Steering
from ..permissions.broker import PermissionBroker
from ..questions import Questions
from ..transcript.conversation import Conversation
from .lifecycle import Lifecycle


@dataclass(frozen=True, slots=True)
class SessionView:
    """What the statusline, the chat's header and the commands read of a session."""

    key: str
    agent: str
    cwd: str
    state: str
    recovery: str
    """Why the chat offers the restart key ('' when all is well)."""
    started: bool
    """The ACP session is open (it has an id)."""
    ended: bool
    """Closed or failed: no agent runs (a failed session comes back with a restart)."""
    connected: bool
    """The agent process runs and its connection is up."""
    info: InitializeResponse | None
    """What the agent said of itself and offers (``initialize``)."""
    policy: str
    pending: int
    """Permission requests shown to the user and not answered yet."""
    queued: tuple[str, ...]
    """The text of every prompt waiting in the queue."""
    mode: str | None = None
    modes: tuple[tuple[str, str], ...] = ()
    """(id, name) of every mode the agent offers."""
    title: str | None = None
    usage: str | None = None
    tokens: str = ""
    limits: str = ""
    """The usage meter: the window nearest its limit and its reset (``limits.py``; '' when none)."""
    options: tuple[ConfigOption, ...] = ()
    commands: tuple[tuple[str, str], ...] = ()
    """(name, description) of the agent's slash commands."""
    command_hints: tuple[tuple[str, str], ...] = ()
    """(name, input hint) of the slash commands that take an input."""
    turns: int = 0
    stop_reason: str = ""
    asked: int = 0
    marks: tuple[str, ...] = ()
    """Beside each queued prompt: its steering mark ('steering', 'not steered: …') or ''."""
    steer: str = "steer"
    """How the next prompt sent during a turn goes: 'steer' or 'queue'."""
    steer_flipped: bool = False
    """The user switched it for the next prompt only."""
    failure: dict[str, object] | None = None
    """The failed prompt's class and the actions the chat offers (``failed_turns.py``)."""
    subagents: int = 0
    """Tool calls that run a subagent and have not finished."""

    @classmethod
    def of(cls, details: SessionDetails, *, key: str, agent: str, cwd: str, state: str, recovery: str,
           started: bool, ended: bool, connected: bool, info: InitializeResponse | None, policy: str,
           pending: int, queued: tuple[str, ...], **turn: object) -> SessionView:
        """The snapshot: ``details`` (mode, options, usage, counters) and what the session says."""
        return cls(key=key, agent=agent, cwd=cwd, state=state, recovery=recovery, started=started, ended=ended,
                   connected=connected, info=info, policy=policy, pending=pending, queued=queued,
                   mode=details.mode, modes=tuple(details.modes), title=details.title, usage=details.usage,
                   tokens=details.tokens(), limits=details.limits.meter(), options=tuple(details.options),
                   commands=tuple(details.commands), command_hints=tuple(details.command_hints.items()),
                   turns=details.turns, stop_reason=details.stop_reason, asked=details.asked,
                   **turn)  # type: ignore[arg-type]  # the steering, failure and subagent fields, by name

    @property
    def command_names(self) -> list[str]:
        return [name for name, _ in self.commands]

    def option(self, category: str) -> ConfigOption | None:
        """The option of ``category`` ('model', 'mode', …), or the one with that id."""
        return find_option(self.options, category)

    def option_by_id(self, option_id: str) -> ConfigOption | None:
        return next((o for o in self.options if o.id == option_id), None)


class Viewed(Protocol):
    """The parts of a session its snapshot is read from."""

    key: str
    agent_name: str
    cwd: str
    details: SessionDetails
    lifecycle: Lifecycle
    permissions: PermissionBroker
    questions: Questions
    queue: PromptQueue
    steering: Steering
    failed_turns: FailedTurns
    transcript: Conversation

    @property
    def process(self) -> AgentProcess: ...

    @property
    def session_id(self) -> str | None: ...


def snapshot(s: Viewed) -> SessionView:
    """What the editor shows of session ``s``, as of now."""
    process, lifecycle = s.process, s.lifecycle
    return SessionView.of(
        s.details, key=s.key, agent=s.agent_name, cwd=s.cwd, state=lifecycle.state.value, recovery=lifecycle.why,
        started=s.session_id is not None, ended=lifecycle.ended, connected=process.alive and process.conn is not None,
        info=process.info, policy=s.permissions.policy, pending=len(s.questions.waiting(s.key)),
        queued=tuple(p.text for p in s.queue), marks=tuple(s.steering.mark(p) for p in s.queue),
        steer=s.steering.next_way(), steer_flipped=s.steering.flipped, failure=s.failed_turns.describe(),
        subagents=s.transcript.tools.running_subagents())
