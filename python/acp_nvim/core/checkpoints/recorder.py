"""The checkpoints of one session: one per turn, each file's content kept before the turn changed it.

A checkpoint opens before the prompt is sent (``begin``) and closes when the turn ends
(``end``). In between, every change of a file the file side records — a write through
``fs/*`` or a buffer, a file the agent changed on disk (the reconcile) — reaches ``changed``
through the turn's changeset, which holds the file's text before its first change: that text
is kept once (copy on first touch). Commands the agent runs (a terminal through the editor, or
an ``execute`` tool call it runs itself) are bracketed by scans of the workspace roots
(``scan.py``): before the command the roots' files are stat'ed and the ones not kept yet are
kept; after it, what changed, appeared or disappeared joins the checkpoint with its content
from before the command. At the end, each file's content after the turn is kept too (the base
of a later three-way view, and how a rewind tells that a file changed since).

Contents go to the store in a background task, batched, so the turn does not wait for the
disk; ``flush`` waits until everything seen so far is stored (a rewind does). A running
checkpoint's manifest is written as its contents are, so another session's pruning never
takes them; a turn's end prunes the store to ``checkpoints.max_bytes`` when it may be over it.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from acp.schema import ToolCallUpdate

from .. import tasks
from ..files.changes import ChangeSet, FileChange
from ..files.opener import Opener
from ..files.reconcile import FINAL_STATUSES
from ..files.service import FileService
from ..port import EditorPort
from ..transcript.conversation import Conversation
from ..transcript.tool_calls import ToolCallState
from .contents import ContentKeeper, keep_texts
from .errors import CheckpointError
from .lineage import Lineage
from .model import ABSENT_REF, DONE, RUNNING, UNKNOWN_REF, Checkpoint, FileEntry, Ref
from .scan import Scan, compare, scan
from .settings import CheckpointSettings
from .store import CheckpointStore

COMMAND = "command"
"""``via`` of a file a command changed (found by the scans around it)."""
BATCH_DELAY = 0.5
"""Seconds the contents of a running turn's first changes wait to be stored together (a turn that
changes many files writes its manifest a few times, not once per file)."""
PRUNE_EVERY = 16
"""A turn's end prunes the store when it may be over its bound, and every PRUNE_EVERY turns anyway
(another Neovim may write to the same store)."""
MAX_CHANGESETS = 32
"""Changesets mapped to their checkpoints (the change log keeps fewer)."""

Report = Callable[[str], None]
Put = Callable[[bytes], str]
"""Keeps a content in the store (within a batch); its digest."""
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class _Before:
    """A file's first change in a checkpoint, waiting for its content to be stored."""

    checkpoint: Checkpoint
    entry: FileEntry
    known: bool
    text: str | None


@dataclass(slots=True)
class _Snapshot:
    """A scan before a command, with the content of every file it found (by reference)."""

    checkpoint: Checkpoint
    scan: Scan
    refs: dict[str, Ref]


