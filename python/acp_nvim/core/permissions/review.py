"""The review model: what each file of a diff-bearing permission request would become.

Agents send edits in three shapes: a whole-file ``diff`` (``oldText`` = the file), a snippet
``diff`` (``oldText`` = only the replaced lines), or no diff at all but old/new strings in the
tool call's raw input. The review always shows whole files: the snippet is located in the
text the user sees now; when it cannot be found, the snippet diff is shown as it was sent.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from acp import RequestError

from ..files.opener import NOT_FOUND, Opener
from ..files.paths import PathPolicy
from ..port import FileReview as FileReview
from ..port import FileVerdict as FileVerdict
from ..port import Review as Review
from ..port import ReviewVerdict as ReviewVerdict
from ..transcript.tool_calls import ToolCallState
from .exec_files import configures_execution
from .text_merge import carry_over

MAX_REVIEW_BYTES = 32 * 1024 * 1024
PATH_KEYS = ("file_path", "filePath", "path", "filename", "file")
OLD_KEYS = ("old_string", "oldString", "old_str", "old_text", "oldText")
NEW_KEYS = ("new_string", "newString", "new_str", "new_text", "newText")
CONTENT_KEYS = ("content", "file_text", "fileText", "contents")
REPLACE_ALL_KEYS = ("replace_all", "replaceAll")

CurrentReader = Callable[[str], Awaitable["Current"]]


@dataclass(frozen=True, slots=True)
class ProposedEdit:
    """One change to one file. ``old_text`` None replaces the whole file (or creates it)."""

    path: str
    old_text: str | None
    new_text: str
    replace_all: bool = False


@dataclass(frozen=True, slots=True)
class Current:
    """A file as the user sees it now: ``text`` None when it does not exist (or cannot be shown)."""

    text: str | None
    loaded: bool = False
    problem: str = ""


# -- diff sources -----------------------------------------------------------------


def proposed_edits(state: ToolCallState, earlier: list[ProposedEdit] | None = None) -> list[ProposedEdit]:
    """The edits a request proposes: its diff content, an earlier update's, or its raw input."""
    from_content = [ProposedEdit(d.path, d.old_text, d.new_text) for d in state.diffs()]
    return from_content or list(earlier or []) or raw_input_edits(state.raw_input)


def content_edits(state: ToolCallState | None) -> list[ProposedEdit]:
    """The diff content already known for a tool call (before a request's content replaces it)."""
    if state is None:
        return []
    return [ProposedEdit(d.path, d.old_text, d.new_text) for d in state.diffs()]


def raw_input_edits(raw_input: object) -> list[ProposedEdit]:
    """Old/new strings in a tool call's raw input (Edit, MultiEdit, Write, replace, write_file …)."""
    if not isinstance(raw_input, dict):
        return []
    path = _first_str(raw_input, PATH_KEYS)
    if path is None:
        return []
    nested = raw_input.get("edits")
    if isinstance(nested, list):
        return [edit for item in nested if (edit := _string_edit(path, item)) is not None]
    edit = _string_edit(path, raw_input)
    if edit is not None:
        return [edit]
    content = _first_str(raw_input, CONTENT_KEYS)
    return [ProposedEdit(path, None, content)] if content is not None else []


def _string_edit(path: str, data: object) -> ProposedEdit | None:
    if not isinstance(data, dict):
        return None
    old, new = _first_str(data, OLD_KEYS), _first_str(data, NEW_KEYS)
    if old is None or new is None:
        return None
    replace_all = any(data.get(key) is True for key in REPLACE_ALL_KEYS)
    return ProposedEdit(path, old, new, replace_all)


