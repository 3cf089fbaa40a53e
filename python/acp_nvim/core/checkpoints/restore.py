"""A rewind's files: set back through the file side, the user's buffers respected, undoable.

Before anything is written, every content the rewind puts back is read from the store and
checked (a content gone or corrupt refuses the whole rewind: nothing is changed), and what each
file holds now is kept as the undo record (durably: it may be the only copy of the user's
text). Then each file goes through the same path as ``:Ai changes`` revert (the write gate,
the opener, a clean buffer taking the text as one undo step):

- a file the turn created is removed (not under unsaved changes, and not when it holds something
  else than the turn left: then it stays, and the rewind names it);
- a file whose buffer has unsaved changes gets its content on disk, and the buffer keeps the
  changes: a three-way view (base: the disk before, mine: the buffer, theirs: the content before
  the turn) lets the user take the rest;
- a file changed since the turn left it (the user saved it, another program) is set back only
  as the user decides in a three-way view (a file that is not text, which has none, stays as it is);
- a file the checkpoint did not keep (too large, never seen, not text and open in a buffer) is
  left as it is, and the rewind says so; so is a file whose content now cannot be kept for undo.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from acp import RequestError

from .. import tasks
from ..files.opener import NOT_FOUND
from ..files.service import FileService
from ..port import EditorPort
from .errors import CheckpointError
from .model import ABSENT, ABSENT_REF, DONE, KEPT, Checkpoint, FileEntry, Ref
from .plan import Step
from .store import CheckpointStore, digest_of, manifest_name

RESTORED, REMOVED, SAME, UNSAVED, EDITED, SKIPPED = "restored", "removed", "same", "unsaved", "edited", "skipped"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a rewind did with one file (``why``: for a skipped one, and notes)."""

    path: str
    what: str
    why: str = ""


@dataclass(slots=True)
class Restored:
    """A rewind's outcome per file, and its undo record (None when it changed nothing)."""

    outcomes: list[Outcome] = field(default_factory=list)
    undo: Checkpoint | None = None
    removed: list[str] = field(default_factory=list)
    """Files it deleted (their clean buffers may go)."""

    def count(self, what: str) -> int:
        return sum(1 for o in self.outcomes if o.what == what)

    def summary(self) -> str:
        """One line: how many files were set back, and what waits or was left."""
        parts = [f"{self.count(RESTORED) + self.count(REMOVED)} file(s) set back"]
        if self.count(REMOVED):
            parts[0] += f" ({self.count(REMOVED)} deleted: the turn created them)"
        if self.count(UNSAVED):
            parts.append(f"{self.count(UNSAVED)} set back on disk, your unsaved changes kept in the buffer "
                         "(three-way view)")
        if self.count(EDITED):
            parts.append(f"{self.count(EDITED)} changed since: decide in the three-way view")
        if self.count(SKIPPED):
            parts.append(f"{self.count(SKIPPED)} not set back")
        return "; ".join(parts)

    def details(self, show: Callable[[str], str] = str) -> list[str]:
        """A line per file that was not simply set back (what waits, what was left and why)."""
        name = show
        lines = []
        for o in self.outcomes:
            if o.what == SKIPPED:
                lines.append(f"  {name(o.path)}: not set back: {o.why}")
            elif o.what in (UNSAVED, EDITED) or o.why:
                lines.append(f"  {name(o.path)}: {o.why}")
        return lines


@dataclass(frozen=True, slots=True)
class _Now:
    """A file as it is now: its bytes (None: missing), or why they cannot be kept for undo."""

    data: bytes | None
    problem: str = ""


