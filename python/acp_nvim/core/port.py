"""The port through which the core talks to an editor. Neovim implements it; tests may fake it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class PermissionChoice:
    """One option offered to the user, as the agent named it."""

    option_id: str
    name: str
    kind: str


@dataclass(frozen=True, slots=True, eq=False)
class PermissionQuestion:
    """What the user is asked: a tool call and the agent's options."""

    session_key: str
    title: str
    kind: str
    detail: str
    choices: tuple[PermissionChoice, ...]
    tool_call: Any = None


class EditorPort(Protocol):
    """What the core needs from the editor. Every method is safe to call from the event loop."""

    async def buffer_text(self, path: str) -> str | None:
        """The text of the loaded buffer for ``path`` (unsaved edits included), or None."""

    async def write_buffer(self, path: str, content: str) -> bool:
        """Write ``content`` through the loaded buffer of ``path`` and save it; False if not loaded."""

    async def ask_permission(self, question: PermissionQuestion) -> str | None:
        """Ask the user; the chosen option id, or None when dismissed."""

    async def choose(self, prompt: str, items: list[str]) -> int | None:
        """Let the user pick one of ``items`` (a picker); its index, or None when dismissed."""

    def dismiss_permission(self, question: PermissionQuestion) -> None:
        """Close the prompt for ``question`` (the turn was cancelled)."""

    def render(self, session_key: str, ops: list[list[Any]]) -> None:
        """Apply transcript render operations to the session's chat view (fire-and-forget)."""

    def session_changed(self, session_key: str) -> None:
        """Session state (running, mode, usage, ...) changed: refresh status displays."""

    def notify(self, message: str, level: str = "info") -> None:
        """Tell the user something (prefixed by the editor layer)."""
