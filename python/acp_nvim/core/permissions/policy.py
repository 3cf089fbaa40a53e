"""Permission policy: options chosen by kind (never by id), per-session modes, automatic answers."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..port import PermissionChoice
from .rules import PATH_KINDS, Rule

POLICIES = ("ask", "auto-edit", "trust")
FOCUS = ("idle", "never")
"""When a prompt, review or question enters its window: as soon as the user is idle in normal mode, or never."""
ALLOW_ONCE_FIRST = ("allow_once", "allow_always")
ALLOW_ALWAYS_FIRST = ("allow_always", "allow_once")
REJECT_ONCE_FIRST = ("reject_once", "reject_always")
ALWAYS_KINDS = ("allow_always", "reject_always")


class RejectedSettings(BaseModel):
    """``permissions.rejected``: how many kept copies of rejected proposals, how old, how large in all."""

    model_config = ConfigDict(extra="forbid")

    max_files: int = Field(default=200, ge=0, description="Copies kept at most; 0: no bound.")
    max_age_days: float = Field(default=30, ge=0, description="Older copies are removed; 0: no bound.")
    max_bytes: int = Field(default=50 * 1024 * 1024, ge=0, json_schema_extra={"unit": "bytes"},
                           description="All copies together; the oldest go first; 0: no bound.")


class PermissionSettings(BaseModel):
    """``permissions`` in ``setup()``: the default policy of new sessions, what closing a review means,
    how prompts guard against stray keys (used in Lua, checked here too) and the rejected copies kept."""

    model_config = ConfigDict(extra="forbid")

    policy: str = Field(default="ask", json_schema_extra={"choices": list(POLICIES)}, description=(
        "The policy new sessions start with: ask before every edit and command, apply edits unasked "
        "(auto-edit), or ask nothing (trust) (|acp_nvim-policy|)."))
    close_is_reject: bool = Field(default=True, description=(
        "Closing a review view rejects it; false hides it, still pending."))
    focus: str = Field(default="idle", json_schema_extra={"choices": list(FOCUS)}, description=(
        "When a prompt, review or question enters its window: idle, as soon as you are in normal mode and "
        "not typing, however long after it came; never, go to it with :Ai permissions or keymaps.permissions "
        "(|acp_nvim-focus|)."))
    arm_ms: int = Field(default=500, ge=0, le=10_000, description=(
        "A prompt's keys count only once it has been visible this long (milliseconds) ..."))
    quiet_ms: int = Field(default=300, ge=0, le=10_000, description=(
        "... and no key was typed this long (milliseconds) before the one that answers."))
    rejected: RejectedSettings = Field(default_factory=RejectedSettings, description=(
        "Copies of rejected proposals kept in stdpath('state')/acp_nvim/rejected "
        "(|acp_nvim-rejected-copies|)."))

    @field_validator("focus")
    @classmethod
    def _known_focus(cls, value: str) -> str:
        if value not in FOCUS:
            raise ValueError(f"expected one of {', '.join(FOCUS)}")
        return value

    @field_validator("policy")
    @classmethod
    def _known_policy(cls, value: str) -> str:
        return check_policy(value)


def check_policy(value: str) -> str:
    """Return ``value`` if it names a policy, else raise ValueError listing them."""
    if value not in POLICIES:
        raise ValueError(f"unknown policy {value!r}: expected one of {', '.join(POLICIES)}")
    return value


@dataclass(frozen=True, slots=True)
class AutoAnswer:
    """An answer given without asking, and why (written in the transcript)."""

    choice: PermissionChoice
    reason: str

    @property
    def allowed(self) -> bool:
        return self.choice.kind.startswith("allow")


def pick(choices: Iterable[PermissionChoice], kinds: Sequence[str]) -> PermissionChoice | None:
    """The first offered option whose kind comes first in ``kinds``."""
    offered = list(choices)
    for kind in kinds:
        for choice in offered:
            if choice.kind == kind:
                return choice
    return None


def decide(choices: Sequence[PermissionChoice], kind: str, policy: str, rule: Rule | None,
           edits_inside_workspace: bool) -> AutoAnswer | None:
    """The automatic answer for a request, or None when the user must be asked.

    A remembered rule wins over the policy (a reject rule even in ``trust``); an allow rule for
    paths holds only inside the workspace; ``auto-edit`` accepts only edits whose every file lies
    inside the workspace.
    """
    if rule is not None and rule.decision == "allow" and rule.kind in PATH_KINDS and not edits_inside_workspace:
        rule = None  # outside the workspace the user is always asked
    if rule is not None:
        choice = pick(choices, ALLOW_ONCE_FIRST if rule.decision == "allow" else REJECT_ONCE_FIRST)
        if choice is not None:
            return AutoAnswer(choice, f"rule: {rule.describe()}")
    if policy == "trust":
        choice = pick(choices, ALLOW_ALWAYS_FIRST)
        return AutoAnswer(choice, "policy trust") if choice else None
    if policy == "auto-edit" and kind == "edit" and edits_inside_workspace:
        choice = pick(choices, ALLOW_ONCE_FIRST)
        return AutoAnswer(choice, "policy auto-edit: an edit inside the workspace") if choice else None
    return None
