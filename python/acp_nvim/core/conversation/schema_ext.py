"""Wire shapes newer than the pinned SDK (0.12.x, schema 1.19), decoded by hand in one place.

Each shape has its own section and functions, and a unit test (``tests/unit/test_schema_ext_*.py``).
A decoder takes the JSON as it came (``Mapping[str, object]`` or anything) and returns a typed
value, or None when the shape does not hold: the caller says why to the agent or the log.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

# -- $/cancel_request (stable June 2026): {"requestId": <id>, "_meta"?} -------------------------

CANCEL_REQUEST = "$/cancel_request"


def cancel_request_id(params: object) -> int | str | None:
    """The id of the request a ``$/cancel_request`` withdraws (None: no valid ``requestId``).

    JSON-RPC ids are strings or integers (a number with a fraction, or a bool, is no id).
    """
    if not isinstance(params, Mapping):
        return None
    request_id = params.get("requestId")
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
        return None
    return request_id


def cancel_request(request_id: int | str) -> dict[str, object]:
    """The params of a ``$/cancel_request`` we send for our own abandoned request."""
    return {"requestId": request_id}


# -- steering (``_session/steering``, advertised in ``initialize``'s ``_meta.steering``) --------

STEER_METHOD = "session/steering"
"""The extension method without its ``_``: the SDK's ``ext_method`` adds it (``_session/steering``)."""
STEER_OUTCOMES = ("injected", "startedNewTurn", "promptRequired", "failed")
STEER_DELIVERED = ("injected", "startedNewTurn")
"""Outcomes after which the agent has the message: the queue lets it go."""


@dataclass(frozen=True, slots=True)
class SteerOutcome:
    """The agent's answer to a steering request: one of ``STEER_OUTCOMES`` and why, when it says."""

    outcome: str
    reason: str = ""

    @property
    def delivered(self) -> bool:
        return self.outcome in STEER_DELIVERED


def steering_supported(meta: Mapping[str, object] | None) -> bool:
    """``initialize`` result ``_meta.steering.supported`` is ``true`` (exactly a boolean true)."""
    steering = meta.get("steering") if isinstance(meta, Mapping) else None
    return isinstance(steering, Mapping) and steering.get("supported") is True


def steer_params(session_id: str, prompt: Sequence[Mapping[str, object]]) -> dict[str, object]:
    """The request: the prompt's content blocks, and ``idleBehavior: promptRequired`` so that an agent
    whose turn already ended hands the message back instead of starting a turn of its own."""
    return {"sessionId": session_id, "prompt": list(prompt),
            "_meta": {"steering": {"idleBehavior": "promptRequired"}}}


def steer_outcome(result: object) -> SteerOutcome:
    """Decode the response; anything but a known outcome is ``failed``, with what was wrong."""
    if not isinstance(result, Mapping):
        return SteerOutcome("failed", "the agent's answer is not an object")
    outcome = result.get("outcome")
    reason = _text(result.get("reason")) or _text(result.get("message"))
    if outcome not in STEER_OUTCOMES:
        return SteerOutcome("failed", f"unknown outcome {str(outcome)[:40]!r}")
    return SteerOutcome(str(outcome), reason)


# -- typed failures (``_meta.jetbrains.air.sessionFailure``) ------------------------------------


@dataclass(frozen=True, slots=True)
class SessionFailure:
    """An agent's own failure report (claude-agent-acp and codex-acp send it to AIR-capable clients,
    on the prompt's response ``_meta`` or in a session update)."""

    category: str
    """``limit``, ``access``, ``connection``, ``service``, ``request`` or ``unknown``."""
    title: str
    actions: tuple[str, ...] = ()
    """``retry``, ``login``, ``new_session``."""
    details: str = ""
    reason: str = ""


