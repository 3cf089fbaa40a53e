"""``session/update`` notifications: each kind to the transcript and the session's details.

The router is the session's stream: the client side (``client.py``) hands it every update and
every streamed chunk, and it drops what must not show (a replay already shown, the late output
of a cancelled turn) before it reaches the transcript.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from acp.helpers import ContentBlock, SessionUpdate
from acp.schema import (
    AgentMessageChunk,
    AgentPlanContentUpdate,
    AgentPlanRemovedUpdate,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    PlanUpdateFile,
    PlanUpdateItems,
    PlanUpdateMarkdown,
    ResourceContentBlock,
    SessionInfoUpdate,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)

from ..log.ring import LogRing
from ..transcript.tool_calls import ToolCallState
from ..transcript.transcript import Transcript
from .details import SessionDetails
from .prompt import Turn

ToolCallObserver = Callable[[ToolCallState], None]
ModeObserver = Callable[[str | None], None]
REPLAYED = (UserMessageChunk, AgentMessageChunk, AgentThoughtChunk, ToolCallStart, ToolCallProgress, AgentPlanUpdate)
LATE_AFTER_CANCEL = (AgentMessageChunk, AgentThoughtChunk, UserMessageChunk, ToolCallStart, AgentPlanUpdate,
                     AgentPlanContentUpdate)
"""Updates dropped between a cancel and the end of the turn (late output of the cancelled turn)."""


class TurnGate(Protocol):
    """The running turn and whether it is being cancelled (``queue.PromptQueue``)."""

    @property
    def cancelling(self) -> bool: ...

    @property
    def turn(self) -> Turn | None: ...


class _NoTurns:
    cancelling = False
    turn: Turn | None = None


def replayed(update: SessionUpdate) -> bool:
    """Whether ``update`` is part of a conversation an agent replays (load, fork); commands, modes,
    titles and usage are not, and pass while a replay is held."""
    return isinstance(update, REPLAYED)


class UpdateRouter:
    """Routes one session's updates; ``replaying`` drops them (a reloaded history already shown),
    ``held`` drops the conversation's (a replay held until the next prompt), and the late output
    of a cancelled turn (``turns``) is dropped and counted. ``on_tool_call`` hear every tool call
    in order; ``on_mode`` hears every mode the agent reports (the mode policy judges them)."""

    def __init__(self, transcript: Transcript, details: SessionDetails, log: LogRing,
                 on_tool_call: Sequence[ToolCallObserver], changed: Callable[[], None],
                 on_mode: ModeObserver = lambda mode: None, *, turns: TurnGate | None = None) -> None:
        self.replaying = False
        self.held = False
        self._transcript = transcript
        self._details = details
        self._log = log
        self._queue: TurnGate = turns or _NoTurns()
        self._on_tool_call = tuple(on_tool_call)
        self._changed = changed
        self._on_mode = on_mode

    def replay(self, on: bool) -> None:
        self.replaying = on

    def hold(self, on: bool) -> None:
        self.held = on

    def route(self, update: SessionUpdate) -> None:
        """Dispatch one update; an unknown kind is logged and skipped. After a cancel, the turn's late
        output is dropped (ACP: the turn ends with the agent's answer to the prompt)."""
        if self.held and replayed(update):  # a replay already shown
            return
        turn = self._queue.turn
        if self._queue.cancelling and turn is not None and self._late(update):
            turn.dropped += 1
            return
        if self.replaying:
            return
        match update:
            case UserMessageChunk() | AgentMessageChunk() | AgentThoughtChunk():
                self._text(update)
            case ToolCallStart() | ToolCallProgress():
                state = self._transcript.tool_call(update)
                for observer in self._on_tool_call:
                    observer(state)
            case AgentPlanUpdate():
                self._transcript.plan(list(update.entries))
            case AgentPlanContentUpdate():
                self._plan(update)
            case AgentPlanRemovedUpdate():
                self._transcript.plan_removed(update.plan_id)
            case _:
                self._status(update)

    def _late(self, update: SessionUpdate) -> bool:
        if isinstance(update, ToolCallProgress):
            return update.tool_call_id not in self._transcript.tool_calls
        return isinstance(update, LATE_AFTER_CANCEL)

    def chunk(self, kind: str, text: str) -> None:
        """A streamed ``agent_message_chunk`` or ``agent_thought_chunk``, as plain text (the wire's
        hot path: ``core/agent/inbound.py``); dropped as ``route`` drops it."""
        if self.held:
            return
        turn = self._queue.turn
        if self._queue.cancelling and turn is not None:
            turn.dropped += 1
            return
        if self.replaying:
            return
        if kind == "agent_message_chunk":
            self._transcript.agent_chunk(text)
        else:
            self._transcript.thought_chunk(text)

    def _status(self, update: object) -> None:
        match update:
            case AvailableCommandsUpdate():
                self._details.set_commands(update.available_commands)
            case CurrentModeUpdate():
                self._details.mode = update.current_mode_id
                self._transcript.notice(f"mode: {update.current_mode_id}", "info")
                self._on_mode(update.current_mode_id)
            case SessionInfoUpdate():
                if not update.title:
                    return
                self._details.title = update.title
            case UsageUpdate():
                self._details.usage_update(update)
            case ConfigOptionUpdate():
                self._log.add("debug", "notification", "config options updated")
                self._details.set_options(update.config_options)
                self._details.mode_from_options()
                self._on_mode(self._details.mode)
            case _:
                self._log.add("warn", "notification", f"skipped unknown session update {update!r:.120}")
                return
        self._changed()

    def _text(self, update: UserMessageChunk | AgentMessageChunk | AgentThoughtChunk) -> None:
        text = content_text(update.content)
        if isinstance(update, AgentMessageChunk):
            self._transcript.agent_chunk(text)
        elif isinstance(update, AgentThoughtChunk):
            self._transcript.thought_chunk(text)
        else:
            self._transcript.user_chunk(text)
        self._transcript.note_message(update.message_id)

    def _plan(self, update: AgentPlanContentUpdate) -> None:
        plan = update.plan
        if isinstance(plan, PlanUpdateItems):
            self._transcript.plan(list(plan.entries), plan.plan_id)
        elif isinstance(plan, PlanUpdateMarkdown):
            self._transcript.plan_text(plan.content or f"[{plan.type} plan]", plan.plan_id)
        elif isinstance(plan, PlanUpdateFile):
            self._transcript.plan_text(plan.uri or f"[{plan.type} plan]", plan.plan_id)


def content_text(block: ContentBlock) -> str:
    """The text of a content block; other kinds as ``[kind uri]``."""
    if isinstance(block, TextContentBlock):
        return block.text
    uri = block.uri if isinstance(block, ResourceContentBlock) else getattr(block, "uri", None)
    return f"[{block.type}{f' {uri}' if uri else ''}]"
