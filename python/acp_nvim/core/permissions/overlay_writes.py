"""A boxed agent's own disk writes are proposals: each change in its overlay goes through the write gate.

The overlay (``core/box/overlay.py``) is read after each tool call update and at each turn's end. A text
file the agent wrote is written by ``FileService.write`` as the agent's, exactly like
``fs/write_text_file`` (the write gate decides: a review under ``ask``, at once under
``auto-edit``, a review under every policy for a file that configures execution; a loaded buffer
gets the text, never over unsaved edits). A deletion, content that is not text and a new exec bit
go to the gate's ``propose`` (the exec bit is reviewed under every policy). Once decided, the
agent's view is made the user's file again through the box's own mount: accepted, the agent sees
the text that landed; rejected, it sees the user's file as it was (or none).
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from acp import RequestError

from ..box.overlay import EXEC_BITS, MAX_PROPOSED_BYTES, Change, MergedView, Overlay, box_pid, fingerprint
from ..files.changes import FileChange
from ..files.service import CORRECTION, FileService
from ..log.ring import LogRing
from ..tasks import ErrorReporter, spawn
from .write_gate import WriteGate

Where = Callable[[], tuple[Overlay | None, int | None]]
"""The current agent process's overlay and pid (bubblewrap's), or (None, None) unboxed."""
Tell = Callable[[str], None]


class OverlayProposals:
    """Turns the changes in one session's overlay into writes through its write gate."""

    def __init__(self, where: Where, files: FileService, gate: WriteGate, log: LogRing, tell: Tell,
                 report: ErrorReporter) -> None:
        self._where = where
        self._files = files
        self._gate = gate
        self._log = log
        self._tell = tell
        self._report = report
        self._pending: set[str] = set()
        self._scanning: asyncio.Task[None] | None = None
        self._again = False
        self.decided: list[tuple[str, str]] = []
        """(path, accepted/rejected/not carried over), newest last: what became of each proposal."""

    def follow(self, _moment: str) -> None:
        """The reconciler's follower: after a tool call update and at a turn's end the overlay is read."""
        self.poke()

    async def before_turn(self, loaded: list[str]) -> None:
        """Before a prompt is sent, the agent's view of the loaded files is brought up to the user's
        (saved in Neovim since: a new file renamed over the old one, which a mounted overlay that
        looked at the file before does not see)."""
        overlay, pid = self._where()
        if overlay is not None and pid is not None and loaded:
            await asyncio.to_thread(_refresh, overlay, pid, loaded)

    def user_wrote(self, _turn: int, change: FileChange) -> None:
        """A changeset listener: acp.nvim wrote the user's file (``fs/write_text_file``, an accepted
        review): the agent sees it at once."""
        if change.via != "disk":
            self.refresh([change.path])

    def refresh(self, paths: Iterable[str]) -> None:
        """Make the agent's view of each of ``paths`` the user's file where it differs and the agent
        has no change of its own there (a file replaced behind a mounted overlay is not seen again)."""
        overlay, pid = self._where()
        wanted = list(paths)
        if overlay is None or pid is None or not wanted:
            return
        spawn(asyncio.to_thread(_refresh, overlay, pid, wanted), self._report, "the agent's view of your files")

    def poke(self) -> None:
        """Read the overlay soon (a tool call moved on, a turn ended); coalesced."""
        overlay, _pid = self._where()
        if overlay is None:
            return
        if self._scanning is not None and not self._scanning.done():
            self._again = True
            return
        self._scanning = spawn(self._scan(), self._report, "reading the agent's overlay")

    async def settled(self) -> None:
        """Wait until the overlay has been read and every proposal decided (for tests and the bench)."""
        while (self._scanning is not None and not self._scanning.done()) or self._pending:
            await asyncio.sleep(0.02)

    async def _scan(self) -> None:
        while True:
            self._again = False
            overlay, pid = self._where()
            if overlay is None:
                return
            found = await asyncio.to_thread(overlay.changes)
            ours = [c.path for c in found if overlay.synced.get(c.path) == fingerprint(c.data, c.executable)]
            if ours and pid is not None:
                await asyncio.to_thread(_refresh, overlay, pid, ours)  # the user's file moved on since
            for change in found:
                if change.path not in self._pending and change.path not in ours:
                    self._pending.add(change.path)
                    spawn(self._propose(overlay, pid, change), self._report, f"proposal of {change.path}")
            if not self._again:
                return

    async def _propose(self, overlay: Overlay, pid: int | None, change: Change) -> None:
        try:
            accepted = await self._decide(change)
        except RequestError as exc:
            self._log.add("info", "lifecycle", f"overlay: {change.path}: not written: {exc}")
            accepted = False
        except OSError as exc:
            self._log.add("warn", "lifecycle", f"overlay: {change.path}: not written: {exc.strerror or exc}")
            accepted = False
        changed_again = False
        try:
            changed_again = not await asyncio.to_thread(_follow_user, overlay, pid, change)
        except (OSError, ValueError) as exc:
            self._log.add("warn", "lifecycle", f"overlay: {change.path}: the agent's view was not updated: {exc}")
        finally:
            self._pending.discard(change.path)
        outcome = "accepted" if accepted else ("not carried over" if change.kind in ("symlink", "large")
                                                else "rejected")
        self.decided.append((change.path, outcome))
        self._log.add("info", "lifecycle", f"overlay: {change.path} ({change.kind}): {outcome}")
        if changed_again:
            self.poke()

    async def _decide(self, change: Change) -> bool:
        path = Path(change.path)
        if change.kind in ("symlink", "large"):
            why = "a symlink" if change.kind == "symlink" else "larger than acp.nvim proposes"
            self._tell(f"{change.path}: the agent's change is not carried over to your files ({why})")
            return False
        if change.kind == "deleted":
            if not await self._gate.propose(path, "", "Delete"):
                return False
            return await self._files.revert(change.path, None) == "removed"
        new_exec = change.executable and not _executable(change.path)
        text = change.text
        if text is not None and not new_exec:
            await self._files.write(change.path, text)  # the agent's write: the gate decides
            return True
        assert change.data is not None
        shown = text if text is not None else f"(not text: {len(change.data)} bytes)\n"
        verb = "Write (executable)" if change.executable else "Write"
        if not await self._gate.propose(path, shown, verb, guarded=new_exec):
            return False
        if text is not None:
            await self._files.write(change.path, text, origin=CORRECTION)
        elif await self._files.revert_bytes(change.path, change.data) != "reverted":
            self._tell(f"{change.path}: the agent's change was accepted but not written: a buffer holds the file")
            return False
        if change.executable:
            await asyncio.to_thread(_add_exec, change.path)
        return True


