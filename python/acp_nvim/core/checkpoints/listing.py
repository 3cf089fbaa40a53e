"""What ``:Ai checkpoints`` shows: a row per turn (newest first) and a turn's combined diff.

A row holds the prompt's first line, when it ran, how many files it changed with the lines added
and removed, and whether those files still hold what the turn left (``changed since``: the user,
a later turn or another program changed one). A diff is one text: per file a ``diff --acp`` header
and a unified diff of its content before the turn against after it, or a line saying why there
is none (created, deleted, not text, not kept).

Every function blocks on the disk: the async callers run them through ``asyncio.to_thread``.
"""

from __future__ import annotations

import difflib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from acp import RequestError

from ..files.opener import NOT_FOUND, Opener
from .errors import CheckpointError
from .model import ABSENT, DONE, KEPT, Checkpoint, Ref
from .store import CheckpointStore, digest_of

PREVIEW = 60
_COUNTS: OrderedDict[tuple[str, str], tuple[int, int]] = OrderedDict()
"""(+, −) line counts by (before, after) digests: a content pair is diffed once."""
_COUNTS_MAX = 4096


@dataclass(frozen=True, slots=True)
class Row:
    """One turn as the list shows it."""

    turn: int
    prompt: str
    time: str
    files: int
    added: int
    removed: int
    state: str
    """``done``, ``running``, ``undone`` (taken back by a rewind) or ``pruned``."""
    since: bool
    """A file of the turn no longer holds what the turn left."""
    note: str = ""

    def to_lua(self) -> dict[str, object]:
        return {"turn": self.turn, "prompt": self.prompt, "time": self.time, "files": self.files,
                "added": self.added, "removed": self.removed, "state": self.state, "since": self.since,
                "note": self.note}


def rows(checkpoints: list[Checkpoint], store: CheckpointStore, opener: Opener, cap: int) -> list[Row]:
    """A row per turn, newest first."""
    now: dict[str, str | None] = {}
    found: list[Row] = []
    for checkpoint in reversed(checkpoints):
        added = removed = 0
        since = False
        for entry in checkpoint.files.values():
            if entry.after is not None:
                plus, minus = _counts(store, entry.before, entry.after)
                added, removed = added + plus, removed + minus
                since = since or _since(entry.after, _digest_now(now, opener, entry.path, cap))
        state = "pruned" if checkpoint.pruned else checkpoint.state
        note = f"taken back by the rewind to before turn {checkpoint.undone_by}" if checkpoint.undone_by else ""
        found.append(Row(checkpoint.turn, _first_line(checkpoint.prompt),
                         datetime.fromtimestamp(checkpoint.started).strftime("%H:%M:%S"), len(checkpoint.files),
                         added, removed, state, since and checkpoint.state == DONE and not checkpoint.pruned,
                         "; ".join([n for n in [note, *checkpoint.notes] if n])))
    return found


def diff_lines(checkpoint: Checkpoint, store: CheckpointStore, show: Callable[[str], str]) -> list[str]:
    """The turn's combined diff: per file a header and its unified diff (before → after the turn)."""
    lines = [f"# turn {checkpoint.turn}: {_first_line(checkpoint.prompt)}",
             f"# {len(checkpoint.files)} file(s); zc/zo fold a file, q closes", ""]
    for entry in checkpoint.files.values():
        name = show(entry.path)
        lines.append(f"diff --acp a/{name} b/{name} ({_via(entry.via)})")
        after = entry.after
        if after is None:
            lines.append("  (the turn is still running)")
            continue
        if not entry.before.restorable or not after.restorable:
            ref = entry.before if not entry.before.restorable else after
            lines.append(f"  (no diff: {ref.why_not() or 'not kept'})")
            continue
        before_text, after_text = _text(store, entry.before), _text(store, after)
        if before_text is None or after_text is None:
            lines.append("  (no diff: not text, or its content is no longer in the store)")
            continue
        if entry.before.state == ABSENT:
            lines.append("  (created by the turn)")
        elif after.state == ABSENT:
            lines.append("  (deleted by the turn)")
        body = difflib.unified_diff(before_text.splitlines(), after_text.splitlines(),
                                    f"a/{name}", f"b/{name}", lineterm="")
        lines.extend(body)
    return lines


def _via(via: str) -> str:
    return {"fs": "written through Neovim", "disk": "written on disk by the agent",
            "command": "changed by a command"}.get(via, via)


def _first_line(text: str) -> str:
    line = text.strip().split("\n", 1)[0]
    return line if len(line) <= PREVIEW else line[:PREVIEW] + "…"


def _text(store: CheckpointStore, ref: Ref) -> str | None:
    if ref.state == ABSENT:
        return ""
    try:
        return store.get(ref.digest).decode("utf-8")
    except (CheckpointError, UnicodeDecodeError):
        return None


def _counts(store: CheckpointStore, before: Ref, after: Ref) -> tuple[int, int]:
    if not before.restorable or not after.restorable:
        return 0, 0
    key = (before.digest, after.digest)
    if key not in _COUNTS:
        old, new = _text(store, before), _text(store, after)
        if old is None or new is None:
            return 0, 0
        plus = minus = 0
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(),
                                                           autojunk=False).get_opcodes():
            if tag != "equal":
                minus, plus = minus + i2 - i1, plus + j2 - j1
        _COUNTS[key] = (plus, minus)
        while len(_COUNTS) > _COUNTS_MAX:
            _COUNTS.popitem(last=False)
    return _COUNTS[key]


def _digest_now(cache: dict[str, str | None], opener: Opener, path: str, cap: int) -> str | None:
    """The digest of the file now ('' when missing; None when it cannot be read)."""
    if path not in cache:
        try:
            cache[path] = digest_of(opener.read_bytes(Path(path), cap)[0])
        except RequestError as exc:
            cache[path] = "" if exc.code == NOT_FOUND else None
        except OSError:
            cache[path] = None
    return cache[path]


def _since(after: Ref, now: str | None) -> bool:
    if now is None or after.state not in (KEPT, ABSENT):
        return False
    return now != (after.digest if after.state == KEPT else "")
