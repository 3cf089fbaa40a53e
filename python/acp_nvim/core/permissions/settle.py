"""After a review: the answer it gives, what is kept, what the agent is told, what is corrected.

Rejected proposals are kept as files under the state folder. Decisions go to ``AcceptedEdits``
for the rest of the turn (the write gate lets only the accepted text land); agents that write
the disk themselves are corrected on every final status of the tool call (``completed`` and
``failed``): a file that differs from what the user accepted gets the accepted text, and after a
reject a file changed meanwhile goes back to the review's base. Where the user changed or
rejected the agent's edit, a note goes out with the next prompt; so do the user's review comments
(``comments.py``), which the chat also draws under the tool call.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from stat import S_ISDIR, S_ISREG
from typing import Protocol

from acp import text_block
from acp.helpers import ContentBlock
from acp.schema import RequestPermissionResponse

from ..files.paths import PathPolicy
from ..port import FileReview, PermissionQuestion, Review, ReviewVerdict
from ..tasks import ErrorReporter, spawn
from ..transcript.conversation import Conversation
from ..transcript.tool_calls import ToolCallState
from .accepted import AcceptedEdit, AcceptedEdits, agent_note
from .answers import cancelled, selected, selected_or_cancelled
from .comments import chat_line, note_for_agent
from .policy import ALLOW_ONCE_FIRST, REJECT_ONCE_FIRST, RejectedSettings, pick
from .review import disk_text
from .rules import write_atomic

REJECTED_DIR = ("acp_nvim", "rejected")

StateDir = Callable[[], Awaitable[str | None]]
"""The editor's state folder, or None when it has none."""


class FileAccess(Protocol):
    """What permissions need of the session's files (``FileService``)."""

    @property
    def policy(self) -> PathPolicy: ...

    async def write(self, path: str, content: str, *, origin: str = ...) -> None: ...

    async def revert(self, path: str, before: str | None, *, force: bool = False) -> str: ...