def _follow_user(overlay: Overlay, pid: int | None, change: Change) -> bool:
    """Make the agent's view of ``change.path`` the user's file; False (nothing done) when the agent
    changed it again meanwhile."""
    layer = overlay.layer_of(change.path)
    if layer is None:
        return True
    if not _still(layer.upper, layer.root, change):
        return False
    inside = box_pid(pid) if pid is not None else None
    if inside is not None:
        _show_user(overlay, MergedView(inside, layer), change.path, deleted=change.kind == "deleted")
        return True
    # no process of the box is left: nothing has the overlay mounted, so its upper folder may change
    above = os.path.join(layer.upper, os.path.relpath(change.path, layer.root))
    if (os.path.lexists(above) and not os.path.isdir(above)) or os.path.islink(above):
        os.unlink(above)
    return True


def _show_user(overlay: Overlay, view: MergedView, path: str, deleted: bool = False) -> None:
    """Put the user's file at ``path`` (or none) in the agent's view, and remember it."""
    user = _user_file(path)
    if user is not None:
        view.put(path, user[0], 0o755 if user[1] else 0o644)
    elif not deleted:
        view.remove(path)
    overlay.synced[path] = fingerprint(*user) if user is not None else fingerprint(None, False)


def _refresh(overlay: Overlay, pid: int, paths: list[str]) -> None:
    inside = box_pid(pid)
    if inside is None:
        return
    for path in paths:
        layer = overlay.layer_of(path)
        if layer is None:
            continue
        view = MergedView(inside, layer)
        user, seen = _user_file(path), view.read(path)
        if (fingerprint(*user) if user else fingerprint(None, False)) == (fingerprint(*seen) if seen else
                                                                         fingerprint(None, False)):
            continue
        above = os.path.join(layer.upper, os.path.relpath(path, layer.root))
        if os.path.lexists(above):
            held = _upper_file(above)
            if held is None or fingerprint(*held) != overlay.synced.get(path):
                continue  # the agent's own change: it is proposed, not overwritten
        try:
            _show_user(overlay, view, path)
        except (OSError, ValueError):
            continue


def _user_file(path: str) -> tuple[bytes, bool] | None:
    """The user's regular file at ``path`` (content, exec bit), or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            return None
        return handle.read(MAX_PROPOSED_BYTES + 1), bool(info.st_mode & EXEC_BITS)


def _upper_file(above: str) -> tuple[bytes, bool] | None:
    return _user_file(above)


def _still(upper: str, root: str, change: Change) -> bool:
    """Whether the upper folder still holds the change that was decided."""
    above = os.path.join(upper, os.path.relpath(change.path, root))
    try:
        info = os.lstat(above)
    except OSError:
        return change.kind == "deleted"  # deleted with its folder (an opaque folder holds no entry for it)
    if change.kind == "deleted":
        return not stat.S_ISDIR(info.st_mode) and (not stat.S_ISREG(info.st_mode) or info.st_size == 0)
    if change.kind != "file":
        return True
    try:
        with open(above, "rb") as handle:
            return handle.read() == change.data
    except OSError:
        return False


def _executable(path: str) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and bool(info.st_mode & 0o111)


def _add_exec(path: str) -> None:
    info = os.lstat(path)
    if stat.S_ISREG(info.st_mode):
        os.chmod(path, stat.S_IMODE(info.st_mode) | ((info.st_mode & 0o444) >> 2))
