"""File flows: nothing the user typed or saved, and nothing on disk, is lost or overwritten unseen.

Each case is a user and an agent working on the same file; "lost" counts the user's text (an
unsaved edit, a saved file, a change made on disk by someone else) that ends up gone (the undo
history does not count: the user was not asked).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from .. import views
from ..context import Ctx
from ..driver import Editor, wait_until
from . import case

WRITE_FAILED_WORDS = ["file too large", "no space", "could not write", "write failed", "failed to write",
                      "not written", "cannot write"]
READ_ONLY_WORDS = ["permission denied", "read-only", "readonly", "not writable"]
USER_LINE = "typed by the user"
MB = 1 << 20


def _notes(ed: Editor) -> None:
    (ed.workspace / "notes.txt").write_text("line one\nline two\n")


def _open(ctx: Ctx, name: str) -> int:
    """``:tabnew`` and ``:edit`` the workspace file ``name``; its buffer number."""
    ctx.command("tabnew")
    ctx.command(f"edit {name}")
    return int(ctx.ed.lua("return vim.fn.bufnr(...)", str(ctx.ed.workspace / name)))


def _type_line(ctx: Ctx, buf: int, line: str) -> None:
    """The user adds ``line`` at the top of buffer ``buf`` (unsaved)."""
    ctx.mark(f"edit buffer {buf}")
    ctx.ed.lua("vim.api.nvim_buf_set_lines(..., 0, 0, false, { select(2, ...) })", buf, line)


def _buffer_has(ctx: Ctx, buf: int, line: str) -> bool:
    return bool(ctx.ed.lua("return vim.tbl_contains(vim.api.nvim_buf_get_lines(..., 0, -1, false), select(2, ...))",
                           buf, line))


def _write_event(ctx: Ctx, timeout: float = 15) -> dict[str, object] | None:
    found = ctx.diary.wait("write", timeout)
    return found[0] if found else None


@case(prepare=_notes)
def changes_revert_unsaved(ctx: Ctx) -> None:
    """The agent writes notes.txt; the user then edits it without saving and presses ``X`` (revert)
    on it in ``:Ai changes``. The unsaved edit is not overwritten without asking: it is kept (or the
    user declines a question), and the user is told why."""
    _start_auto_edit(ctx)
    ctx.prompt("write notes.txt 160")
    ctx.check(_write_event(ctx), "the agent's write never happened")
    buf = _open(ctx, "notes.txt")
    _type_line(ctx, buf, USER_LINE)
    ctx.command("Ai changes")
    if not ctx.check(wait_until(lambda: views.cursor_on_change(ctx.ed, "notes.txt"), 5),
                     "notes.txt is not listed in :Ai changes"):
        return
    ctx.mark("X")
    ctx.welcome_questions()  # asking before overwriting is the right thing; the harness answers <Esc> (no)
    ctx.ed.keys("X")
    wait_until(lambda: not _buffer_has(ctx, buf, USER_LINE), 3)
    if not _buffer_has(ctx, buf, USER_LINE):
        ctx.lose("X reverted notes.txt over the user's unsaved edit without asking")
    ctx.told(["unsaved", "modified", "not saved"])


@case(prepare=_notes)
def write_over_unseen_disk_change(ctx: Ctx) -> None:
    """notes.txt is open (unmodified); the agent reads it, the file then changes on disk behind
    Neovim's back (``git pull``), and the agent writes its version. The disk change is not
    overwritten unseen: the write is held (a three-way view) or refused, and the user is told."""
    _start_auto_edit(ctx)
    _open(ctx, "notes.txt")
    ctx.prompt("read-write notes.txt pulled")
    ctx.check(ctx.diary.wait("read", 10), "the agent never read notes.txt")
    path = ctx.ed.workspace / "notes.txt"
    path.write_text("line one\nline two\nline from git pull\n")
    later = time.time() + 2
    os.utime(path, (later, later))
    ctx.gate("pulled")
    wait_until(lambda: _write_event(ctx, 0) or views.threeway_open(ctx.ed), 10)
    if "line from git pull" not in path.read_text() and not views.threeway_open(ctx.ed):
        ctx.lose("the change made on disk (git pull) was overwritten by the agent's write")
    ctx.told(["on disk", "changed since", "newer"])


@case(prepare=_notes)
def user_write_during_turn(ctx: Ctx) -> None:
    """notes.txt has unsaved edits when a turn starts; during the turn the user saves it (``:w``) and
    types on. The save is the user's, not the agent's: no three-way view opens at the end of the turn,
    and ``:Ai changes`` does not list notes.txt."""
    ctx.start()
    buf = _open(ctx, "notes.txt")
    _type_line(ctx, buf, "typed before the prompt")
    ctx.prompt("slow 10")
    ctx.check(ctx.ed.wait_for_text(["tick 1"], 10, chat_only=True), "the turn did not start")
    ctx.mark(":w")
    ctx.ed.lua("vim.api.nvim_buf_call(..., function() vim.cmd('write') end)", buf)
    _type_line(ctx, buf, "typed after :w")
    ctx.told(["turn ended: end_turn"], chat_only=True)
    ctx.check(not wait_until(lambda: views.threeway_open(ctx.ed), 3), "a three-way view opened for the user's own :w")
    ctx.command("Ai changes")
    ctx.check(not wait_until(lambda: views.cursor_on_change(ctx.ed, "notes.txt"), 2),
              "the user's own :w is listed in :Ai changes as the agent's change")


def _start_auto_edit(ctx: Ctx) -> None:
    """Start with policy auto-edit: the case is about the file side, not the review an unasked
    write opens under ask."""
    ctx.start()
    ctx.command("Ai policy auto-edit")


def _disk_case(ctx: Ctx, name: str, size: int) -> dict[str, object] | None:
    _start_auto_edit(ctx)
    ctx.prompt(f"write {name} {size}")
    event = _write_event(ctx)
    ctx.check(event and not event.get("ok"), f"the agent's failed write of {name} was reported as {event}")
    return event


HOST_LIMIT = MB


def _keep_file(ed: Editor) -> None:
    (ed.workspace / "keep.txt").write_text("precious line\n" * 100)


@case(host_file_limit=HOST_LIMIT)
def disk_full_new_file(ctx: Ctx) -> None:
    """The disk fills up while a new file is written (stand-in: RLIMIT_FSIZE of 1 MiB on the Python
    host, so the write fails with EFBIG after 1 MiB). The user is told, the agent gets an error, and
    no partial file is left behind."""
    _disk_case(ctx, "big.txt", 2 * MB)
    ctx.told(WRITE_FAILED_WORDS)
    big = ctx.ed.workspace / "big.txt"
    ctx.check(not big.exists() or big.stat().st_size == 2 * MB,
              f"a partial big.txt ({big.stat().st_size if big.exists() else 0} bytes) was left behind")


@case(host_file_limit=HOST_LIMIT, prepare=_keep_file)
def write_fails_after_truncation(ctx: Ctx) -> None:
    """An agent write over an existing file fails half-way (the disk-full stand-in). The file keeps
    its old text (writes are atomic), and the user is told."""
    before = (ctx.ed.workspace / "keep.txt").read_text()
    _disk_case(ctx, "keep.txt", 2 * MB)
    after = (ctx.ed.workspace / "keep.txt").read_text()
    if after != before:
        ctx.lose(f"keep.txt lost its text: {len(after)} bytes of something else where {len(before)} were")
    ctx.told(WRITE_FAILED_WORDS)


def _read_only(ed: Editor) -> None:
    path = ed.workspace / "ro.txt"
    path.write_text("read-only text\n")
    path.chmod(0o444)


def _read_only_case(ctx: Ctx, loaded: bool) -> None:
    ctx.start()
    if loaded:
        _open(ctx, "ro.txt")
    _disk_case(ctx, "ro.txt", 200)
    if Path(ctx.ed.workspace / "ro.txt").read_text() != "read-only text\n":
        ctx.lose("the read-only file ro.txt was overwritten")
    ctx.told(READ_ONLY_WORDS)


@case(prepare=_read_only)
def readonly_file_write(ctx: Ctx) -> None:
    """The agent writes a read-only file (mode 0444) that is not loaded. The write fails with a clear
    error to the agent and the user; the file is unchanged."""
    _read_only_case(ctx, loaded=False)


@case(prepare=_read_only)
def readonly_buffer_write(ctx: Ctx) -> None:
    """As ``readonly_file_write``, with the file loaded in a buffer (the write goes through Neovim)."""
    _read_only_case(ctx, loaded=True)


@case(prepare=_notes)
def retry_rejected(ctx: Ctx) -> None:
    """The user rejects the agent's edit of notes.txt in the review (``gr``); the agent then writes the
    file anyway through ``fs/write_text_file``. The retry is refused (the agent gets an error, the
    user is told) and the file keeps its text."""
    ctx.start()
    ctx.prompt("review notes.txt")
    if not ctx.check(wait_until(lambda: views.review_open(ctx.ed), 10), "the review never opened"):
        return
    views.focus_review(ctx.ed)
    ctx.mark("gr")
    ctx.check(views.answer(ctx.ed, "gr"), "the review's keys never counted")
    event = _write_event(ctx)
    ctx.check(event and not event.get("ok"), f"the agent's retry of the rejected file was {event}")
    if "added by the agent" in (ctx.ed.workspace / "notes.txt").read_text():
        ctx.lose("the rejected edit of notes.txt landed on the agent's retry")
    ctx.told(["refus", "already rejected", "you rejected it"])


@case(prepare=_notes)
def edit_under_review(ctx: Ctx) -> None:
    """notes.txt is open; the agent's edit of it is under review, and meanwhile the user edits the
    buffer. After ``ga`` (accept), the user's edit made during the review is still there."""
    ctx.start()
    buf = _open(ctx, "notes.txt")
    ctx.prompt("review notes.txt")
    if not ctx.check(wait_until(lambda: views.review_open(ctx.ed), 10), "the review never opened"):
        return
    _type_line(ctx, buf, "edited during the review")
    views.focus_review(ctx.ed)
    ctx.mark("ga")
    ctx.check(views.answer(ctx.ed, "ga"), "the review's keys never counted")
    held = wait_until(lambda: _write_event(ctx, 0) or views.threeway_open(ctx.ed), 15)
    ctx.check(held, "the agent's write after the review never happened (nor was it held for the user)")
    if not _buffer_has(ctx, buf, "edited during the review"):
        ctx.lose("the user's edit made during the review was overwritten by the accepted proposal")
    ctx.told(["accepted"])
    if views.threeway_open(ctx.ed):
        ctx.note("the agent's write waits in a three-way view; the harness keeps the user's text (gm)")
        views.keep_mine_in_threeway(ctx.ed)


@case(prepare=_notes)
def disk_change_dirty_buffer(ctx: Ctx) -> None:
    """notes.txt has unsaved edits; the agent changes the file on disk itself and reports the tool call
    done. The buffer is not reloaded over the edits (a three-way view offers the change) and the user
    is told."""
    ctx.start()
    buf = _open(ctx, "notes.txt")
    _type_line(ctx, buf, USER_LINE)
    ctx.prompt("disk-edit notes.txt")
    ctx.told(["unsaved changes"])
    ctx.check(ctx.ed.wait_for_text(["turn ended"], 10, chat_only=True), "the turn never ended")
    if not _buffer_has(ctx, buf, USER_LINE):
        ctx.lose("the unsaved edit of notes.txt was replaced by the agent's disk change")
