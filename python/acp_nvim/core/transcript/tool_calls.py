"""Tool calls arrive in pieces (a bare ``tool_call``, then updates): merge them into one state.

A subagent's tool calls name the tool call that runs it (their parent); they are drawn folded
under it (``subagent_lines``), with their own status and duration.
"""

from __future__ import annotations

import difflib
import json
import pickle
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from acp.helpers import ToolCallContentVariant
from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)

from ..media.items import NO_CAP, describe
from .paths import WHOLE, PathView

ToolCallPiece = ToolCallStart | ToolCallProgress | ToolCallUpdate
"""A ``tool_call`` or ``tool_call_update`` notification, or the tool call of a permission request."""

STATUS_ICONS = {"pending": "○", "in_progress": "◐", "completed": "●", "failed": "✗", "cancelled": "⊘"}
OPEN_STATUSES = ("pending", "in_progress")
FINAL_STATUSES = ("completed", "failed")
CANCELLED = "cancelled"
"""Not an ACP status: the client's mark on a tool call left open by a cancelled turn."""
MAX_TEXT_LINES = 12
"""Lines of each text content shown in the chat; the rest is one key away (the full text)."""
MAX_DEPTH = 8
"""Subagents of subagents drawn nested, at most this deep (deeper ones are drawn at this depth)."""
MAX_TREE = 500
"""Calls drawn under one call that runs a subagent (its subagents' included); further ones are drawn on
their own: each update of the tree redraws it, so a flood must not make that quadratic."""
MAX_SAID = 64 * 1024
"""Characters kept of what a subagent said (its text, in the parent's full text)."""
CHILD_PREFIX = "subagent:"
"""The id of the call that stands for a child session in the chat (``core/conversation/children.py``)."""
MAX_LAST_LINE = 80
"""Characters of a subagent's last line of text shown on its fold line."""
FOLDED, UNFOLDED = "▸", "▾"
"""The marks of a line <CR> folds and unfolds (lua/acp_nvim/chat/init.lua reads them)."""


@dataclass(slots=True)
class DiffContent:
    path: str
    old_text: str | None
    new_text: str


@dataclass(slots=True)
class _Details:
    """The parts of a tool call that may be large: held compressed once the call is settled."""

    content: list[ToolCallContentVariant]
    raw_input: object
    raw_output: object