class Restorer:
    """Runs the steps of one rewind (or of its undo) for one session."""

    def __init__(self, key: str, files: FileService, editor: EditorPort, store: CheckpointStore, cap: int,
                 report: tasks.ErrorReporter) -> None:
        self._key = key
        self._files = files
        self._editor = editor
        self._store = store
        self._cap = cap
        self._report = report

    async def run(self, steps: list[Step], theirs: str) -> Restored:
        """Set the files of ``steps`` back (``theirs``: what the three-way views call that content).
        A CheckpointError, before anything changed, when a content to put back cannot be had."""
        open_views = [s.path for s in steps if self._files.deciding(s.path)]
        if open_views:
            raise CheckpointError(f"cannot rewind: a three-way view of {open_views[0]} is still open: decide there "
                                  "first (nothing was changed)")
        wants = await asyncio.to_thread(self._contents, [s for s in steps if s.want.kept])
        nows = await asyncio.to_thread(self._read_now, [s.path for s in steps])
        buffers = await self._editor.loaded_files()
        dirty = {path for path, modified, _ in buffers if modified}
        loaded = {path for path, _, _ in buffers}
        result = Restored()
        todo: list[tuple[Step, str]] = []
        for step in steps:
            action = self._decide(step, wants.get(step.path), nows[step.path], step.path in dirty, step.path in loaded)
            if isinstance(action, Outcome):
                result.outcomes.append(action)
            else:
                todo.append((step, action))
        if not todo:
            return result
        result.undo = await self._record_undo(todo, nows)
        for step, action in todo:
            result.outcomes.append(await self._apply(step, action, wants.get(step.path), nows[step.path], theirs,
                                                     result))
        return result

    # -- before anything is written --------------------------------------------------

    def _contents(self, steps: list[Step]) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        problems: list[str] = []
        for step in steps:
            try:
                found[step.path] = self._store.get(step.want.digest)
            except CheckpointError as exc:
                problems.append(f"{step.path} (turn {step.turn}): {exc}")
        if problems:
            raise CheckpointError("cannot rewind: the checkpoint does not hold every file: " + "; ".join(problems)
                                  + ". Nothing was changed.")
        return found

    def _read_now(self, paths: list[str]) -> dict[str, _Now]:
        now: dict[str, _Now] = {}
        for path in paths:
            try:
                data, _ = self._files.opener.read_bytes(Path(path), self._cap)
                now[path] = _Now(data)
            except RequestError as exc:
                now[path] = _Now(None) if exc.code == NOT_FOUND else _Now(None, str(exc))
            except OSError as exc:
                now[path] = _Now(None, exc.strerror or str(exc))
        return now

    def _decide(self, step: Step, want: bytes | None, now: _Now, dirty: bool, loaded: bool) -> Outcome | str:
        """What to do with one file: an action (``restore``, ``remove``, ``unsaved``, ``edited``,
        ``bytes``), or the outcome at once (as it was, or left as it is and why)."""
        if not step.want.restorable:
            return Outcome(step.path, SKIPPED, f"{step.want.why_not()} (turn {step.turn})")
        if now.problem:
            return Outcome(step.path, SKIPPED, f"what it holds now cannot be kept for :Ai rewind undo ({now.problem})")
        if (want is None and now.data is None) or (want is not None and now.data == want):
            return Outcome(step.path, SAME)
        changed = now.data is not None and _changed_since(step.expect, now.data)
        if step.want.state == ABSENT:
            if dirty:
                return Outcome(step.path, SKIPPED, f"turn {step.turn} created it, but its buffer has unsaved changes: "
                                                   "not deleted")
            if changed:  # the user's text, saved since: a deletion has no three-way view to take it back
                return Outcome(step.path, SKIPPED, f"turn {step.turn} created it, but it holds something else "
                                                   "than the turn left (changed since): not deleted; delete it "
                                                   "yourself if you want it gone")
            if now.data is not None and (step.expect is None or not step.expect.restorable):
                return Outcome(step.path, SKIPPED, f"turn {step.turn} created it, but what the turn left was not "
                                                   "kept, so whether it changed since cannot be told: not deleted")
            return "remove"
        assert want is not None
        if _text(want) is None:
            if loaded:
                return Outcome(step.path, SKIPPED, "it is not text, and a buffer holds it")
            if changed:
                return Outcome(step.path, SKIPPED, f"changed since turn {step.turn} left it, and it is not text "
                                                   "(no three-way view): not overwritten")
            return "bytes"
        if dirty:
            return "unsaved"
        if now.data is not None and _changed_since(step.expect, now.data):
            return "edited"
        return "restore"

    async def _record_undo(self, todo: list[tuple[Step, str]], nows: dict[str, _Now]) -> Checkpoint:
        """What the files hold now, kept durably before the first write (the undo's contents)."""
        undo = Checkpoint(0, "", 0, 0, state=DONE, name=manifest_name(self._key, "undo"))

        def keep() -> None:
            with self._store.batch(durable=True) as batch:
                for step, _ in todo:
                    data = nows[step.path].data
                    now = ABSENT_REF if data is None else Ref(KEPT, batch.put(data), len(data))
                    undo.files[step.path] = FileEntry(step.path, now, step.want)
            self._store.write_manifest(undo.name, undo.to_json(self._key), durable=True)
        try:
            await asyncio.to_thread(keep)
        except OSError as exc:
            raise CheckpointError(f"cannot rewind: the files as they are now could not be kept for :Ai rewind "
                                  f"undo ({exc.strerror or exc}); nothing was changed") from None
        return undo

    # -- the writes ------------------------------------------------------------------

    async def _apply(self, step: Step, action: str, want: bytes | None, now: _Now, theirs: str,
                     result: Restored) -> Outcome:
        path = step.path
        try:
            if action == "remove":
                outcome = await self._files.revert(path, None)
                if outcome == "unsaved":
                    return Outcome(path, SKIPPED, f"turn {step.turn} created it, but its buffer has unsaved changes: "
                                                  "not deleted")
                result.removed.append(path)
                return Outcome(path, REMOVED)
            assert want is not None
            if action == "bytes":
                if await self._files.revert_bytes(path, want) == "loaded":
                    return Outcome(path, SKIPPED, "it is not text, and a buffer holds it")
                return Outcome(path, RESTORED)
            text = _text(want)
            assert text is not None
            if action == "restore":
                if await self._files.revert(path, text) != "unsaved":
                    return Outcome(path, RESTORED)
                action = "unsaved"  # the user typed in it meanwhile
            if action == "unsaved":
                await self._files.revert_under_unsaved(path, text, _text(now.data or b""), theirs)
                return Outcome(path, UNSAVED, "set back on disk; your unsaved changes stay in its buffer: take what "
                                              "you want of the rest in the three-way view")
            base = await self._base(step)
            tasks.spawn(self._files.revert_edited(path, text, base, theirs), self._report, f"three-way view of {path}")
            return Outcome(path, EDITED, f"changed since turn {step.turn} left it: set back only as you decide in "
                                         "the three-way view")
        except RequestError as exc:
            return Outcome(path, SKIPPED, str(exc))

    async def _base(self, step: Step) -> str | None:
        """What the turn left (the three-way view's base), when it is kept."""
        if step.expect is None or not step.expect.kept:
            return None
        try:
            return _text(await asyncio.to_thread(self._store.get, step.expect.digest))
        except CheckpointError:
            return None


def _text(data: bytes) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _changed_since(expect: Ref | None, data: bytes) -> bool:
    """Whether the file holds something else than what the last turn left (unknown: no)."""
    if expect is None or not expect.restorable:
        return False
    return expect.state != KEPT or digest_of(data) != expect.digest
