"""Agents that write the disk themselves: bring buffers up to date without losing unsaved edits.

After each tool call that touched files (its ``locations``, its ``diff`` content) completes,
and at the end of every turn for each file a tool call or a permission request named and each
loaded file whose stat changed, the disk is compared with the buffer: a clean buffer takes the
new text quietly (one undo step, view kept); a buffer with unsaved changes is never touched:
the user gets a notice and a three-way view.
A file whose disk state is the one its buffer knows (read, saved or synced in Neovim: the
user's own ``:w`` during a turn) is not the agent's change. Each file is snapshotted before
the agent changes it, for the turn's changeset. The disk is read through the opener: files
outside the workspace roots (and FIFOs, devices, hard-linked files) are never read, so their
buffers are left to Neovim's own change detection.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TypeVar

from acp.schema import ToolCallUpdate

from .. import tasks
from ..port import EditorPort, Stamp, ThreeWay
from ..transcript.tool_calls import DiffContent, ToolCallState
from .changes import ChangeLog
from .ledger import FileLedger, fingerprint
from .opener import Opener, Snapshot
from .voice import FileVoice

FINAL_STATUSES = ("completed", "failed")

T = TypeVar("T")


class Reconciler:
    """Per-session watcher of the files an agent touches on its own."""

    def __init__(self, editor: EditorPort, ledger: FileLedger, changes: ChangeLog, voice: FileVoice,
                 opener: Opener) -> None:
        self._editor = editor
        self._opener = opener
        self._ledger = ledger
        self._changes = changes
        self._voice = voice
        self.warned: set[str] = set()
        self._stats: dict[str, Stamp | None] = {}
        self._touched: set[str] = set()
        self._finished: set[str] = set()
        self.unsaved: set[str] = set()
        """Files whose buffer had unsaved changes when the turn began."""
        self.followers: list[Callable[[str], None]] = []
        """Told ``tool`` (a tool call update) and ``end`` (a turn's end): a boxed agent's overlay is read then."""
        self.before_turn: list[Callable[[list[str]], Awaitable[None]]] = []
        """Awaited with the loaded files before a turn's prompt is sent (the agent's view is brought up to them)."""

    # -- turn boundaries -----------------------------------------------------------

    async def begin_turn(self) -> None:
        """Stat every loaded file; snapshot the disk under buffers with unsaved changes.

        A failed snapshot is logged; it must not stop the prompt.
        """
        self._touched, self._finished = set(), set()
        try:
            loaded = await self._editor.loaded_files()
            self.unsaved = {path for path, modified, _ in loaded if modified}
            self._stats, dirty = await asyncio.to_thread(self._stat_and_snapshot, loaded)
        except Exception as exc:
            self._voice.log("error", f"turn start snapshot failed: {type(exc).__name__}: {exc}")
            return
        for path, snap in dirty.items():
            self._changes.current.note_baseline(path, snap)
        for before in self.before_turn:
            try:
                await before(list(self._stats))
            except Exception as exc:  # it must not stop the prompt either
                self._voice.log("error", f"turn start: the agent's view of loaded files: {type(exc).__name__}: {exc}")

    def end_turn(self) -> asyncio.Task[None]:
        """Reconcile what changed during the turn (in a task: the turn's end does not wait for it)."""
        return tasks.spawn(self._end_turn(), self._report, "reconcile at turn end")

    async def _end_turn(self) -> None:
        for follower in self.followers:
            follower("end")
        loaded = await self._editor.loaded_files()
        paths = {path for path, _, _ in loaded} | set(self._stats)
        stats = await asyncio.to_thread(lambda: {p: self._opener.stamp_or_none(Path(p)) for p in paths})
        changed = {p for p, key in stats.items() if p in self._stats and key != self._stats[p]}
        for path in sorted(changed | self._touched):
            await self.reconcile(path, ())

    # -- tool calls ----------------------------------------------------------------

    def observe(self, state: ToolCallState) -> None:
        """Snapshot files a tool call names before it runs; reconcile them once it ends."""
        for follower in self.followers:
            follower("tool")
        paths = touched_paths(state)
        fresh = [p for p in paths if p not in self._touched]
        self._touched.update(fresh)
        if fresh:
            tasks.spawn(self._note_baselines(fresh), self._report, "snapshot before a tool call")
        if paths and state.status in FINAL_STATUSES and state.tool_call_id not in self._finished:
            self._finished.add(state.tool_call_id)
            tasks.spawn(self._after_tool(paths, state.diffs()), self._report, "reconcile after a tool call")

    async def around_permission(self, tool_call: ToolCallUpdate, answer: Awaitable[T]) -> T:
        """A permission request: the files it names are snapshotted while the user is asked, and
        the answer goes back to the agent only once that is done. An agent allowed to edit may
        write the disk at once, and may never report its tool call again: a snapshot taken later
        would see no change, and the turn's end would not look at the file."""
        request = ToolCallState(tool_call.tool_call_id)
        request.merge(tool_call)
        fresh = [p for p in touched_paths(request) if p not in self._touched]
        self._touched.update(fresh)
        noted = tasks.spawn(self._note_baselines(fresh), self._report, "snapshot before a permission answer")
        result = await answer
        await asyncio.wait({noted})
        return result

    async def _note_baselines(self, paths: list[str]) -> None:
        changeset = self._changes.current
        for path in paths:
            async with self._ledger.lock(path):
                if changeset.baseline(path) is not None or path in changeset.files:
                    continue
                state = await self._editor.read_buffer(path)
                if state is not None and not state.modified:
                    changeset.note_baseline(path, Snapshot(True, state.text))
                else:
                    changeset.note_baseline(path, await asyncio.to_thread(self._opener.snapshot, Path(path)))

    async def _after_tool(self, paths: list[str], diffs: list[DiffContent]) -> None:
        for path in paths:
            await self.reconcile(path, diffs)
        await self._warn_unsaved(paths)

    async def _warn_unsaved(self, paths: list[str]) -> None:
        """Once per file: the agent works on the disk while the buffer has unsaved changes."""
        loaded = {path: tick for path, modified, tick in await self._editor.loaded_files() if modified}
        for path in paths:
            if path not in loaded or path in self.warned or self._ledger.view_open(path):
                continue
            seen = self._ledger.last_read(path)
            if seen is not None and seen.tick == loaded[path]:
                continue
            self.warned.add(path)
            self._voice.tell(f"{path} has unsaved changes in Neovim: the agent works on the file on "
                               "disk and does not see them", "warn")

    # -- one file ------------------------------------------------------------------

    async def reconcile(self, path: str, diffs: Iterable[DiffContent]) -> None:
        """Bring the buffer of ``path`` (if loaded) in line with the disk, and note the change."""
        async with self._ledger.lock(path):
            if self._ledger.view_open(path):
                return
            snap = await asyncio.to_thread(self._opener.snapshot, Path(path))
            if snap.exists and snap.text is None:
                return  # unreadable as text, or not to be read for an agent: Neovim's own checks apply
            mark = fingerprint(snap.text)
            if self._ledger.agrees_with_disk(path, mark):
                return
            await self._reconcile_locked(path, snap, _before_from(diffs, path, snap.text))
            self._ledger.note_disk(path, mark)

    async def _reconcile_locked(self, path: str, snap: Snapshot, diff_before: Snapshot | None) -> None:
        changeset, text = self._changes.current, snap.text
        before = changeset.baseline(path)
        if diff_before is not None and (before is None or before.text == text):
            before = diff_before  # the snapshot came too late: the diff knows the old text
        state = await self._editor.read_buffer(path)
        if state is not None and snap.stamp is not None and state.disk == snap.stamp:
            return  # the buffer knows this disk state: read or saved in Neovim (the user's own :w)
        if state is None or text is None or state.text == text:
            if state is None or path in self._touched:  # else the user saved it: not the agent's change
                changeset.record(path, text, "disk", before)
            if state is not None and text is not None:
                await self._editor.sync_buffer(path, snap.stamp)
            return
        if not state.modified:
            changeset.record(path, text, "disk", before or Snapshot(True, state.text))
            if await self._editor.reload_buffer(path, text, snap.stamp) != "modified":
                self._voice.log("info", f"reloaded {path} (changed on disk by the agent)")
                return
        if not await self._disk_changed(path, before, text):
            return  # only the user's unsaved edits differ from the disk
        changeset.record(path, text, "disk", before)
        self._conflict(path, before.text if before else None, text)

    async def _disk_changed(self, path: str, before: Snapshot | None, text: str) -> bool:
        """Whether the file changed under a modified buffer during this turn (unknown: no)."""
        if before is not None:
            return before.text != text
        if path in self._stats:
            return await asyncio.to_thread(self._opener.stamp_or_none, Path(path)) != self._stats[path]
        return False

    def _conflict(self, path: str, base: str | None, text: str) -> None:
        self._voice.tell(f"{path} changed on disk while its buffer has unsaved changes: nothing was "
                           "reloaded. Decide in the three-way view.", "warn")
        self._ledger.open_view(path)
        tasks.spawn(self._three_way(path, base, text), self._report, "three-way view")

    async def _three_way(self, path: str, base: str | None, text: str) -> None:
        try:
            outcome = await self._voice.three_way(ThreeWay(path, base, text, "disk", "on disk"))
        finally:
            self._ledger.close_view(path)
        self._voice.log("info", f"three-way view for {path} closed: {outcome}")

    def _stat_and_snapshot(self, loaded: list[tuple[str, bool, int]]
                           ) -> tuple[dict[str, Stamp | None], dict[str, Snapshot]]:
        stats = {path: self._opener.stamp_or_none(Path(path)) for path, _, _ in loaded}
        dirty = {path: self._opener.snapshot(Path(path)) for path, modified, _ in loaded if modified}
        return stats, dirty

    def _report(self, message: str) -> None:
        self._voice.log("error", message)
        self._editor.notify(message, "error")


def touched_paths(state: ToolCallState) -> list[str]:
    """Absolute paths a tool call names (locations and diffs), resolved, without duplicates."""
    names = [path for path, _ in state.locations]
    names += [diff.path for diff in state.diffs()]
    return list(dict.fromkeys(_resolved(n) for n in names if isinstance(n, str) and os.path.isabs(n)))


def _resolved(name: str) -> str:
    """The name with its symlinks resolved, as the file side keys files (lexical when the tree flips
    under the resolution: ``realpath`` can fail with EINVAL in that race)."""
    try:
        return os.path.realpath(name)
    except OSError:
        return os.path.normpath(name)


def _before_from(diffs: Iterable[DiffContent], path: str, text: str | None) -> Snapshot | None:
    """A whole-file diff's ``oldText`` is the file before, if its ``newText`` is what the disk holds."""
    for diff in diffs:
        if _resolved(diff.path) == path and diff.new_text == text:
            return Snapshot(diff.old_text is not None, diff.old_text)
    return None