@dataclass(slots=True)
class ToolCallState:
    """Everything known so far about one tool call."""

    tool_call_id: str
    title: str = "tool"
    kind: str = "other"
    status: str = "pending"
    locations: list[tuple[str, int | None]] = field(default_factory=list)
    name: str | None = None
    """The tool's programmatic name (``ToolCall.name``), shown beside the title."""
    parent: str | None = None
    """The tool call whose subagent made this one (it is drawn under it)."""
    children: tuple[str, ...] = ()
    """The calls of the subagent this call runs, in order."""
    subagent: bool = False
    """This call runs a subagent (the agent says so, or it has children)."""
    said: str = ""
    """What the subagent said (its text; the last ``MAX_SAID`` characters)."""
    comments: tuple[tuple[str, str], ...] = ()
    """The user's review comments, drawn under the call: (path, what follows the path on the line)."""
    asker: str = ""
    """The subagent that made this call (``subagent “…”``): a question about it says which one asks."""
    started: float = field(default_factory=time.monotonic, repr=False)
    ended: float | None = field(default=None, repr=False)
    _counts: dict[tuple[str, int, int], tuple[int, int]] = field(default_factory=dict, repr=False)
    terminal_view: Callable[[str], list[str] | None] | None = field(default=None, repr=False)
    """The chat lines of an embedded terminal by id (core/terminal), when the session runs terminals."""
    paths: PathView = field(default=WHOLE, repr=False)
    """How the chat block and the prompt's title show paths (the full text keeps them whole)."""
    _details: _Details = field(default_factory=lambda: _Details([], None, None), init=False, repr=False)
    _packed: bytes | None = field(default=None, init=False, repr=False)
    """The details (content with its diffs, input, output) of a settled call, compressed."""
    _terminals: list[str] = field(default_factory=list, init=False, repr=False)

    @property
    def content(self) -> list[ToolCallContentVariant]:
        return self._read().content

    @content.setter
    def content(self, value: list[ToolCallContentVariant]) -> None:
        self._unpack().content = value

    @property
    def raw_input(self) -> object:
        return self._read().raw_input

    @raw_input.setter
    def raw_input(self, value: object) -> None:
        self._unpack().raw_input = value

    @property
    def raw_output(self) -> object:
        return self._read().raw_output

    @raw_output.setter
    def raw_output(self, value: object) -> None:
        self._unpack().raw_output = value

    def settle(self) -> None:
        """Hold the details compressed (a finished call is rarely read again: its block is drawn,
        the full text and diff are one key away). Reads still see everything; a write unpacks."""
        if self._packed is not None:
            return
        details = self._details
        if not details.content and details.raw_input is None and details.raw_output is None:
            return
        self._terminals = [c.terminal_id for c in details.content if isinstance(c, TerminalToolCallContent)]
        self._packed = zlib.compress(pickle.dumps(details, pickle.HIGHEST_PROTOCOL), 1)
        self._details = _Details([], None, None)

    @property
    def settled(self) -> bool:
        return self._packed is not None

    def _read(self) -> _Details:
        """The details, unpacked for this read only (a settled call stays packed)."""
        if self._packed is None:
            return self._details
        details: _Details = pickle.loads(zlib.decompress(self._packed))
        return details

    def _unpack(self) -> _Details:
        if self._packed is not None:
            self._details = self._read()
            self._packed = None
        return self._details

    def merge(self, update: ToolCallPiece) -> None:
        """Fold a ``ToolCallStart``/``ToolCallProgress``/``ToolCallUpdate`` into this state."""
        self.title = update.title if update.title is not None else self.title
        self.kind = update.kind if update.kind is not None else self.kind
        if update.status is not None and (self.status != CANCELLED or update.status in FINAL_STATUSES):
            self.set_status(update.status)
        if update.raw_input not in (None, {}):
            self.raw_input = update.raw_input
        if update.raw_output is not None:
            self.raw_output = update.raw_output
        if update.content is not None:
            self.content = list(update.content)
        if update.locations is not None:
            self.locations = [(loc.path, loc.line) for loc in update.locations]

    def set_status(self, status: str) -> None:
        """The new status; the call's duration ends when it is no longer open (and runs again if it is)."""
        self.status = status
        self.ended = None if status in OPEN_STATUSES else (self.ended or time.monotonic())

    def duration(self) -> float:
        """Seconds from the first sight of the call to its end (or to now, while it is open)."""
        return (self.ended or time.monotonic()) - self.started

    def hear(self, text: str) -> None:
        """Text the subagent of this call said (kept in its full text, bounded)."""
        self.said = (self.said + text)[-MAX_SAID:]

    def diffs(self) -> list[DiffContent]:
        """The ``diff`` content blocks, in order."""
        return [DiffContent(c.path, c.old_text, c.new_text) for c in self.content
                if isinstance(c, FileEditToolCallContent)]

    def render(self) -> str:
        """The chat block for this tool call (text content clipped to a preview)."""
        return "\n".join(self._lines(preview=True))

    def full_text(self) -> str:
        """Everything known about the call, nothing clipped: input, content, diffs, output."""
        lines = self._lines(preview=False)
        if self.raw_input not in (None, {}):
            lines += ["", "input:", *_json_lines(self.raw_input)]
        for diff in self.diffs():
            lines += ["", *unified_diff(diff)]
        if self.raw_output is not None:
            lines += ["", "output:", *_json_lines(self.raw_output)]
        if self.said:
            lines += ["", "the subagent said:", *("  " + line for line in self.said.split("\n"))]
        return "\n".join(lines)

    def terminal_ids(self) -> list[str]:
        """The ids of the terminals embedded in the content, in order."""
        if self._packed is not None:
            return list(self._terminals)
        return [c.terminal_id for c in self.content if isinstance(c, TerminalToolCallContent)]

    def diff_text(self) -> str:
        """All diff contents as one unified diff ('' when the call carries none)."""
        return "\n".join(line for diff in self.diffs() for line in unified_diff(diff))

    def shown_title(self) -> str:
        """The title with the paths in it as people read them (``paths``)."""
        return self.paths.text(self.title)

    def headline(self, preview: bool = True) -> str:
        """``● kind · title (name) · status``: the name when the title does not start with it."""
        icon = STATUS_ICONS.get(self.status, "?")
        title = self.shown_title() if preview else self.title
        name = self.name
        named = f" ({name})" if name and not title.lower().startswith(name.lower()) else ""
        return f"{icon} {self.kind} · {title}{named} · {self.status}"

    def _lines(self, preview: bool) -> list[str]:
        show = self.paths.show if preview else str
        lines = [self.headline(preview)]
        command = command_of(self.raw_input)
        if command:
            lines.append(f"  $ {command}")
        for item in self.content:
            lines.extend(self._render_content(item, preview))
        for path, line in self.locations:
            lines.append(f"  → {show(path)}{f':{line}' if line else ''}")
        lines.extend(f"  ✎ {show(path)}{rest}" for path, rest in self.comments)
        return lines

    def _render_content(self, item: ToolCallContentVariant, preview: bool) -> list[str]:
        if isinstance(item, FileEditToolCallContent):
            return [self._diff_summary(item, preview)]
        if isinstance(item, TerminalToolCallContent):
            view = self.terminal_view(item.terminal_id) if self.terminal_view is not None else None
            return view if view is not None else [f"  ▸ terminal {item.terminal_id}"]
        return _render_block(item, preview)

    def _diff_summary(self, item: FileEditToolCallContent, preview: bool) -> str:
        added, removed = self._diff_counts(item)
        label = " (new file)" if item.old_text is None else ""
        return f"  ± {self.paths.show(item.path) if preview else item.path} +{added} −{removed}{label}"

    def _diff_counts(self, item: FileEditToolCallContent) -> tuple[int, int]:
        key = (item.path, hash(item.old_text), hash(item.new_text))
        if key not in self._counts:
            self._counts[key] = diff_counts(item.old_text, item.new_text)
        return self._counts[key]


