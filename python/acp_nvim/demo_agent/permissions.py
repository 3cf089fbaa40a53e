"""Permission options offered by the demo agent and interpretation of the outcome."""

from __future__ import annotations

from typing import Literal

from acp.schema import AllowedOutcome, PermissionOption, RequestPermissionResponse

Decision = Literal["allowed", "rejected", "cancelled"]

# optionIds deliberately differ from their kinds so clients must pick options by kind.
PERMISSION_OPTIONS: tuple[PermissionOption, ...] = (
    PermissionOption(option_id="demo-yes", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="demo-always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="demo-no", name="Reject", kind="reject_once"),
    PermissionOption(option_id="demo-never", name="Always reject", kind="reject_always"),
)


def permission_options() -> list[PermissionOption]:
    """Return fresh copies of the four permission options."""
    return [option.model_copy() for option in PERMISSION_OPTIONS]


def decide(response: RequestPermissionResponse) -> Decision:
    """Map a permission response to allowed / rejected / cancelled.

    An unknown optionId counts as a rejection.
    """
    outcome = response.outcome
    if not isinstance(outcome, AllowedOutcome):
        return "cancelled"
    kinds = {option.option_id: option.kind for option in PERMISSION_OPTIONS}
    kind = kinds.get(outcome.option_id, "reject_once")
    return "allowed" if kind.startswith("allow") else "rejected"
