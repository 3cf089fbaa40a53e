"""Tool calls arrive in pieces (a bare ``tool_call``, then updates): merge them into one state."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

STATUS_ICONS = {"pending": "○", "in_progress": "◐", "completed": "●", "failed": "✗"}
MAX_TEXT_LINES = 12


@dataclass(slots=True)
class DiffContent:
    path: str
    old_text: str | None
    new_text: str


@dataclass(slots=True)
class ToolCallState:
    """Everything known so far about one tool call."""

    tool_call_id: str
    title: str = "tool"
    kind: str = "other"
    status: str = "pending"
    raw_input: Any = None
    raw_output: Any = None
    content: list[Any] = field(default_factory=list)
    locations: list[tuple[str, int | None]] = field(default_factory=list)

    def merge(self, update: Any) -> None:
        """Fold a ``ToolCallStart``/``ToolCallProgress``/``ToolCallUpdate`` into this state."""
        for attr in ("title", "kind", "status"):
            value = getattr(update, attr, None)
            if value is not None:
                setattr(self, attr, getattr(value, "value", value))
        if getattr(update, "raw_input", None) not in (None, {}):
            self.raw_input = update.raw_input
        if getattr(update, "raw_output", None) is not None:
            self.raw_output = update.raw_output
        if getattr(update, "content", None) is not None:
            self.content = list(update.content)
        if getattr(update, "locations", None) is not None:
            self.locations = [(loc.path, loc.line) for loc in update.locations]

    def diffs(self) -> list[DiffContent]:
        """The ``diff`` content blocks, in order."""
        return [DiffContent(c.path, c.old_text, c.new_text) for c in self.content if _type(c) == "diff"]

    def render(self) -> str:
        """The chat block for this tool call."""
        icon = STATUS_ICONS.get(self.status, "?")
        lines = [f"{icon} {self.kind} · {self.title} · {self.status}"]
        command = _command(self.raw_input)
        if command:
            lines.append(f"  $ {command}")
        for item in self.content:
            lines.extend(_render_content(item))
        for path, line in self.locations:
            lines.append(f"  → {path}{f':{line}' if line else ''}")
        return "\n".join(lines)


def _type(content: Any) -> str:
    return getattr(content, "type", "")


def _render_content(item: Any) -> list[str]:
    kind = _type(item)
    if kind == "diff":
        old = (item.old_text or "").splitlines()
        new = item.new_text.splitlines()
        label = "new file" if item.old_text is None else f"{len(old)} → {len(new)} lines"
        return [f"  ± {item.path} ({label})"]
    if kind == "terminal":
        return [f"  ▸ terminal {item.terminal_id}"]
    block = getattr(item, "content", None)
    text = getattr(block, "text", None)
    if text is None:
        return [f"  [{getattr(block, 'type', kind)} content]"]
    return _clip(text)


def _clip(text: str) -> list[str]:
    lines = text.split("\n")
    shown = ["  │ " + line for line in lines[:MAX_TEXT_LINES]]
    if len(lines) > MAX_TEXT_LINES:
        shown.append(f"  │ … {len(lines) - MAX_TEXT_LINES} more lines (see :Ai log)")
    return shown


def _command(raw_input: Any) -> str | None:
    if isinstance(raw_input, dict):
        for key in ("command", "cmd"):
            value = raw_input.get(key)
            if isinstance(value, list):
                return " ".join(str(v) for v in value)
            if isinstance(value, str):
                return value
    return None


def describe_input(raw_input: Any) -> str:
    """A short printable form of a tool call's raw input (permission prompts)."""
    command = _command(raw_input)
    if command:
        return command
    if raw_input in (None, {}):
        return ""
    text = json.dumps(raw_input, ensure_ascii=False)
    return text if len(text) <= 200 else text[:197] + "…"