def subagent_lines(state: ToolCallState, calls: dict[str, ToolCallState], unfolded: bool) -> list[str]:
    """The fold under a call that runs a subagent: one line that counts its calls (▸, <CR> unfolds),
    and unfolded, each call (nested ones indented) with its status and duration."""
    tree = list(_descendants(state, calls))
    if not tree and not state.subagent:
        return []
    counts: dict[str, int] = {}
    for _, call in tree:
        counts[call.status] = counts.get(call.status, 0) + 1
    said = f" · {len(state.said.splitlines()) or 1} lines said" if state.said else ""
    summary = ", ".join(f"{n} {COUNT_WORDS.get(status, status)}" for status, n in counts.items())
    noun = "tool call" if len(tree) == 1 else "tool calls"
    head = f"  {UNFOLDED if unfolded else FOLDED} subagent · {len(tree)} {noun}"
    last = last_line(state.said)
    last_said = f" · “{last}”" if last else ""
    lines = [f"{head}{f': {summary}' if summary else ''}{said} · {duration_text(state.duration())}{last_said}"]
    if unfolded:
        lines += [f"{'  ' * (depth + 2)}{call.headline()} · {duration_text(call.duration())}" for depth, call in tree]
    return lines


MAX_BOARD_SUBAGENTS = 5
"""Running subagents a session's row on the board lists (the rest are counted)."""