def session_failure(meta: object) -> SessionFailure | None:
    """``_meta.jetbrains.air.sessionFailure`` of a response or update, when well formed."""
    jetbrains = meta.get("jetbrains") if isinstance(meta, Mapping) else None
    air = jetbrains.get("air") if isinstance(jetbrains, Mapping) else None
    failure = air.get("sessionFailure") if isinstance(air, Mapping) else None
    if not isinstance(failure, Mapping):
        return None
    category, title = _text(failure.get("category")), _text(failure.get("title"))
    if not category:
        return None
    actions = failure.get("actions")
    listed = tuple(a for a in actions if isinstance(a, str)) if isinstance(actions, list) else ()
    return SessionFailure(category, title, listed, _text(failure.get("details")), _text(failure.get("reason")))


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


# -- updates newer than the SDK's models (they reach the session as JSON: ``inbound.NEWER``) -----

MAX_TITLE = 500
"""Characters kept of an agent's one-line text (a notice's title, a tool's name)."""


@dataclass(frozen=True, slots=True)
class Notice:
    """``{"sessionUpdate": "notice", "severity", "title", "description"?}`` (ACP session notices): a
    live event for the user, not part of the conversation. claude-agent-acp sends them (hook feedback,
    model fallbacks, MCP servers that failed) once the client advertises ``session.notices``."""

    severity: str
    """``info``, ``warning`` or ``error``; any other word the agent uses is kept (and shown as info)."""
    title: str
    description: str = ""


@dataclass(frozen=True, slots=True)
class CompactionUpdate:
    """``{"sessionUpdate": "compaction_update", "compactionId", "status", "summary"?, "error"?}``: an upsert
    of one context compaction. ``summary`` and ``error`` patch: None leaves the value as it was, ``""``
    clears it (the wire's ``null``, or ``summary: []``), a text replaces it."""

    compaction_id: str
    status: str
    """``in_progress``, ``completed``, ``failed``, ``cancelled`` (or a newer word, kept)."""
    summary: str | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class CompactionChunk:
    """``{"sessionUpdate": "compaction_summary_chunk", "compactionId", "content"}``: one content block
    appended to a compaction's summary (a first-seen id starts an in-progress compaction)."""

    compaction_id: str
    text: str


Newer = Notice | CompactionUpdate | CompactionChunk
NEWER_KINDS = ("notice", "compaction_update", "compaction_summary_chunk")
"""The update kinds newer than the SDK that acp.nvim decodes; any other unknown kind is shown as unknown."""


def newer_update(update: Mapping[str, object]) -> Newer | None:
    """Decode an update of one of ``NEWER_KINDS`` (None: another kind, or the shape does not hold)."""
    kind = update.get("sessionUpdate")
    if kind == "notice":
        return _notice(update)
    if kind == "compaction_update":
        return _compaction_update(update)
    if kind == "compaction_summary_chunk":
        return _compaction_chunk(update)
    return None


def _notice(update: Mapping[str, object]) -> Notice | None:
    severity, title, description = update.get("severity"), update.get("title"), update.get("description")
    if not isinstance(severity, str) or not isinstance(title, str) or not title.strip():
        return None
    if description is not None and not isinstance(description, str):
        return None
    return Notice(severity[:40], title[:MAX_TITLE], description or "")


def _compaction_update(update: Mapping[str, object]) -> CompactionUpdate | None:
    compaction_id, status = update.get("compactionId"), update.get("status")
    if not isinstance(compaction_id, str) or not compaction_id or not isinstance(status, str) or not status:
        return None
    summary: str | None = None
    if "summary" in update:
        blocks = update["summary"]
        if blocks is not None and not isinstance(blocks, list):
            return None
        summary = "".join(content_text(block) for block in blocks or [])
    error: str | None = None
    if "error" in update:
        value = update["error"]
        if value is not None and not isinstance(value, str):
            return None
        error = value or ""
    return CompactionUpdate(compaction_id, status[:40], summary, error)


def _compaction_chunk(update: Mapping[str, object]) -> CompactionChunk | None:
    compaction_id, content = update.get("compactionId"), update.get("content")
    if not isinstance(compaction_id, str) or not compaction_id or not isinstance(content, Mapping):
        return None
    return CompactionChunk(compaction_id, content_text(content))


