"""``fs/*`` for the agent: unsaved buffers first, the disk otherwise, always inside the roots.

Reads answer with the loaded buffer's text (unsaved edits included) and remember the
buffer's changedtick: a later write may replace unsaved changes only if the agent read
them. Otherwise the write waits for the user in a three-way view — as it does when the file
changed on disk behind the buffer (``git pull``, another editor). Every disk access goes
through the opener (``opener.py``: a no-follow walk from a workspace root; writes replace
the file atomically); a write into a loaded buffer puts the text into the buffer (one undo
step), writes the file through the opener and then marks the buffer saved. Every change
lands in the turn's changeset (see changes.py), its "before" noted before the write; agents
that write the disk themselves are reconciled with the buffers by reconcile.py.

A buffer is served only while it is the view of the file at that path: the file Neovim read
it from is the one the opener finds there now (``_load``); otherwise the disk is read.
"""

from __future__ import annotations

import asyncio
import codecs
from pathlib import Path
from typing import Protocol

from acp import RequestError
from acp.schema import ReadTextFileResponse

from .. import tasks
from ..port import NEW_FILE, BufferState, BufferWrite, EditorPort, FileId, Stamp, ThreeWay
from .changes import ChangeLog
from .ledger import FileLedger, ReadRecord, fingerprint
from .opener import MAX_FILE_BYTES, Opener, Replaced, Snapshot
from .paths import REFUSED, PathPolicy, PathRefused, file_error
from .text_slice import slice_lines
from .voice import FileVoice

INTERNAL = -32603
AGENT, REVERT, CORRECTION = "agent", "revert", "correction"
"""Who writes: the agent (``fs/write_text_file``), the user (``:Ai changes`` revert), or acp.nvim
putting back what the user accepted (a disk writer's correction, a rejected review's base)."""


class WriteGate(Protocol):
    """What every write passes before it lands (the permissions' write gate satisfies it)."""

    async def admit(self, path: Path, content: str, origin: str) -> str:
        """The text that may land for this write of ``content`` (a RequestError saying why when none may)."""
        ...


