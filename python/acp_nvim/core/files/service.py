"""``fs/*`` for the agent: unsaved buffers first, the disk otherwise, always inside the roots.

Reads answer with the loaded buffer's text (unsaved edits included) and remember the
buffer's changedtick: a later write may replace unsaved changes only if the agent read
them. Otherwise the write waits for the user in a three-way view. Every change lands in
the turn's changeset (see changes.py); agents that write the disk themselves are
reconciled with the buffers by reconcile.py.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from pathlib import Path

from acp import RequestError
from acp.schema import ReadTextFileResponse

from ..port import EditorPort, ThreeWay
from . import disk
from .changes import ChangeLog
from .disk import Snapshot
from .ledger import FileLedger, ReadRecord
from .paths import REFUSED, PathPolicy, PathRefused, file_error
from .text_slice import slice_lines
from .voice import FileVoice

INTERNAL = -32603

ContentFilter = Callable[[Path, str], str | Awaitable[str]]


class FileService:
    """Answers the agent's file requests through the editor port and the path policy."""

    def __init__(self, editor: EditorPort, policy: PathPolicy, ledger: FileLedger, changes: ChangeLog,
                 voice: FileVoice, content_filter: ContentFilter | None = None) -> None:
        self.editor = editor
        self.policy = policy
        self.changes = changes
        self.content_filter = content_filter
        """Applied to the agent's content before a write (the review substitutes the accepted text)."""
        self._ledger = ledger
        self._voice = voice

    # -- fs/read_text_file ---------------------------------------------------------

    async def read(self, path: str, line: int | None, limit: int | None) -> ReadTextFileResponse:
        """The file's text from its buffer (unsaved edits included) or the disk, sliced."""
        resolved = self._check(path, "read")
        try:
            text = await self._load(resolved)
        except RequestError as exc:
            self._voice.log("info", f"fs/read_text_file {path}: {exc.data.get('reason') if exc.data else exc}")
            raise
        return ReadTextFileResponse(content=slice_lines(text, line, limit))

    async def _load(self, resolved: Path) -> str:
        key = str(resolved)
        state = await self.editor.read_buffer(key)
        if state is None:
            text = await asyncio.to_thread(disk.read_text, resolved)
            self._ledger.note_read(key, None, text)
            return text
        _check_buffer_text(key, state.text)
        self._ledger.note_read(key, state.tick, state.text)
        return state.text

    # -- fs/write_text_file --------------------------------------------------------

    async def write(self, path: str, content: str, *, filtered: bool = True) -> None:
        """Write through the loaded buffer (one undo step, saved) or the disk; never over unseen edits.

        ``filtered`` False skips the content filter (the review's own correction of a write).
        """
        resolved = self._check(path, "write")
        if filtered:
            content = await self._filtered(resolved, content)
        key = str(resolved)
        async with self._ledger.lock(key):
            if self._ledger.view_open(key):
                raise file_error(key, "not written: a three-way view for this file is still open in Neovim")
            await asyncio.to_thread(disk.make_parents, resolved)
            await self._write_locked(resolved, content)

    async def _write_locked(self, resolved: Path, content: str) -> None:
        key = str(resolved)
        seen = self._ledger.last_read(key)
        changeset = self.changes.current
        result = await self.editor.apply_to_buffer(key, content, seen.tick if seen else None,
                                                   key not in changeset.files)
        if result.status == "error":  # a buffer that is not modifiable, a failed save
            self._voice.tell(f"{key}: the agent's write failed: {result.text}", "error")
            raise file_error(key, f"not written: {result.text}", INTERNAL)
        if result.status == "not_loaded":
            before = await asyncio.to_thread(disk.snapshot, resolved)
            await asyncio.to_thread(disk.write_text, resolved, content)
            self._wrote(key, content, None, before)
        elif result.status == "written":
            self._wrote(key, content, result.tick, Snapshot(True, result.text))
        else:
            await self._write_conflict(resolved, content, seen, result.text)

    def _wrote(self, key: str, content: str, tick: int | None, before: Snapshot) -> None:
        self.changes.current.record(key, content, "fs", before)
        self._ledger.note_read(key, tick, content)
        self._ledger.note_disk(key, disk.fingerprint(content))
        self._voice.log("info", f"fs/write_text_file {key}: written ({'buffer' if tick is not None else 'disk'})")

    async def _write_conflict(self, resolved: Path, content: str, seen: ReadRecord | None, mine: str) -> None:
        key = str(resolved)
        base = seen.text if seen else (await asyncio.to_thread(disk.snapshot, resolved)).text
        self._voice.tell(f"{key}: the agent's write waits for you: the buffer has unsaved changes the agent "
                  "has not read. Decide in the three-way view.", "warn")
        self._ledger.open_view(key)
        try:
            outcome = await self._voice.three_way(ThreeWay(key, base, content, "write", "agent's write"))
        finally:
            self._ledger.close_view(key)
        self._voice.log("info", f"fs/write_text_file {key}: three-way view closed: {outcome}")
        if outcome == "agent":
            self.changes.current.record(key, content, "fs", Snapshot(True, mine))
            self._ledger.forget_read(key)
            self._ledger.note_disk(key, disk.fingerprint(content))
            return
        raise RequestError(REFUSED, f"{key}: not written: the user kept their unsaved changes in Neovim; "
                           "read the file again before changing it", {"path": key, "reason": "kept"})

    async def _filtered(self, resolved: Path, content: str) -> str:
        if self.content_filter is None:
            return content
        result = self.content_filter(resolved, content)
        return await result if inspect.isawaitable(result) else result

    # -- helpers -------------------------------------------------------------------

    def _check(self, path: str, action: str) -> Path:
        try:
            return self.policy.check(path)
        except PathRefused as exc:
            self._voice.tell(f"refused to {action} {exc.path}: {exc.reason}", "warn")
            raise
        except RequestError as exc:
            self._voice.log("info", f"fs {action} {path}: {exc}")
            raise


def _check_buffer_text(key: str, text: str) -> None:
    if len(text) > disk.MAX_FILE_BYTES:
        raise file_error(key, f"buffer too large ({len(text)} characters; the limit is {disk.MAX_FILE_BYTES})")
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise file_error(key, f"buffer is not valid UTF-8 text (invalid byte at offset {exc.start})") from None