def content_text(block: object) -> str:
    """The text of a content block as JSON; other kinds as ``[type uri]`` (``[?]``: not a block)."""
    if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
        return "[?]"
    if block["type"] == "text" and isinstance(block.get("text"), str):
        return str(block["text"])
    uri = block.get("uri")
    return f"[{block['type']}{f' {uri}' if isinstance(uri, str) else ''}]"


def unknown_update(update: Mapping[str, object]) -> tuple[str, list[str]]:
    """What the chat says of an update of a kind acp.nvim does not know: its kind and its keys."""
    kind = update.get("sessionUpdate")
    keys = sorted(str(key)[:40] for key in update if key != "sessionUpdate")
    return str(kind)[:80], keys[:12]


# -- tool calls: ``name`` (newer than schema 1.19) and subagents (agents' ``_meta``) ---------

SUBAGENT_TOOLS = ("Task", "Agent")
"""claude-agent-acp's tools that run a subagent (``_meta.claudeCode.toolName``)."""


def tool_name(update: Mapping[str, object] | None) -> str | None:
    """``ToolCall.name``: the programmatic name of the tool beside its human title (claude-agent-acp
    sends it on ``tool_call``: ``Read``, ``Bash``, ``mcp__nvim__diagnostics``)."""
    name = update.get("name") if isinstance(update, Mapping) else None
    return name[:MAX_TITLE] if isinstance(name, str) and name.strip() else None


def parent_tool_call(meta: object) -> str | None:
    """The tool call a subagent's update belongs to: ``_meta.claudeCode.parentToolUseId`` (claude-agent-acp
    stamps it on the tool calls and the text of the subagent that a Task/Agent tool call runs)."""
    claude = meta.get("claudeCode") if isinstance(meta, Mapping) else None
    parent = claude.get("parentToolUseId") if isinstance(claude, Mapping) else None
    return parent if isinstance(parent, str) and parent else None


def runs_subagent(meta: object) -> bool:
    """Whether a tool call runs a subagent: claude-agent-acp's ``_meta.claudeCode.toolName`` ``Task`` or
    ``Agent``, or the AIR mark ``_meta.jetbrains.air.subagent: true`` (codex-acp, claude-agent-acp)."""
    if not isinstance(meta, Mapping):
        return False
    claude = meta.get("claudeCode")
    if isinstance(claude, Mapping) and claude.get("toolName") in SUBAGENT_TOOLS:
        return True
    jetbrains = meta.get("jetbrains")
    air = jetbrains.get("air") if isinstance(jetbrains, Mapping) else None
    return isinstance(air, Mapping) and air.get("subagent") is True


# -- usage limits: ``usage_update._meta["_claude/rateLimit"]`` and the quotas draft's ``limits`` --------
# claude-agent-acp (0.101) puts the Claude SDK's ``SDKRateLimitInfo`` under ``_meta``, one window per
# update: ``status`` (allowed, allowed_warning, rejected), ``resetsAt`` (epoch seconds),
# ``rateLimitType`` (five_hour, seven_day, …), ``utilization`` (a 0–1 fraction, left out while
# allowed). The quotas draft (the session-usage RFD's follow-up) carries a list of windows on the
# update itself: ``limits: [{id, label?, usedPercent (0–100), resetsAt (RFC 3339 or epoch
# seconds), status? ("ok", "warning", "exceeded")}]``. The SDK's model drops that field: it is
# read from the update's JSON.

CLAUDE_RATE_LIMIT = "_claude/rateLimit"
LIMIT_OK, LIMIT_WARNING, LIMIT_REACHED = "ok", "warning", "reached"
_CLAUDE_STATUS = {"allowed": LIMIT_OK, "allowed_warning": LIMIT_WARNING, "rejected": LIMIT_REACHED}
_DRAFT_STATUS = {"ok": LIMIT_OK, "warning": LIMIT_WARNING, "exceeded": LIMIT_REACHED}
_WINDOW_NAMES = {"five_hour": "5h", "seven_day": "7d", "seven_day_opus": "7d opus",
                 "seven_day_sonnet": "7d sonnet", "seven_day_overage_included": "7d", "overage": "overage"}