def board_lines(running: list[ToolCallState], calls: dict[str, ToolCallState]) -> tuple[str, ...]:
    """The board's lines under a session: each running subagent (the outermost of a tree) with its state,
    its calls and its last line of text."""
    lines = []
    for state in running[:MAX_BOARD_SUBAGENTS]:
        tree = list(_descendants(state, calls))
        noun = "tool call" if len(tree) == 1 else "tool calls"
        waits = " · waits on you" if state.status == "pending" else ""
        last = last_line(state.said)
        lines.append(f"↳ {state.title}{waits} · {len(tree)} {noun} · {duration_text(state.duration())}"
                     + (f" · “{last}”" if last else ""))
    if len(running) > MAX_BOARD_SUBAGENTS:
        lines.append(f"↳ … {len(running) - MAX_BOARD_SUBAGENTS} more subagents running")
    return tuple(lines)


def last_line(text: str) -> str:
    """The last line of a subagent's text that says something, cut to ``MAX_LAST_LINE`` characters."""
    for line in reversed(text.splitlines()):
        if line.strip():
            line = line.strip()
            return line if len(line) <= MAX_LAST_LINE else line[:MAX_LAST_LINE - 1] + "…"
    return ""


COUNT_WORDS = {"pending": "pending", "in_progress": "running", "completed": "done", "failed": "failed",
               "cancelled": "cancelled"}


def _descendants(state: ToolCallState, calls: dict[str, ToolCallState]) -> Iterator[tuple[int, ToolCallState]]:
    """Every call under ``state`` with its depth, in drawing order (each once, whatever the agent claims)."""
    seen = {state.tool_call_id}
    stack = [(0, child_id) for child_id in reversed(state.children)]
    while stack:
        depth, call_id = stack.pop()
        call = calls.get(call_id)
        if call is None or call_id in seen:
            continue
        seen.add(call_id)
        yield depth, call
        stack += [(min(depth + 1, MAX_DEPTH), child_id) for child_id in reversed(call.children)]


def duration_text(seconds: float) -> str:
    """``0.4s``, ``12s``, ``2m05s``, ``1h02m``."""
    if seconds < 10:
        return f"{max(seconds, 0):.1f}s"
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def _render_block(item: ContentToolCallContent, preview: bool) -> list[str]:
    block = item.content
    if not isinstance(block, TextContentBlock):
        return ["  " + describe(block, NO_CAP).line]
    return _clip(block.text) if preview else ["  │ " + line for line in block.text.split("\n")]


def _clip(text: str) -> list[str]:
    lines = text.split("\n")
    shown = ["  │ " + line for line in lines[:MAX_TEXT_LINES]]
    if len(lines) > MAX_TEXT_LINES:
        shown.append(f"  │ … {len(lines) - MAX_TEXT_LINES:,} more lines")
    return shown


def _json_lines(value: object) -> list[str]:
    return ["  " + line for line in json.dumps(value, indent=2, ensure_ascii=False, default=str).split("\n")]


def diff_counts(old: str | None, new: str) -> tuple[int, int]:
    """Lines added and removed going from ``old`` (None: a new file) to ``new``."""
    a, b = (old or "").splitlines(), new.splitlines()
    added = removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b).get_opcodes():
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return added, removed


def unified_diff(diff: DiffContent) -> list[str]:
    """A ``diff -u`` of one diff content (``/dev/null`` as the old side of a new file)."""
    old = (diff.old_text or "").splitlines()
    before = "/dev/null" if diff.old_text is None else f"a/{diff.path}"
    body = difflib.unified_diff(old, diff.new_text.splitlines(), before, f"b/{diff.path}", lineterm="")
    return list(body) or [f"--- a/{diff.path}", f"+++ b/{diff.path}", "(no changes)"]


def command_of(raw_input: object) -> str | None:
    """The shell command of an execute tool call's raw input, if it names one."""
    if not isinstance(raw_input, dict):
        return None
    for key in ("command", "cmd"):
        value = raw_input.get(key)
        if isinstance(value, list):
            return " ".join(str(v) for v in value)
        if isinstance(value, str):
            return value
    return None


def describe_input(raw_input: object) -> str:
    """A short printable form of a tool call's raw input (permission prompts)."""
    command = command_of(raw_input)
    if command:
        return command
    if raw_input in (None, {}):
        return ""
    text = json.dumps(raw_input, ensure_ascii=False)
    return text if len(text) <= 200 else text[:197] + "…"