class Recorder:
    """Opens, fills and closes the checkpoints of one session; holds them in memory, newest last."""

    def __init__(self, key: str, cwd: str, settings: CheckpointSettings, editor: EditorPort, files: FileService,
                 transcript: Conversation, unsaved: Callable[[], set[str]], report: Report) -> None:
        self.key = key
        self.cwd = cwd
        self.settings = settings
        self.checkpoints: list[Checkpoint] = []
        self._editor = editor
        self._opener: Opener = files.opener
        self._transcript = transcript
        self._unsaved = unsaved
        self._report = report
        self._store: CheckpointStore | None = None
        self._store_known = False
        self._current: Checkpoint | None = None
        self._of_changeset: OrderedDict[int, Checkpoint] = OrderedDict()
        self._befores: list[_Before] = []
        self._jobs: deque[Callable[[], Awaitable[None]]] = deque()
        self._writer: asyncio.Task[None] | None = None
        self._batch: asyncio.TimerHandle | None = None
        self._contents = ContentKeeper(files.opener, settings)
        self._commands: dict[str, asyncio.Task[_Snapshot | None]] = {}
        self._comparing: set[asyncio.Task[None]] = set()
        self._scans = CommandScans(self)
        self._closing: set[asyncio.Task[None]] = set()
        self._failed = False
        self._finished = 0
        self.lineage = Lineage(self.checkpoints, transcript, report)
        files.changes.listeners.append(self.changed)

    @property
    def enabled(self) -> bool:
        return self.settings.enabled

    @property
    def store_now(self) -> CheckpointStore | None:
        """The store, once a turn opened it (None before, or when checkpoints are off)."""
        return self._store

    async def store(self) -> CheckpointStore | None:
        """The store of this working directory (None: checkpoints are off, or the editor keeps no state)."""
        if not self._store_known and self.settings.enabled:
            state_dir = await self._editor.state_dir()
            self._store = CheckpointStore(state_dir, self.cwd) if state_dir else None
            self._store_known = True
        return self._store

    # -- the turn ------------------------------------------------------------------

    async def begin(self, prompt: str, first_block: int, session_id: str | None, changeset: ChangeSet) -> None:
        """Open the checkpoint of the turn about to be sent (after the file side began the turn)."""
        self._current = None
        try:
            if await self.store() is None:
                return
            if self.lineage.adopting is not None:  # the turns of a reopened session are numbered first
                await asyncio.wait({self.lineage.adopting})
        except Exception as exc:  # the editor went away: the turn goes on without a checkpoint
            self._fail(exc)
            return
        number = self.checkpoints[-1].turn + 1 if self.checkpoints else 1
        checkpoint = self.lineage.turn(number, prompt, first_block, session_id)
        self.checkpoints.append(checkpoint)
        self._current = checkpoint
        self._of_changeset[changeset.turn] = checkpoint
        while len(self._of_changeset) > MAX_CHANGESETS:
            self._of_changeset.popitem(last=False)

    def end(self, sent: bool, reconciled: Awaitable[None] | None = None) -> None:
        """The turn ended: close its checkpoint once the reconcile of its end is done (a prompt the
        agent never got is no turn: its checkpoint goes, and its number is the next one's)."""
        checkpoint, self._current = self._current, None
        for token in [t for t in self._commands if t.startswith("tool ")]:
            self.after_command(token)  # a tool call the turn's end cut short (cancelled): scanned now
        if checkpoint is None:
            return
        if not sent:
            self.checkpoints.remove(checkpoint)
            self._of_changeset = OrderedDict((k, c) for k, c in self._of_changeset.items() if c is not checkpoint)
            return
        checkpoint.last_block = self._transcript.blocks[-1].id if self._transcript.blocks else checkpoint.first_block
        checkpoint.message_id, checkpoint.last_message_id = self._message_ids(checkpoint)

        async def close() -> None:
            if reconciled is not None:
                await asyncio.wait({asyncio.ensure_future(reconciled)})
            checkpoint.state = DONE
            self._enqueue(lambda: self._finish(checkpoint))
        self._closing.add(tasks.spawn(close(), self._report, f"{self.key} checkpoint of turn {checkpoint.turn}"))

    def _message_ids(self, checkpoint: Checkpoint) -> tuple[str | None, str | None]:
        """The turn's first ``messageId`` and the last one of the agent's answer (its blocks, newest first)."""
        first: str | None = None
        last: str | None = None
        for block in reversed(self._transcript.blocks):
            if block.id < checkpoint.first_block:
                break
            if block.id > checkpoint.last_block or block.message_id is None:
                continue
            first = block.message_id
            if last is None and block.kind == "agent":
                last = block.message_id
        return first, last

    # -- changes the file side saw -----------------------------------------------------

    def changed(self, turn: int, change: FileChange) -> None:
        """A changeset listener: a file changed in changeset ``turn``."""
        checkpoint = self._of_changeset.get(turn)
        if checkpoint is None:
            return
        if change.path not in checkpoint.files:
            entry = FileEntry(change.path, UNKNOWN_REF, via=change.via, unsaved=change.path in self._unsaved())
            checkpoint.files[change.path] = entry
            self._befores.append(_Before(checkpoint, entry, change.known, change.before))
        if checkpoint.state != RUNNING:  # a late change (a reconcile after the answer): close it again
            self._enqueue(lambda: self._finish(checkpoint))
        elif self._batch is None:  # the texts wait in the changeset; kept together, not one by one
            self._batch = asyncio.get_running_loop().call_later(BATCH_DELAY, self._kick)

    # -- commands ------------------------------------------------------------------

    async def before_command(self, command: str) -> None:
        """A command is about to run (a terminal the editor starts): scan the roots first."""
        await self._scans.before_command(command)

    def after_command(self, command: str) -> None:
        """The command ended: what changed since its scan joins the checkpoint that scan belongs to."""
        task = self._commands.pop(command, None)
        if task is not None:
            self._comparing = {t for t in self._comparing if not t.done()}
            self._comparing.add(tasks.spawn(self._scans.compare(task), self._report,
                                            f"{self.key} scan after {command}"))

    def observe(self, state: ToolCallState) -> None:
        """A tool call observer: an ``execute`` call the agent runs itself is bracketed by scans."""
        self._scans.observe(state)

    async def around_permission(self, tool_call: ToolCallUpdate, answer: Awaitable[T]) -> T:
        """A permission request: for a command, the answer goes back once the roots are scanned."""
        return await self._scans.around_permission(tool_call, answer)

    # -- the store, in the background ----------------------------------------------------

    def _enqueue(self, job: Callable[[], Awaitable[None]]) -> None:
        self._jobs.append(job)
        self._kick()

    def _kick(self) -> None:
        if self._batch is not None:
            self._batch.cancel()
            self._batch = None
        if self._writer is None or self._writer.done():
            self._writer = tasks.spawn(self._drain(), self._report, f"{self.key} checkpoints")

    async def flush(self) -> None:
        """Wait until every content and manifest seen so far is stored (and the scans have ended, and
        the turns of a reopened session are taken over)."""
        await self.lineage.adopted()
        if self._befores:
            self._kick()
        while True:
            self._closing = {t for t in self._closing if not t.done()}
            busy = [t for t in [*self._closing, *self._commands.values(), *self._comparing, self._writer]
                    if t is not None and not t.done()]
            if not busy:
                return
            await asyncio.wait(busy)

    @property
    def storing(self) -> bool:
        """Something seen is not stored yet (``flush`` waits for it)."""
        busy = [*self._closing, *self._commands.values(), *self._comparing, self._writer, self.lineage.adopting]
        return bool(self._befores or self._jobs) or any(t is not None and not t.done() for t in busy)

    async def settle(self) -> None:
        """``flush``, then everything stored so far on disk (``CheckpointStore.sync``): what a rewind
        relies on survives a crash of the machine."""
        await self.flush()
        if self._store is not None:
            await asyncio.to_thread(self._store.sync)

    async def _drain(self) -> None:
        while self._befores or self._jobs:
            if self._befores:
                batch, self._befores = self._befores, []
                await self._keep_befores(batch)
                continue
            job = self._jobs.popleft()
            try:
                await job()
            except (OSError, CheckpointError) as exc:
                self._fail(exc)

    async def _keep_befores(self, batch: list[_Before]) -> None:
        store = await self.store()
        if store is None:
            return
        cap = self.settings.max_file_bytes
        try:
            refs = await asyncio.to_thread(keep_texts, store, [(b.known, b.text) for b in batch], cap)
        except OSError as exc:
            self._fail(exc)
            return
        for before, ref in zip(batch, refs, strict=True):
            before.entry.before = ref
        for checkpoint in {id(b.checkpoint): b.checkpoint for b in batch}.values():
            if checkpoint.state == RUNNING:
                await self._save(checkpoint)

    async def _finish(self, checkpoint: Checkpoint) -> None:
        """Keep each file's content after the turn (as the disk holds it: a command may have changed
        a file the agent wrote before), write the manifest, prune the store."""
        store = await self.store()
        if store is None:
            return
        entries = list(checkpoint.files.values())
        afters = await asyncio.to_thread(self._contents.read_all, store, [e.path for e in entries])
        for entry, after in zip(entries, afters, strict=True):
            entry.after = after
        await self._save(checkpoint)
        self._finished += 1
        if store.estimate is not None and store.estimate <= self.settings.max_bytes \
                and self._finished % PRUNE_EVERY:
            return  # within the bound as far as this process knows
        dropped = await asyncio.to_thread(store.prune, self.settings.max_bytes)
        if dropped:
            gone = set(dropped)
            for old in self.checkpoints:
                if old.name in gone:
                    old.pruned = True

    async def _save(self, checkpoint: Checkpoint) -> None:
        store = await self.store()
        if store is None or checkpoint.pruned:
            return
        text = checkpoint.to_json(self.key)
        try:
            await asyncio.to_thread(store.write_manifest, checkpoint.name, text)
        except OSError as exc:
            self._fail(exc)

    def _fail(self, exc: Exception) -> None:
        """Once per session: the store cannot be written (a full disk, a read-only state folder)."""
        if not self._failed:
            self._failed = True
            self._report(f"{self.key}: checkpoints could not be stored: {exc}; a rewind may not find "
                         "every file")

    def resave(self, checkpoints: list[Checkpoint]) -> None:
        """Store these checkpoints again (a rewind took them back, or its undo brought them back): a
        session reopened later sees them as they are."""
        for checkpoint in checkpoints:
            if checkpoint.state != RUNNING:
                self._enqueue(lambda c=checkpoint: self._save(c))  # type: ignore[misc]

    # -- a reopened session's turns ----------------------------------------------------------

    def moved(self, session_id: str | None) -> None:
        """The conversation goes on in ACP session ``session_id`` (a rewind reopened it): store the
        link that lets reopening it later find this recorder's turns (``Lineage.link``)."""
        if session_id is not None and self.checkpoints and self._store is not None:
            link = self.lineage.link(session_id)
            self._enqueue(lambda: self._save(link))

    def adopt(self, session_id: str) -> None:
        """Take over the checkpoints of ACP session ``session_id`` (``:Ai resume``): its earlier
        turns are listed and can be rewound to; a turn sent meanwhile waits for them."""
        self.lineage.adopt(self.store, session_id, self._fail, self.key)

    # -- lookups -------------------------------------------------------------------

    def find(self, turn: int) -> Checkpoint | None:
        return next((c for c in self.checkpoints if c.turn == turn), None)

    def of_block(self, block_id: int) -> Checkpoint | None:
        """The checkpoint of the turn whose prompt block is ``block_id``."""
        self.lineage.place()
        return next((c for c in self.checkpoints if c.first_block == block_id), None)