MAX_LIMITS = 16
"""Windows read from one update (more are ignored)."""


@dataclass(frozen=True, slots=True)
class UsageLimit:
    """One usage window the agent reports: its name, status, how much is used, when it resets."""

    window: str
    status: str
    """``LIMIT_OK``, ``LIMIT_WARNING`` or ``LIMIT_REACHED``."""
    used: float | None = None
    """The fraction used, 0–1 (None: not said)."""
    resets_at: float | None = None
    """Epoch seconds (None: not said)."""


def usage_limits(update: object) -> list[UsageLimit]:
    """The usage windows a ``usage_update`` (its JSON) reports, in both shapes; [] when none holds."""
    if not isinstance(update, Mapping):
        return []
    found: list[UsageLimit] = []
    meta = update.get("_meta")
    claude = meta.get(CLAUDE_RATE_LIMIT) if isinstance(meta, Mapping) else None
    if isinstance(claude, Mapping):
        limit = _claude_limit(claude)
        if limit is not None:
            found.append(limit)
    draft = update.get("limits")
    for item in draft[:MAX_LIMITS] if isinstance(draft, list) else []:
        limit = _draft_limit(item)
        if limit is not None:
            found.append(limit)
    return found


def _claude_limit(info: Mapping[str, object]) -> UsageLimit | None:
    status = _CLAUDE_STATUS.get(str(info.get("status")))
    if status is None:
        return None
    kind = info.get("rateLimitType")
    window = _WINDOW_NAMES.get(kind, kind) if isinstance(kind, str) and kind else "rate"
    return UsageLimit(str(window)[:40], status, _fraction(info.get("utilization")), _epoch(info.get("resetsAt")))


def _draft_limit(item: object) -> UsageLimit | None:
    if not isinstance(item, Mapping):
        return None
    name = item.get("label") or item.get("id")
    if not isinstance(name, str) or not name:
        return None
    percent = _number(item.get("usedPercent"))
    used = _fraction(percent / 100) if percent is not None else None
    status = _DRAFT_STATUS.get(str(item.get("status")))
    if status is None:
        status = LIMIT_REACHED if used is not None and used >= 1 else LIMIT_OK
    return UsageLimit(_WINDOW_NAMES.get(name, name)[:40], status, used, _epoch(item.get("resetsAt")))


def _number(value: object) -> float | None:
    """A JSON number as a float (None: not a number; a bool, NaN or infinity is none)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _fraction(value: object) -> float | None:
    """A 0–1 fraction (a value over 1 is read as a percentage), clamped; None when not a number."""
    number = _number(value)
    if number is None:
        return None
    if number > 1:
        number /= 100
    return min(max(number, 0.0), 1.0)


def _epoch(value: object) -> float | None:
    """Epoch seconds from seconds, milliseconds (a number past the year 33658) or RFC 3339 text."""
    number = _number(value)
    if number is not None:
        if number <= 0:
            return None
        return number / 1000 if number > 1e12 else number
    if isinstance(value, str) and value:
        try:
            stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=UTC)
        return stamp.timestamp()
    return None
# -- subagents as child sessions (the subagents RFD, unstable: ``clientCapabilities.subagents``) --


@dataclass(frozen=True, slots=True)
class ChildState:
    """A child's work state (``StateUpdate``): ``running``, ``idle``, ``requires_action``, ``unknown``, or an
    agent's own word (kept). ``stop_reason`` and ``error`` come with ``idle`` (why its work ended)."""

    state: str
    stop_reason: str = ""
    error: str = ""


@dataclass(frozen=True, slots=True)
class SubagentUpdate:
    """``{"sessionUpdate": "subagent_update", "sessionId", "title"?, "description"?, "capabilities"?, "state"?}``,
    sent on the parent session: the first one for an unknown ``sessionId`` announces the child. A patch:
    None leaves a field as it was, ``""`` (the wire's ``null``) clears a text; ``cancel`` is whether the
    client may cancel the child's work (``capabilities.cancel`` an object), None when not sent;
    ``state`` None leaves the state, ``cleared_state`` says the wire cleared it."""

    session_id: str
    title: str | None = None
    description: str | None = None
    cancel: bool | None = None
    state: ChildState | None = None
    cleared_state: bool = False


