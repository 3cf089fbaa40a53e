"""The answers a permission request gets, and what its prompt shows."""

from __future__ import annotations

import json

from acp.schema import AllowedOutcome, DeniedOutcome, PermissionOption, RequestPermissionResponse

from ..port import PermissionChoice, PermissionQuestion
from ..transcript.tool_calls import ToolCallState
from .command import from_input
from .rules import RuleOffer

DETAIL_LINES = 20


def question_for(session_key: str, state: ToolCallState, options: list[PermissionOption],
                 offers: dict[str, RuleOffer] | None = None) -> PermissionQuestion:
    """The question the user is asked about a tool call and the agent's options.

    ``offers`` holds, per "always" kind, the rule that answer would store (or why none).
    """
    choices = tuple(PermissionChoice(o.option_id, o.name, o.kind) for o in options)
    offered = {c.kind for c in choices}
    rules, reasons = {}, []
    for kind, offer in (offers or {}).items():
        if kind not in offered:
            continue
        if offer.rule is not None:
            rules[kind] = offer.rule.describe()
        elif offer.reason:
            reasons.append(offer.reason)
    return PermissionQuestion(session_key=session_key, title=state.title, kind=state.kind,
                              detail=describe_request(state), choices=choices, rules=rules,
                              no_rule=reasons[0] if reasons else "")


def describe_request(state: ToolCallState) -> str:
    """What the prompt shows: the command, or the raw input as indented JSON, and the locations."""
    command = from_input(state.raw_input)
    if command is not None:
        first, *more = command.shown.splitlines() or [""]
        lines = [f"$ {first}", *(f"  {line}" for line in more)]
    elif state.raw_input not in (None, {}):
        lines = json.dumps(state.raw_input, indent=2, ensure_ascii=False, default=str).split("\n")
    else:
        lines = []
    if len(lines) > DETAIL_LINES:
        lines = [*lines[:DETAIL_LINES], f"… {len(lines) - DETAIL_LINES} more lines"]
    lines += [f"→ {path}{f':{line}' if line else ''}" for path, line in state.locations]
    return "\n".join(lines)


def selected(choice: PermissionChoice) -> RequestPermissionResponse:
    return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=choice.option_id))


def selected_or_cancelled(choice: PermissionChoice | None) -> RequestPermissionResponse:
    return selected(choice) if choice is not None else cancelled()


def cancelled() -> RequestPermissionResponse:
    return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