class FileService:
    """Answers the agent's file requests through the editor port, the path policy and the opener."""

    def __init__(self, editor: EditorPort, policy: PathPolicy, ledger: FileLedger, changes: ChangeLog,
                 voice: FileVoice, gate: WriteGate | None = None, opener: Opener | None = None) -> None:
        self.editor = editor
        self.policy = policy
        self.changes = changes
        self.gate = gate
        """Every write passes it first (None: writes land ungated, as in tests of the file side alone)."""
        self.opener = opener or Opener(policy.roots)
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
            if isinstance(exc, PathRefused):
                self._voice.tell(f"refused to read {exc.path}: {exc.reason}", "warn")
            raise
        return ReadTextFileResponse(content=slice_lines(text, line, limit))

    async def _load(self, resolved: Path) -> str:
        """The buffer's text while the buffer is the view of the file at ``resolved`` now (its
        source is the file the opener finds there, or it is a new file and there is none); else
        the disk's, through the opener. The file is looked up while Neovim answers."""
        key = str(resolved)
        state, (on_disk, stamp) = await asyncio.gather(self.editor.read_buffer(key),
                                                       asyncio.to_thread(self.opener.source_and_stamp, resolved))
        if state is not None and _serves(state, on_disk, stamp):
            _check_buffer_text(key, state.text)
            self._ledger.note_read(key, state.tick, state.text)
            return state.text
        if state is not None:
            self._voice.log("info", f"fs/read_text_file {key}: its buffer is not served: "
                            f"{_why_not(state, on_disk, stamp)}; "
                            "reading the disk")
        text = await asyncio.to_thread(self.opener.read_text, resolved)
        self._ledger.note_read(key, None, text)
        return text

    # -- fs/write_text_file --------------------------------------------------------

    async def write(self, path: str, content: str, *, origin: str = AGENT) -> None:
        """Write through the loaded buffer (one undo step, saved) or the disk; never over unseen edits.

        The write gate decides first what may land (``origin``: who writes). Every failure is a
        RequestError that says why, also when the tree changes under the path meanwhile.
        """
        try:
            await self._write(path, content, origin)
        except OSError as exc:
            raise file_error(str(path), f"not written: the path changed while it was being written "
                             f"({exc.strerror or exc})") from None

    async def _write(self, path: str, content: str, origin: str) -> None:
        resolved = self._check(path, "write")
        content = await self._admitted(resolved, content, origin)
        key = str(resolved)
        async with self._ledger.lock(key):
            if self._ledger.view_open(key):
                raise file_error(key, "not written: a three-way view for this file is still open in Neovim")
            seen = self._ledger.last_read(key)
            try:
                await self._put(resolved, content, seen.tick if seen else None, seen)
            except PathRefused as exc:
                self._voice.tell(f"refused to write {exc.path}: {exc.reason}", "warn")
                raise

    async def revert(self, path: str, before: str | None, *, force: bool = False) -> str:
        """Put ``path`` back to ``before`` (None: delete the file the agent created), as the user asked.

        Returns ``unsaved`` (the buffer has unsaved changes: nothing done unless ``force``; a file
        is never deleted under them), ``reverted`` or ``removed``.
        """
        resolved = self._check(path, "revert")
        key = str(resolved)
        if before is not None:
            before = await self._admitted(resolved, before, REVERT)
        async with self._ledger.lock(key):
            state = await self.editor.read_buffer(key)
            if state is not None and state.modified and (not force or before is None):
                return "unsaved"
            if before is None:
                await asyncio.to_thread(self.opener.remove, resolved)
                self._voice.log("info", f"reverted {key}: removed (the agent created it)")
                return "removed"
            await self._put(resolved, before, state.tick if state else None, None, record=False)
            self._voice.log("info", f"reverted {key} to its text before the turn")
            return "reverted"

    def deciding(self, path: str) -> bool:
        """Whether a three-way view of ``path`` is open (the user decides its text there)."""
        return self._ledger.view_open(path)

    async def revert_under_unsaved(self, path: str, before: str, base: str | None, theirs: str
                                   ) -> asyncio.Task[str]:
        """Put ``before`` on disk under a buffer with unsaved changes (a rewind): the buffer keeps
        them, and a three-way view (``base``: the text it was loaded from) lets the user take
        ``before`` into it, hunk by hunk or whole. Returns once the disk is written; the returned
        task ends with the view (``agent``: taken, ``mine``: kept)."""
        resolved = self._check(path, "revert")
        key = str(resolved)
        before = await self._admitted(resolved, before, REVERT)
        async with self._ledger.lock(key):
            await self._replace(resolved, before.encode("utf-8", "surrogatepass"), True)
            self._ledger.note_disk(key, fingerprint(before))
            self._voice.log("info", f"reverted {key} on disk; its buffer keeps its unsaved changes")
        return tasks.spawn(self._ask(ThreeWay(key, base, before, "disk", "", theirs=theirs)), self._voice.report,
                           f"three-way view of {key}")

    async def revert_edited(self, path: str, before: str, base: str | None, theirs: str) -> str:
        """Put ``before`` back over a file the user changed since (a rewind) only as they decide in a
        three-way view (the file loaded into a buffer for it): ``reverted``, or ``kept`` (their text)."""
        resolved = self._check(path, "revert")
        key = str(resolved)
        before = await self._admitted(resolved, before, REVERT)
        if await self._ask(ThreeWay(key, base, before, "write", "", theirs=theirs, load=True)) != "agent":
            return "kept"
        async with self._ledger.lock(key):
            state = await self.editor.read_buffer(key)
            await self._put(resolved, before, state.tick if state else None, None, record=False)
        return "reverted"

    async def revert_bytes(self, path: str, data: bytes) -> str:
        """Put back a file that is not text (a command changed it), when no buffer holds it:
        ``reverted``, or ``loaded`` (a buffer holds it: nothing done)."""
        resolved = self._check(path, "revert")
        key = str(resolved)
        await self._admitted(resolved, "", REVERT)  # the user's own write: the gate records it
        async with self._ledger.lock(key):
            if await self.editor.read_buffer(key) is not None:
                return "loaded"
            await self._replace(resolved, data, True)
            self._voice.log("info", f"reverted {key} ({len(data)} bytes, not text)")
        return "reverted"

    async def _put(self, resolved: Path, content: str, expected_tick: int | None, seen: ReadRecord | None,
                   *, record: bool = True) -> None:
        """The one way a text reaches a file: its buffer (if loaded) and the disk, through the opener."""
        key = str(resolved)
        stamp = await asyncio.to_thread(self.opener.stamp, resolved)
        with_before = record and key not in self.changes.current.files
        result = await self.editor.apply_to_buffer(key, content, expected_tick, with_before, stamp)
        if result.status == "not_loaded":
            await self._write_disk(resolved, content, record)
        elif result.status == "applied":
            await self._write_buffer(resolved, content, result, stamp, record and with_before, record)
        elif result.status == "conflict":
            await self._write_conflict(resolved, content, seen, result.text, record)
        elif result.status == "disk_changed":
            await self._write_disk_changed(resolved, content, result.text, record)
        else:  # a buffer that is not modifiable or read-only
            self._voice.tell(f"{key}: the agent's write failed: {result.text}", "error")
            raise file_error(key, f"not written: {result.text}", INTERNAL)

    async def _write_disk(self, resolved: Path, content: str, record: bool) -> None:
        key = str(resolved)
        if record:
            self.changes.current.note_baseline(key, await asyncio.to_thread(self.opener.snapshot, resolved))
        replaced = await self._replace(resolved, content.encode("utf-8"), True)
        self._wrote(key, content, None, replaced, record)

    async def _write_buffer(self, resolved: Path, content: str, result: BufferWrite, stamp: Stamp | None,
                            note_before: bool, record: bool) -> None:
        key = str(resolved)
        if note_before:
            self.changes.current.note_baseline(key, Snapshot(True, result.text))
        try:
            replaced = await self._replace(resolved, _encode(key, content, result.encoding), stamp)
        except RequestError:
            if await self.editor.finish_buffer_write(key, result.tick, None) == "kept":
                self._voice.tell(f"{key}: the agent's text stays in the buffer, unsaved (you typed in it "
                                 "while it was being written)", "warn")
            raise
        await self.editor.finish_buffer_write(key, result.tick, replaced.stamp)
        self._wrote(key, content, result.tick, replaced, record)

    async def _replace(self, resolved: Path, data: bytes, expect: Stamp | bool | None) -> Replaced:
        try:
            replaced = await asyncio.to_thread(self.opener.replace, resolved, data, expect)
        except PathRefused:
            raise
        except RequestError as exc:
            self._voice.tell(f"the agent's write failed: {exc}", "error")
            raise
        if replaced.old_links > 1:
            self._voice.tell(f"{resolved} had {replaced.old_links} hard links: acp.nvim replaced this name "
                             "only; the other names keep the old text", "warn")
        return replaced

    def _wrote(self, key: str, content: str, tick: int | None, replaced: Replaced, record: bool) -> None:
        if record:
            self.changes.current.record(key, content, "fs")
            self._ledger.note_read(key, tick, content)
        self._ledger.note_disk(key, fingerprint(content))
        where = "buffer" if tick is not None else "disk"
        self._voice.log("info", f"fs/write_text_file {key}: written ({where}, {replaced.stamp[1]} bytes)")

    async def _write_conflict(self, resolved: Path, content: str, seen: ReadRecord | None, mine: str,
                              record: bool) -> None:
        key = str(resolved)
        base = seen.text if seen and seen.text is not None else await self._disk_text(resolved)
        self._voice.tell(f"{key}: the agent's write waits for you: the buffer has unsaved changes the agent "
                         "has not read. Decide in the three-way view.", "warn")
        if await self._ask(ThreeWay(key, base, content, "write", "agent's write")) == "agent":
            await self._take_agents(resolved, content, mine, None, record)
            return
        raise RequestError(REFUSED, f"{key}: not written: the user kept their unsaved changes in Neovim; "
                           "read the file again before changing it", {"path": key, "reason": "kept"})

    async def _write_disk_changed(self, resolved: Path, content: str, mine: str, record: bool) -> None:
        key = str(resolved)
        now = await asyncio.to_thread(self.opener.snapshot, resolved)
        self._voice.tell(f"{key}: the agent's write waits for you: the file changed on disk since Neovim read "
                         "it (another program, a git pull?). Decide in the three-way view; its base is the "
                         "file on disk now.", "warn")
        request = ThreeWay(key, now.text, content, "write", "agent's write", "ON DISK now")
        if await self._ask(request) == "agent":
            await self._take_agents(resolved, content, mine, now.stamp, record)
            return
        raise RequestError(REFUSED, f"{key}: not written: the file changed on disk since Neovim read it, and the "
                           "user kept it; read the file again before changing it",
                           {"path": key, "reason": "changed on disk"})

    async def _take_agents(self, resolved: Path, content: str, mine: str, disk: Stamp | None,
                           record: bool) -> None:
        """The user took the agent's text in a three-way view (the buffer holds it now): save it."""
        key = str(resolved)
        if record:
            self.changes.current.note_baseline(key, Snapshot(True, mine))
        if disk is not None:
            await self.editor.sync_buffer(key, disk)  # the user has seen the disk: it is no surprise now
        state = await self.editor.read_buffer(key)
        self._ledger.forget_read(key)
        await self._put(resolved, content, state.tick if state else None, None, record=record)

    async def _ask(self, request: ThreeWay) -> str:
        self._ledger.open_view(request.path)
        try:
            outcome = await self._voice.three_way(request)
        finally:
            self._ledger.close_view(request.path)
        self._voice.log("info", f"fs/write_text_file {request.path}: three-way view closed: {outcome}")
        return outcome

    async def _disk_text(self, resolved: Path) -> str | None:
        return (await asyncio.to_thread(self.opener.snapshot, resolved)).text

    async def _admitted(self, resolved: Path, content: str, origin: str) -> str:
        if self.gate is None:
            return content
        try:
            return await self.gate.admit(resolved, content, origin)
        except RequestError as exc:
            self._voice.tell(f"refused the agent's write: {exc}", "warn")
            raise

    # -- helpers -------------------------------------------------------------------

    def _check(self, path: str, action: str) -> Path:
        try:
            return self.policy.check(path)
        except OSError as exc:  # a symlink flipped while it was being resolved
            raise PathRefused(str(path), f"the path changed while it was being checked ({exc.strerror or exc})") \
                from None
        except PathRefused as exc:
            self._voice.tell(f"refused to {action} {exc.path}: {exc.reason}", "warn")
            raise
        except RequestError as exc:
            self._voice.log("info", f"fs {action} {path}: {exc}")
            raise