@dataclass(frozen=True, slots=True)
class SessionMessage:
    """``{"sessionUpdate": "session_message", "messageId", "senderSessionId"?, "recipientSessionId"?,
    "content"?}``: a message between two sessions (a parent's prompt to its child, the child's report).
    claude-agent-acp uses the id of the Agent/Task call that carried it as ``messageId``."""

    message_id: str
    sender: str | None
    recipient: str | None
    text: str | None
    """None: the content is unchanged (an upsert without it)."""


CHILD_KINDS = ("subagent_update", "session_message")
"""The child-session kinds acp.nvim decodes (a malformed one is shown as malformed)."""


def child_update(update: Mapping[str, object]) -> SubagentUpdate | SessionMessage | None:
    """Decode an update of one of ``CHILD_KINDS`` (None: another kind, or the shape does not hold)."""
    kind = update.get("sessionUpdate")
    if kind == "subagent_update":
        return _subagent_update(update)
    if kind == "session_message":
        return _session_message(update)
    return None


def _patched_text(update: Mapping[str, object], key: str) -> str | bool | None:
    """A patch field: None (absent), ``""`` (null: cleared), the text, or False (malformed)."""
    if key not in update:
        return None
    value = update[key]
    if value is None:
        return ""
    return value[:MAX_TITLE] if isinstance(value, str) else False


def _subagent_update(update: Mapping[str, object]) -> SubagentUpdate | None:
    session_id = update.get("sessionId")
    if not isinstance(session_id, str) or not session_id:
        return None
    title, description = _patched_text(update, "title"), _patched_text(update, "description")
    if title is False or description is False:
        return None
    cancel: bool | None = None
    if "capabilities" in update:
        capabilities = update["capabilities"]
        if capabilities is not None and not isinstance(capabilities, Mapping):
            return None
        cancel = isinstance(capabilities, Mapping) and isinstance(capabilities.get("cancel"), Mapping)
    state, cleared = None, False
    if "state" in update:
        raw = update["state"]
        if raw is None:
            cleared = True
        else:
            state = _child_state(raw)
            if state is None:
                return None
    return SubagentUpdate(session_id, title if isinstance(title, str) else None,
                          description if isinstance(description, str) else None, cancel, state, cleared)


def _child_state(raw: object) -> ChildState | None:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("state"), str) or not raw["state"]:
        return None
    error = raw.get("error")
    message = error.get("message") if isinstance(error, Mapping) else None
    return ChildState(str(raw["state"])[:40], _text(raw.get("stopReason"))[:40], _text(message)[:MAX_TITLE])


def _session_message(update: Mapping[str, object]) -> SessionMessage | None:
    message_id = update.get("messageId")
    if not isinstance(message_id, str) or not message_id:
        return None
    sender, recipient = update.get("senderSessionId"), update.get("recipientSessionId")
    if any(value is not None and not isinstance(value, str) for value in (sender, recipient)):
        return None
    text: str | None = None
    if "content" in update:
        blocks = update["content"]
        if blocks is not None and not isinstance(blocks, list):
            return None
        text = "".join(content_text(block) for block in blocks or [])
    return SessionMessage(message_id, str(sender) if sender else None, str(recipient) if recipient else None, text)


# -- questions that do not block the turn (codex-acp: ``elicitation/create`` ``_meta.codex.delivery``) ----


def keeps_working(meta: object) -> bool:
    """Whether the agent keeps working while the user answers its question: ``_meta.codex.delivery`` is
    ``"async"`` (codex-acp 2.6 asks Codex's async questions so; it steers the answer into the running turn
    itself, and withdraws the question with ``$/cancel_request`` when the turn ends)."""
    codex = meta.get("codex") if isinstance(meta, Mapping) else None
    return isinstance(codex, Mapping) and codex.get("delivery") == "async"