class Settlement:
    """The outcome of reviews of one session, from the verdict until the agent's next prompt."""

    def __init__(self, key: str, transcript: Conversation, files: FileAccess, accepted: AcceptedEdits,
                 state_dir: StateDir, report: ErrorReporter, keep: RejectedSettings | None = None) -> None:
        self.accepted = accepted
        self._keep = keep or RejectedSettings()
        self._key = key
        self._transcript = transcript
        self._files = files
        self._state_dir = state_dir
        self._report = report
        self._notes: list[str] = []

    async def settle(self, question: PermissionQuestion, state: ToolCallState, review: Review,
                     verdict: ReviewVerdict) -> RequestPermissionResponse:
        """The answer a verdict gives; rejected files are kept, accepted ones wait for the write."""
        transcript = self._transcript
        texts = {file.path: file.text for file in verdict.files}
        rejected = [file for file in review.files if texts.get(file.path) is None]
        await self._keep_rejected(review, rejected)
        self._comments(question, state, verdict)
        if not verdict.accepted:
            refused = [AcceptedEdit(state.tool_call_id, file.path, file.agent_text, None, file.current)
                       for file in review.files]
            for edit in refused:
                await self.accepted.refuse(edit)
            spawn(self._restore(refused), self._report, f"{self._key} rejected review")
            transcript.notice(f"review: you rejected {question.title}", "info")
            return selected_or_cancelled(pick(question.choices, REJECT_ONCE_FIRST))
        choice = pick(question.choices, ALLOW_ONCE_FIRST)
        if choice is None:
            transcript.notice("the agent offered no allow option: answered cancelled", "error")
            return cancelled()
        for file in review.files:
            await self._record(state.tool_call_id, file, texts.get(file.path))
        accepted = len(review.files) - len(rejected)
        transcript.notice(f"review: you accepted {accepted} of {len(review.files)} file(s) of {question.title}",
                          "info")
        return selected(choice)

    def _comments(self, question: PermissionQuestion, state: ToolCallState, verdict: ReviewVerdict) -> None:
        """The user's review comments: drawn under the tool call, and sent with the next prompt."""
        comments = verdict.comments
        if not comments:
            return
        answer = "accepted" if verdict.accepted else "rejected"
        self._notes.append(note_for_agent(question.title, answer, comments))
        self._transcript.tools.comment_tool_call(state.tool_call_id, [chat_line(comment) for comment in comments])
        self._transcript.notice(f"{len(comments)} review comment(s) for the agent, sent with your next prompt",
                                "info")

    def start_turn(self) -> list[ContentBlock]:
        """A new prompt: blocks telling the agent how its reviewed edits really landed (once).

        Accepted texts still waiting for a write expire here: their turn is over.
        """
        self.accepted.clear()
        if not self._notes:
            return []
        notes, self._notes = self._notes, []
        return [text_block("[Note from the editor, acp.nvim]\n" + "\n\n".join(notes))]

    def on_tool_call(self, state: ToolCallState) -> None:
        """A tool call changed: on each final status, make its reviewed files what the user decided."""
        if state.status not in ("completed", "failed"):
            return
        edits = self.accepted.of_tool_call(state.tool_call_id)
        if edits:
            spawn(self._correct(edits, failed=state.status == "failed"), self._report, f"{self._key} review write")

    async def _record(self, tool_call_id: str, file: FileReview, text: str | None) -> None:
        if file.snippet_only and text is not None:
            return  # shown as sent, read-only: no whole text to hold the agent's write to
        await self.accepted.add(AcceptedEdit(tool_call_id, file.path, file.agent_text, text, file.current))
        note = agent_note(file.path, file.agent_text, text)
        if note:
            self._notes.append(note)
            self._transcript.notice(f"note for the agent, sent with your next prompt: {note}", "info")

    async def _keep_rejected(self, review: Review, files: list[FileReview]) -> None:
        if not files:
            return
        state_dir = await self._state_dir()
        for file in files:
            where = await self._save_copy(state_dir, review, file) if state_dir else None
            kept = f"kept in {where} (:edit it to see it)" if where else "not kept: no state folder"
            self._transcript.notice(f"rejected proposal for {file.path} {kept}", "info")
        if state_dir:
            await self._prune(Path(state_dir, *REJECTED_DIR))

    async def _prune(self, folder: Path) -> None:
        keep = self._keep
        try:
            removed = await asyncio.to_thread(prune, folder, keep.max_files, keep.max_age_days * 86400,
                                              keep.max_bytes)
        except OSError as exc:
            self._transcript.notice(f"could not prune the rejected proposals in {folder}: {exc}", "error")
            return
        if removed:
            self._transcript.notice(f"pruned {removed} old rejected proposal(s) from {folder} "
                                    "(permissions.rejected sets how many are kept)", "info")

    async def _save_copy(self, state_dir: str, review: Review, file: FileReview) -> str | None:
        folder = Path(state_dir, *REJECTED_DIR, re.sub(r"[^\w.-]+", "-", review.session_key))
        target = folder / f"{review.number}-{Path(file.path).name}"
        try:
            await asyncio.to_thread(_write_copy, target, file.agent_text)
        except OSError as exc:
            self._transcript.notice(f"could not keep the rejected proposal: {exc}", "error")
            return None
        return str(target)

    async def _correct(self, edits: list[AcceptedEdit], *, failed: bool = False) -> None:
        """The tool call ended: a file that differs from what the user decided is put back to it
        (after ``failed``, only a file the agent changed: one still at its base is left alone)."""
        for edit in edits:
            now = await asyncio.to_thread(disk_text, edit.path, self._files.policy)
            target = edit.target
            if now == target or (failed and now == edit.base):
                continue
            if edit.text is not None:
                await self.put_back(edit.path, target, "the text you accepted in the review")
            else:
                await self.put_back(edit.path, target, "its text before the review you rejected", restore=True)

    async def _restore(self, edits: list[AcceptedEdit]) -> None:
        """A rejected review: a file the agent changed on disk while it was open goes back to its base."""
        for edit in edits:
            if await asyncio.to_thread(disk_text, edit.path, self._files.policy) != edit.base:
                await self.put_back(edit.path, edit.base, "its text before the review you rejected", restore=True)

    async def put_back(self, path: str, text: str | None, what: str, *, restore: bool = False) -> None:
        """Make ``path`` hold ``text`` (None: remove the file), telling the user; never over unsaved
        edits. ``restore``: back to a base (as ``:Ai changes`` reverts: not an agent change)."""
        try:
            if restore or text is None:
                done = await self._files.revert(path, text)
            else:
                await self._files.write(path, text, origin="correction")
                done = "reverted"
        except Exception as exc:
            self._transcript.notice(f"could not put {what} back in {path}: {exc}", "error")
            return
        if done == "unsaved":
            self._transcript.notice(f"{path} was not put back to {what}: its buffer has unsaved changes", "error")
            return
        self._transcript.notice(f"{path} now holds {what}" if text is not None else f"{path} was removed ({what})",
                                "info")


def prune(folder: Path, max_files: int, max_age_s: float, max_bytes: int, now: float | None = None) -> int:
    """Delete kept copies under ``folder``: older than ``max_age_s``, then the oldest beyond
    ``max_files`` or ``max_bytes`` in all (0 turns a bound off). Returns how many were deleted."""
    now = time.time() if now is None else now
    if not folder.is_dir():
        return 0
    copies = sorted(_copies(folder), key=lambda item: item[1], reverse=True)  # newest first
    removed, count, size = 0, 0, 0
    for path, mtime, length in copies:
        count, size = count + 1, size + length
        too_old = max_age_s > 0 and now - mtime > max_age_s
        if too_old or (max_files and count > max_files) or (max_bytes and size > max_bytes):
            path.unlink(missing_ok=True)
            removed += 1
            count, size = count - 1, size - length
    for sub in folder.iterdir():
        if sub.is_dir() and not sub.is_symlink() and not any(sub.iterdir()):
            with contextlib.suppress(OSError):  # another session may just have kept a copy there
                sub.rmdir()
    return removed


def _copies(folder: Path, depth: int = 2) -> list[tuple[Path, float, int]]:
    """(path, mtime, size) of every kept copy: regular files one or two levels down, links never followed."""
    found: list[tuple[Path, float, int]] = []
    if depth == 0 or not S_ISDIR(folder.lstat().st_mode):
        return found
    for path in folder.iterdir():
        stat = path.lstat()
        if S_ISREG(stat.st_mode):
            found.append((path, stat.st_mtime, stat.st_size))
        elif S_ISDIR(stat.st_mode):
            found += _copies(path, depth - 1)
    return found


def _write_copy(path: Path, text: str) -> None:
    write_atomic(path, text.encode("utf-8"))  # mode 0600: a proposal may hold what the agent read
