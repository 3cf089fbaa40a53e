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


@dataclass(frozen=True, slots=True)
class BufferState:
    """A loaded buffer's text as it would be written (line endings, final newline, BOM)."""

    path: str
    text: str
    tick: int
    """``b:changedtick``: any change to the buffer (and each save) increments it."""
    modified: bool


@dataclass(frozen=True, slots=True)
class BufferWrite:
    """Outcome of ``apply_to_buffer``: ``written``, ``not_loaded``, ``conflict`` or ``error``."""

    status: str
    tick: int = 0
    text: str = ""
    """On ``conflict``: the buffer's text (the user's unsaved changes); on ``error``: the reason."""


@dataclass(frozen=True, slots=True)
class ThreeWay:
    """A three-way view: the user's buffer, the agent's text and the base they both come from.

    ``purpose`` is ``write`` (the agent's write waits for the decision) or ``disk`` (the agent
    already wrote the disk; the buffer has unsaved changes).
    """

    path: str
    base: str | None
    agent: str
    purpose: str
    title: str = ""


class EditorPort(Protocol):
    """What the core needs from the editor. Every method is safe to call from the event loop."""

    async def buffer_text(self, path: str) -> str | None:
        """The text of the loaded buffer for ``path`` (unsaved edits included), or None."""

    async def read_buffer(self, path: str) -> BufferState | None:
        """The loaded buffer of ``path`` (unsaved edits included) with its changedtick, or None."""

    async def apply_to_buffer(self, path: str, content: str, expected_tick: int | None,
                              with_before: bool = False) -> BufferWrite:
        """Put ``content`` into the loaded buffer as one undo step and save it.

        Refused (``conflict``) when the buffer has unsaved changes and its changedtick is not
        ``expected_tick`` (the tick the agent last read). ``not_loaded``: no buffer holds it.
        ``with_before``: on ``written``, ``text`` is the buffer's text before the write.
        """

    async def reload_buffer(self, path: str, content: str) -> str:
        """Bring a clean buffer up to date with the disk's ``content``, keeping the view.

        Returns ``reloaded``, ``modified`` (unsaved changes: untouched) or ``not_loaded``.
        """

    async def sync_buffer(self, path: str) -> None:
        """Tell the editor the buffer knows the file on disk as it is now (no reload prompt)."""

    async def loaded_files(self) -> list[tuple[str, bool, int]]:
        """(resolved path, modified, changedtick) of every loaded file buffer."""

    async def three_way(self, request: ThreeWay) -> str:
        """Show the user's text, the agent's and the base; await ``agent``, ``mine`` or ``gone``."""

    async def ask_permission(self, question: PermissionQuestion) -> str | None:
        """Ask the user; the chosen option id, or None when dismissed."""

    async def choose(self, prompt: str, items: list[str]) -> int | None:
        """Let the user pick one of ``items`` (a picker); its index, or None when dismissed."""

    def dismiss_permission(self, question: PermissionQuestion) -> None:
        """Close the prompt or review for ``question`` (the turn was cancelled)."""

    async def review(self, question: PermissionQuestion, review: Any) -> Any:
        """Show a ``core.review.Review`` and wait: a ``ReviewVerdict``, or None when dismissed."""

    async def state_dir(self) -> str:
        """A folder where the plugin may keep files (remembered rules, rejected proposals)."""

    def render(self, session_key: str, ops: list[list[Any]]) -> None:
        """Apply transcript render operations to the session's chat view (fire-and-forget)."""

    def session_changed(self, session_key: str) -> None:
        """Session state (running, mode, usage, ...) changed: refresh status displays."""

    def notify(self, message: str, level: str = "info") -> None:
        """Tell the user something (prefixed by the editor layer)."""