def _serves(state: BufferState, on_disk: FileId | None, stamp: Stamp | None) -> bool:
    """Whether the buffer is the view of the file at its path now: the same file (an inode number
    can be reused once its file is gone, so a buffer without unsaved changes must also agree with
    the file's stamp: it holds nothing the disk does not)."""
    if state.source is None or state.source != on_disk:
        return False
    return state.modified or state.disk is None or stamp is None or tuple(state.disk) == stamp


def _why_not(state: BufferState, on_disk: FileId | None, stamp: Stamp | None) -> str:
    if state.source is not None and state.source == on_disk and state.disk != stamp:
        return "the file changed on disk since the buffer read it (and the buffer holds no unsaved change)"
    if state.source is None:
        return "Neovim does not know which file its text came from"
    if on_disk is None:
        return "the file at this path may not be read (symlink, hard links, not a regular file)"
    if on_disk == NEW_FILE:
        return "the file it was loaded from is no longer at this path"
    if state.source == NEW_FILE:
        return "it is a new file's buffer, and a file was created at this path since"
    return "it was loaded from another file than the one at this path now"


def _check_buffer_text(key: str, text: str) -> None:
    if len(text) > MAX_FILE_BYTES:
        raise file_error(key, f"buffer too large ({len(text)} characters; the limit is {MAX_FILE_BYTES})")
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise file_error(key, f"buffer is not valid UTF-8 text (invalid byte at offset {exc.start})") from None


def _encode(key: str, content: str, encoding: str) -> bytes:
    """The buffer's text in its 'fileencoding' ('' and the UTF-8 spellings: UTF-8)."""
    name = encoding.lower().replace("-", "").replace("_", "")
    if name in ("", "utf8"):
        return content.encode("utf-8")
    try:
        return content.encode(codecs.lookup(encoding).name)
    except LookupError:
        raise file_error(key, f"not written: the buffer's 'fileencoding' {encoding!r} is unknown here",
                         INTERNAL) from None
    except UnicodeEncodeError as exc:
        raise file_error(key, f"not written: the text cannot be written as {encoding} (character at offset "
                         f"{exc.start})", INTERNAL) from None