def _first_str(data: Mapping[str, object], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = data.get(key)
        if isinstance(value, str):
            return value
    return None


# -- whole-file reconstruction --------------------------------------------------------


async def build(session_key: str, number: int, title: str, kind: str, edits: list[ProposedEdit],
                read: CurrentReader, cwd: str, roots: Sequence[Path] = ()) -> Review:
    """A review with one entry per file (in the order the agent named them), each naming the file
    a write would land in and whether it configures code execution."""
    review = Review(session_key, number, title, kind)
    for path, file_edits in _by_path(edits, cwd).items():
        file = reconstruct(path, await read(path), file_edits)
        file.target, file.runs_code = await asyncio.to_thread(target_of, path, roots)
        review.files.append(file)
    return review


def target_of(path: str, roots: Sequence[Path] = ()) -> tuple[str, bool]:
    """The file a write to ``path`` lands in when a link on the way leads elsewhere ("" when it is
    ``path`` itself), and whether that file configures code execution."""
    resolved = os.path.realpath(path)
    return ("" if resolved == path else resolved), configures_execution(resolved, roots)


def _by_path(edits: list[ProposedEdit], cwd: str) -> dict[str, list[ProposedEdit]]:
    grouped: dict[str, list[ProposedEdit]] = {}
    for edit in edits:
        path = os.path.normpath(os.path.join(cwd, edit.path))
        grouped.setdefault(path, []).append(edit)
    return grouped


def reconstruct(path: str, current: Current, edits: list[ProposedEdit]) -> FileReview:
    """Apply ``edits`` in order to the current text; fall back to the snippet diff as sent."""
    text, how, notes = current.text, "whole", [current.problem] if current.problem else []
    for edit in edits:
        result = _apply(text, edit)
        if result is None:
            return _not_found(path, current, edits, notes)
        text, step, note = result
        how = _combine(how, step)
        if note:
            notes.append(note)
    assert text is not None
    return FileReview(path, current.text, current.loaded, text, how, "; ".join(notes))


def _combine(so_far: str, step: str) -> str:
    order = ("whole", "snippet", "merged", "new")
    return max(so_far, step, key=order.index)


def _not_found(path: str, current: Current, edits: list[ProposedEdit], notes: list[str]) -> FileReview:
    if current.problem:
        reason = "its text was not read"
    else:
        reason = "the file does not exist" if current.text is None else "the text it replaces is not in the file"
    notes.append(f"cannot place the agent's edit ({reason}): showing its diff as sent")
    old = "\n…\n".join(e.old_text or "" for e in edits)
    new = "\n…\n".join(e.new_text for e in edits)
    return FileReview(path, current.text, current.loaded, new, "not-found", "; ".join(notes), old)


def _apply(text: str | None, edit: ProposedEdit) -> tuple[str, str, str] | None:
    """(new text, how it was placed, note) or None when the edit cannot be placed."""
    if edit.old_text is None:
        if text is None:
            return edit.new_text, "new", "a new file"
        return edit.new_text, "whole", "" if text == "" else "the agent replaces the whole file"
    if text is None:  # an empty old text of a missing file creates it (Gemini CLI sends new files so)
        return (edit.new_text, "new", "a new file") if edit.old_text == "" else None
    whole = _as_whole_file(text, edit)
    if whole is not None:
        return whole, "whole", ""
    if edit.old_text == "":
        return None
    return _place_snippet(text, edit) or _merged(text, edit)


def _as_whole_file(text: str, edit: ProposedEdit) -> str | None:
    old, new = edit.old_text or "", edit.new_text
    if old == text:
        return new
    if old.rstrip("\r\n") == text.rstrip("\r\n") and old != "":
        ending = text[len(text.rstrip("\r\n")):]
        return new.rstrip("\r\n") + ending
    return None


def _place_snippet(text: str, edit: ProposedEdit) -> tuple[str, str, str] | None:
    old, new = edit.old_text or "", edit.new_text
    if old not in text and "\r\n" in text and "\r\n" not in old:
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
    count = text.count(old)
    if count == 0:
        return None
    if edit.replace_all:
        return text.replace(old, new), "snippet", ""
    note = f"the replaced text occurs {count} times; the first is changed" if count > 1 else ""
    return text.replace(old, new, 1), "snippet", note


def _merged(text: str, edit: ProposedEdit) -> tuple[str, str, str] | None:
    merged = carry_over(edit.old_text or "", text, edit.new_text)
    if merged is None:
        return None
    return merged, "merged", "the file changed since the agent read it: its changes are shown on the current text"


# -- the file as it is now ---------------------------------------------------------------

BufferText = Callable[[str], Awaitable[str | None]]


async def read_current(path: str, policy: PathPolicy, buffer_text: BufferText) -> Current:
    """The left side of a review: the loaded buffer (unsaved edits included) or the file on disk.

    Only inside the workspace roots, and only through the opener (no symlink followed, never a
    FIFO or a device, size-capped, no hard-linked file): anything else is not read at all.
    """
    try:
        resolved = policy.check(path)
    except RequestError as exc:
        return _not_read(exc)
    text = await buffer_text(str(resolved))
    if text is not None:
        return Current(text, loaded=True)
    return await asyncio.to_thread(read_file, resolved, Opener(policy.roots))


def read_file(path: Path, opener: Opener) -> Current:
    """The file on disk through ``opener`` (never raising)."""
    try:
        data, _ = opener.read_bytes(path, MAX_REVIEW_BYTES)
    except RequestError as exc:
        return Current(None) if exc.code == NOT_FOUND else _not_read(exc)
    except OSError as exc:
        return Current(None, problem=f"cannot read it: {exc.strerror or exc}")
    try:
        return Current(data.decode("utf-8"))
    except UnicodeDecodeError:
        return Current(None, problem="the file is not UTF-8 text")


def disk_text(path: str, policy: PathPolicy) -> str | None:
    """The file's text on disk (inside the roots, through the opener); None when it is missing or
    may not be read."""
    try:
        return read_file(policy.check(path), Opener(policy.roots)).text
    except RequestError:
        return None


def _not_read(exc: RequestError) -> Current:
    reason = exc.data.get("reason") if isinstance(exc.data, dict) else None
    return Current(None, problem=f"its text was not read ({reason or exc})")
