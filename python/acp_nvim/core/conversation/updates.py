"""``session/update`` notifications: each kind to the transcript and the session's details.

The router is the session's stream: the client side (``client.py``) hands it every update and
every streamed chunk, and it drops what must not show (a replay already shown, the late output
of a cancelled turn) before it reaches the transcript. What the SDK's models do not carry is
decoded here from the update's JSON (``schema_ext.py``): a tool's ``name``, a subagent's parent,
and the update kinds newer than the SDK (notices, compactions). An update of a kind nobody knows
is shown once per kind as a line in the chat, and logged whole.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, cast

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

from ..agent.inbound import NEWER
from ..log.ring import LogRing
from ..media.items import is_media
from ..transcript.conversation import Conversation
from ..transcript.tool_calls import ToolCallState
from . import schema_ext
from .children import Child, Children
from .details import SessionDetails
from .prompt import Turn

UNKNOWN_TOLD = 20
"""Unknown update kinds a session names in the chat; an agent inventing more is only logged."""
ToolCallObserver = Callable[[ToolCallState], None]
ModeObserver = Callable[[str | None], None]
REPLAYED = (UserMessageChunk, AgentMessageChunk, AgentThoughtChunk, ToolCallStart, ToolCallProgress, AgentPlanUpdate)
LATE_AFTER_CANCEL = (AgentMessageChunk, AgentThoughtChunk, UserMessageChunk, AgentPlanUpdate, AgentPlanContentUpdate)
"""Updates dropped between a cancel and the end of the turn (late output of the cancelled turn). A tool
call is not dropped: it is shown, as cancelled (the user sees what the agent started after the cancel)."""


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

    def __init__(self, transcript: Conversation, details: SessionDetails, log: LogRing,
                 on_tool_call: Sequence[ToolCallObserver], changed: Callable[[], None],
                 on_mode: ModeObserver = lambda mode: None, *, turns: TurnGate | None = None) -> None:
        self.replaying = False
        self.held = False
        self._transcript = transcript
        self._details = details
        self._log = log
        # ``is None``, not ``or``: the prompt queue is empty (hence falsy) when the session is built
        self._queue: TurnGate = turns if turns is not None else _NoTurns()
        self._on_tool_call = tuple(on_tool_call)
        self._changed = changed
        self._on_mode = on_mode
        self._unknown_kinds: set[str] = set()
        """Update kinds already shown as unknown (each is told once per session)."""
        self.children = Children()
        """The subagents the agent runs as child sessions (their own session ids)."""

    def replay(self, on: bool) -> None:
        self.replaying = on

    def hold(self, on: bool) -> None:
        self.held = on

    def route(self, update: SessionUpdate, raw: Mapping[str, object] | None = None) -> None:
        """Dispatch one update (``raw``: its JSON as it came, for what the SDK's models drop); an unknown
        kind is logged and skipped. After a cancel, the turn's late output is dropped (ACP: the turn ends
        with the agent's answer to the prompt)."""
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
                meta, running = update.field_meta, self._transcript.tools.running_subagents()
                state = self._transcript.tools.tool_call(update, schema_ext.tool_name(raw),
                                                         schema_ext.parent_tool_call(meta),
                                                         schema_ext.runs_subagent(meta))
                if self._queue.cancelling and turn is not None:
                    # it arrived after the cancel: shown as cancelled (a later completed or failed still shows)
                    self._transcript.tools.cancel_tool_call(state.tool_call_id)
                for observer in self._on_tool_call:
                    observer(state)
                if self._transcript.tools.running_subagents() != running:
                    self._changed()  # the statusline counts running subagents
            case AgentPlanUpdate():
                self._transcript.plan(list(update.entries))
            case AgentPlanContentUpdate():
                self._plan(update)
            case AgentPlanRemovedUpdate():
                self._transcript.plan_removed(update.plan_id)
            case UsageUpdate():
                self._details.usage_update(update)
                self._details.limits.update(schema_ext.usage_limits(raw))
                self._changed()
            case _:
                self._status(update)

    def _late(self, update: SessionUpdate) -> bool:
        if isinstance(update, ToolCallProgress):
            return update.tool_call_id not in self._transcript.tool_calls
        return isinstance(update, LATE_AFTER_CANCEL)

    def chunk(self, kind: str, text: str, message_id: str | None = None) -> None:
        """A streamed ``agent_message_chunk`` or ``agent_thought_chunk``, as plain text and its
        ``messageId`` (the wire's hot path: ``core/agent/inbound.py``); dropped as ``route`` drops it."""
        if self.held:
            return
        turn = self._queue.turn
        if self._queue.cancelling and turn is not None:
            turn.dropped += 1
            return
        if self.replaying:
            return
        if kind == "agent_message_chunk":
            self._transcript.agent_chunk(text, message_id)
        else:
            self._transcript.thought_chunk(text, message_id)

    def newer(self, raw: Mapping[str, object]) -> None:
        """An update of a kind the SDK's models do not know: a notice or a compaction (decoded by hand),
        else shown once per kind as unknown. Notices are live events and pass a held replay; a
        compaction is part of the conversation."""
        if self.replaying:
            return
        child_update = schema_ext.child_update(raw)
        if child_update is not None:
            self._child_update("", child_update)
            return
        update = schema_ext.newer_update(raw)
        match update:
            case schema_ext.Notice():
                self._transcript.agent_notice(update.severity, update.title, update.description)
            case schema_ext.CompactionUpdate() | schema_ext.CompactionChunk() if self._compaction_shown(update):
                if isinstance(update, schema_ext.CompactionUpdate):
                    self._transcript.compaction(update.compaction_id, update.status, update.summary, update.error)
                else:
                    self._transcript.compaction_chunk(update.compaction_id, update.text)
            case None:
                self._unknown(raw)

    def _compaction_shown(self, update: schema_ext.CompactionUpdate | schema_ext.CompactionChunk) -> bool:
        """A compaction of a held replay is not shown, nor a new one after a cancel (late output)."""
        if self.held:
            return False
        turn = self._queue.turn
        if self._queue.cancelling and turn is not None and update.compaction_id not in self._transcript.compactions:
            turn.dropped += 1
            return False
        return True

    def _unknown(self, raw: Mapping[str, object]) -> None:
        """The whole update goes in the log; the chat says its kind and keys once per kind (a known newer
        kind whose shape does not hold is said to be malformed)."""
        kind, keys = schema_ext.unknown_update(raw)
        malformed = kind in schema_ext.NEWER_KINDS or kind in schema_ext.CHILD_KINDS
        what = "a malformed" if malformed else "an unknown"
        self._log.add("warn", "wire", f"{what} session update {kind!r}: not shown", direction="in",
                      raw=json.dumps(raw, ensure_ascii=False, default=str))
        if kind in self._unknown_kinds or len(self._unknown_kinds) > UNKNOWN_TOLD:
            return
        self._unknown_kinds.add(kind)
        if len(self._unknown_kinds) > UNKNOWN_TOLD:
            self._transcript.notice(f"the agent sent more than {UNKNOWN_TOLD} kinds of update acp.nvim does not "
                                    "know: further ones are only in :Ai log", "info")
            return
        listed = ", ".join(keys) if keys else "no other keys"
        self._transcript.notice(f"the agent sent {what} update {kind!r} ({listed}); not shown, the whole "
                                f"update is in :Ai log", "info")

    # -- subagents as child sessions (children.py) ------------------------------------------

    def child(self, session_id: str, kind: str, payload: object, extra: object) -> bool:
        """An update a child session sent (as ``Streamed``: a text chunk, a model, or ``NEWER`` JSON): it
        goes to the call that stands for the child. False: no child has that session id."""
        child = self.children.get(session_id)
        if child is None:
            return False
        if self.replaying or self.held:
            return True
        turn = self._queue.turn
        if self._queue.cancelling and turn is not None:
            turn.dropped += 1
            return True
        running = self._transcript.tools.running_subagents()
        if kind == "agent_message_chunk":
            self._transcript.tools.subagent_said(child.call_id, cast(str, payload))
        elif kind == NEWER:
            raw = cast("Mapping[str, object]", payload)
            update = schema_ext.child_update(raw)
            if update is not None:
                self._child_update(session_id, update)
            else:
                self._log.add("debug", "wire", f"a child session's {schema_ext.unknown_update(raw)[0]!r}: not shown")
        elif not kind:
            self._child_piece(child, cast(SessionUpdate, payload), cast("Mapping[str, object] | None", extra))
        if self._transcript.tools.running_subagents() != running:
            self._changed()
        return True

    def child_request(self, session_id: str, call_id: str) -> Child | None:
        """A child asks about its call ``call_id`` (a permission request): the call goes under the child
        even when the request comes before the call's first update. None: no such child."""
        child = self.children.get(session_id)
        if child is not None and call_id not in self._transcript.tool_calls:
            self._transcript.tools.adopt(call_id, child.call_id)
        return child

    def _child_piece(self, child: Child, update: SessionUpdate, raw: Mapping[str, object] | None) -> None:
        match update:
            case ToolCallStart() | ToolCallProgress():
                meta = update.field_meta
                state = self._transcript.tools.tool_call(update, schema_ext.tool_name(raw), child.call_id,
                                                         schema_ext.runs_subagent(meta))
                for observer in self._on_tool_call:
                    observer(state)
            case AgentMessageChunk():
                self._transcript.tools.subagent_said(child.call_id, content_text(update.content))
            case _:
                self._log.add("debug", "notification", f"a child session's {type(update).__name__}: not shown")

    def _child_update(self, on_session: str, update: schema_ext.SubagentUpdate | schema_ext.SessionMessage) -> None:
        """A ``subagent_update`` or ``session_message`` sent on ``on_session`` ("": this session)."""
        if isinstance(update, schema_ext.SessionMessage):
            self._session_message(update)
            return
        known = self.children.get(update.session_id) is not None
        child = self.children.patch(on_session, update)
        if child is None:
            self._log.add("warn", "wire", f"ignored a subagent_update for {update.session_id!r:.80} "
                          "(another parent's child, the session itself, or too many children)")
            return
        running = self._transcript.tools.running_subagents()
        parent = self.children.get(on_session)
        self._transcript.tools.child_call(child.call_id, child.headline_title(), child.status,
                                          parent.call_id if parent is not None else child.parent_call, new=not known)
        if self._transcript.tools.running_subagents() != running or not known:
            self._changed()

    def _session_message(self, message: schema_ext.SessionMessage) -> None:
        """A parent's prompt to its child names the call that launched it; a child's report to its parent
        is what the child said."""
        to_child = self.children.get(message.recipient or "")
        from_child = self.children.get(message.sender or "")
        if to_child is not None and from_child is None:
            if to_child.parent_call is None and message.message_id in self._transcript.tool_calls:
                to_child.parent_call = message.message_id
            return
        if from_child is not None and to_child is None and message.text:
            said = self._transcript.tool_calls.get(from_child.call_id)
            apart = "\n" if said is not None and said.said and not said.said.endswith("\n") else ""
            self._transcript.tools.subagent_said(from_child.call_id, apart + message.text)

    def _status(self, update: object) -> None:
        match update:
            case AvailableCommandsUpdate():
                self._details.set_commands(update.available_commands)
            case CurrentModeUpdate():
                self._details.mode = update.current_mode_id
                self._transcript.notice(f"mode: {update.current_mode_id}", "info")
                self._on_mode(update.current_mode_id)
            case SessionInfoUpdate():
                if "title" not in update.model_fields_set:
                    return  # only updatedAt: the title stays
                # null clears it; "" (not None) says the agent cleared it, so no older title comes back
                self._details.title = update.title or ""
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
        if not isinstance(update, UserMessageChunk) and is_media(update.content) \
                and schema_ext.parent_tool_call(update.field_meta) is None:
            self._transcript.media_item(self._transcript.media.received(update.content))
            return
        text = content_text(update.content)
        parent = schema_ext.parent_tool_call(update.field_meta)
        running = self._transcript.tools.running_subagents()
        if parent is not None and not isinstance(update, UserMessageChunk) \
                and self._transcript.tools.subagent_said(parent, text if isinstance(update, AgentMessageChunk) else ""):
            if self._transcript.tools.running_subagents() != running:
                self._changed()
            return  # a subagent's text: kept with the call that runs it, not mixed into the answer
        message_id = update.message_id
        if isinstance(update, AgentMessageChunk):
            self._transcript.agent_chunk(text, message_id)
        elif isinstance(update, AgentThoughtChunk):
            self._transcript.thought_chunk(text, message_id)
        else:
            self._transcript.user_chunk(text, message_id)

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