class CommandScans:
    """The scans of the workspace roots around the commands of a recorder's turns: before a command
    its files are kept, after it what changed joins the checkpoint (``scan.py``)."""

    def __init__(self, recorder: Recorder) -> None:
        self._recorder = recorder
        self.key, self.settings, self._report = recorder.key, recorder.settings, recorder._report
        self._opener, self._contents, self._unsaved = recorder._opener, recorder._contents, recorder._unsaved
        self._transcript = recorder._transcript
        self._commands = recorder._commands
        """The recorder's scans by command, shared (its turn's end and ``flush`` read them)."""

    async def before_command(self, command: str) -> None:
        """A command is about to run (a terminal the editor starts): scan the roots first."""
        task = self._commands.get(command)
        if task is None:
            task = self._commands[command] = tasks.spawn(self._snapshot(), self._report,
                                                         f"{self.key} scan before {command}")
        await asyncio.wait({task})

    def observe(self, state: ToolCallState) -> None:
        """A tool call observer: an ``execute`` call the agent runs itself is bracketed by scans
        (from its first update until it ends: best effort, the agent may run it at once)."""
        if state.kind != "execute":
            return
        token = f"tool {state.tool_call_id}"
        if state.status in FINAL_STATUSES:
            self._recorder.after_command(token)
        elif token not in self._commands and self._recorder._current is not None:
            self._commands[token] = tasks.spawn(self._snapshot(), self._report, f"{self.key} scan before {token}")

    async def around_permission(self, tool_call: ToolCallUpdate, answer: Awaitable[T]) -> T:
        """A permission request: for a command (``execute``), the roots are scanned while the user is
        asked, and the answer goes back to the agent (which then runs the command) only once the scan
        is done; the scan's other end is the tool call's end (``observe``)."""
        known = self._transcript.tool_calls.get(tool_call.tool_call_id)
        kind = tool_call.kind or (known.kind if known is not None else None)
        token = f"tool {tool_call.tool_call_id}"
        if kind == "execute" and self._recorder._current is not None and token not in self._commands:
            self._commands[token] = tasks.spawn(self._snapshot(), self._report, f"{self.key} scan before {token}")
        result = await answer
        scan = self._commands.get(token)
        if scan is not None:
            await asyncio.wait({scan})
        return result

    async def _snapshot(self) -> _Snapshot | None:
        checkpoint = self._recorder._current
        store = await self._recorder.store()
        limit = self.settings.scan_max_files
        if checkpoint is None or store is None or limit <= 0:
            return None
        found, refs = await asyncio.to_thread(self._contents.scan_and_keep, store, list(self._opener.roots), limit)
        snap = _Snapshot(checkpoint, found, refs)
        checkpoint.pending |= {r.digest for r in snap.refs.values() if r.kept}
        if snap.scan.cut:
            note = f"a command's scan stopped at checkpoints.scan_max_files ({limit} files)"
            if note not in checkpoint.notes:
                checkpoint.notes.append(note)
        await self._recorder._save(checkpoint)
        return snap

    async def compare(self, started: asyncio.Task[_Snapshot | None]) -> None:
        await asyncio.wait({started})
        before = started.result() if not started.cancelled() and started.exception() is None else None
        if before is None:
            return
        checkpoint = before.checkpoint
        after = await asyncio.to_thread(scan, list(self._opener.roots), self.settings.scan_max_files)
        changes = compare(before.scan, after)
        for path in [*changes.changed, *changes.removed]:
            if path not in checkpoint.files:
                checkpoint.files[path] = FileEntry(path, before.refs.get(path, UNKNOWN_REF), via=COMMAND,
                                                   unsaved=path in self._unsaved())
        for path in changes.created:
            if path not in checkpoint.files:
                checkpoint.files[path] = FileEntry(path, ABSENT_REF, via=COMMAND)
        checkpoint.pending -= {r.digest for r in before.refs.values()}
        if checkpoint.state == RUNNING:
            await self._recorder._save(checkpoint)
        else:
            self._recorder._enqueue(lambda: self._recorder._finish(checkpoint))
