"""``:Ai worktree merge``: a worktree's changes brought into the checkout through one review.

Every file that differs from where the worktree started is proposed whole, in the usual review
view: the worktree's text where the checkout still has the starting one, a three-way merge
(``git merge-file``, conflict markers included and said in the file's note) where both changed
it. Only what the user accepts is written, through the checkout's own file side: into a loaded
buffer as one undo step, never over unsaved edits the review did not show (those wait in a
three-way view), and a file deleted in the worktree is deleted only when its deletion is
accepted. Nothing is committed: the checkout's changes are the user's to commit.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from acp import RequestError

from ..files.opener import NOT_FOUND, Opener
from ..files.paths import PathPolicy
from ..files.side import FileSide
from ..port import EditorPort, FileReview, PermissionQuestion, Review, ReviewVerdict
from ..questions import REVIEW, Questions, Ticket
from . import git
from .names import WorktreeError
from .worktree import Repo, Worktree, changed, text_at

MAX_FILE_BYTES = 8 * 1024 * 1024
"""A larger file is not proposed (it is named as skipped)."""
MAX_FILES = 300
"""Files one review may hold; a worktree that changed more is merged with git itself."""
DELETED = "deleted in the worktree: accepting deletes it here"


@dataclass(slots=True)
class Plan:
    """What the review proposes, and what it leaves out and why."""

    files: list[FileReview] = field(default_factory=list)
    deletions: set[str] = field(default_factory=set)
    skipped: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Outcome:
    written: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    rejected: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()

    def words(self, branch: str) -> str:
        """The message that ends the merge."""
        done = len(self.written) + len(self.deleted)
        parts = [f"merged {done} file(s) of {branch} into the checkout (not committed)"]
        parts += [f"{len(self.rejected)} rejected"] if self.rejected else []
        parts += [f"not written: {', '.join(self.failed)}"] if self.failed else []
        parts += [f"skipped: {', '.join(self.skipped)}"] if self.skipped else []
        return "; ".join(parts)


class Merge:
    """One merge of ``worktree`` into the checkout ``repo`` (its top is where files are written)."""

    def __init__(self, repo: Repo, worktree: Worktree, editor: EditorPort, questions: Questions,
                 front: Callable[[int], None] = lambda qid: None) -> None:
        if os.path.realpath(repo.top) == os.path.realpath(worktree.path):
            raise WorktreeError(f"{worktree.name} is the checkout itself: run the merge from the checkout to "
                                "merge into (:cd there)")
        self.repo, self.worktree, self.editor, self.questions = repo, worktree, editor, questions
        self.front = front
        """Brings the review (by its question's id) to the front: the user asked for this merge."""
        self.owner = f"worktree:{worktree.name}"
        self.side = FileSide.create(editor, PathPolicy.for_workspace(repo.top), questions=questions, owner=self.owner,
                                    log=None, notice=None)

    async def run(self) -> Outcome:
        """Plan, ask (one review of every file), write what was accepted."""
        plan = await self.plan()
        if not plan.files:
            skipped = f" (skipped: {', '.join(plan.skipped)})" if plan.skipped else ""
            raise WorktreeError(f"{self.worktree.branch} changes nothing in the checkout{skipped}")
        verdict = await self.ask(self.review(plan))
        if verdict is None or verdict.error:
            raise WorktreeError(f"the merge of {self.worktree.branch} was not reviewed"
                                + (f": {verdict.error}" if verdict is not None and verdict.error else ""))
        return await self.apply(plan, verdict)

    # -- the plan --------------------------------------------------------------------------

    async def plan(self) -> Plan:
        plan = Plan()
        found = await changed(self.worktree)
        if len(found) > MAX_FILES:
            raise WorktreeError(f"{self.worktree.branch} changes {len(found)} files, more than one review can hold "
                                f"({MAX_FILES}): commit in the worktree and merge the branch with git")
        for letter, path in found:
            await self._plan_file(plan, letter, path)
        return plan

    async def _plan_file(self, plan: Plan, letter: str, path: str) -> None:
        target = os.path.join(self.repo.top, path)
        try:
            new = None if letter == "D" else await self._worktree_file(path)
            current = await self._current(target)
        except RequestError as exc:
            plan.skipped.append(f"{path} ({_reason(exc)})")
            return
        base = await text_at(self.worktree, path)
        texts = [_text(blob) for blob in (base, new)]
        if any(blob is not None and text is None for blob, text in zip((base, new), texts, strict=True)):
            plan.skipped.append(f"{path} (not UTF-8 text, or over {MAX_FILE_BYTES // (1024 * 1024)} MiB)")
            return
        base_text, new_text = texts
        proposal = await self._proposal(current, base_text, new_text, path)
        if proposal is None:
            return
        text, note = proposal
        if new_text is None:
            plan.deletions.add(target)
        elif "conflict" in note:
            plan.conflicts.append(path)
        loaded = await self.editor.read_buffer(target) is not None
        plan.files.append(FileReview(target, current, loaded, text, "whole", note))

    async def _worktree_file(self, path: str) -> bytes:
        """The worktree's file, read as the agent's files are: no symlink followed, a regular file only."""
        opener = Opener(PathPolicy.for_workspace(self.worktree.path).roots)
        data, _ = await asyncio.to_thread(opener.read_bytes, Path(self.worktree.path, path), MAX_FILE_BYTES)
        return data

    async def _current(self, target: str) -> str | None:
        """The checkout's file as the user sees it (its buffer's unsaved edits too), noted as read."""
        try:
            return (await self.side.service.read(target, None, None)).content
        except RequestError as exc:
            if exc.code == NOT_FOUND:
                return None
            raise

    async def _proposal(self, current: str | None, base: str | None, new: str | None,
                        path: str) -> tuple[str, str] | None:
        """The proposed text and its note; None when the checkout already has the worktree's text."""
        if new is None:
            return None if current is None else ("", DELETED + ("" if current == base else
                                                                    " (the checkout changed it too)"))
        if current == new:
            return None
        if current is None or current == base:
            return new, "" if current is not None else "new in the worktree"
        merged, conflicts = await self._merge3(current, base or "", new, path)
        return merged, (f"{conflicts} conflict(s) marked <<<<<<< … >>>>>>>: edit them before accepting"
                        if conflicts else "changed in the checkout too: merged")

    async def _merge3(self, current: str, base: str, new: str, path: str) -> tuple[str, int]:
        with tempfile.TemporaryDirectory(prefix="acp-nvim-merge-") as folder:
            names = []
            for label, text in (("checkout", current), ("base", base), ("worktree", new)):
                name = os.path.join(folder, label)
                Path(name).write_text(text, encoding="utf-8")
                names.append(name)
            result = await git.run(folder, "merge-file", "-p", "-L", f"checkout: {path}", "-L", "base", "-L",
                                   self.worktree.branch, *names, ok=tuple(range(128)))
        return result.text, result.code

    # -- the review and the writes -----------------------------------------------------------

    def review(self, plan: Plan) -> Review:
        conflicts = f", {len(plan.conflicts)} with conflicts" if plan.conflicts else ""
        title = f"merge {self.worktree.branch} into {self.repo.top}: {len(plan.files)} file(s){conflicts}"
        return Review(self.owner, 1, title, "edit", list(plan.files))

    async def ask(self, review: Review) -> ReviewVerdict | None:
        question = PermissionQuestion(self.owner, review.title, "edit", "", ())
        def show(ticket: Ticket) -> None:
            self.editor.show_review(ticket, question, review)
            self.front(ticket.id)

        answer = await self.questions.ask(self.owner, REVIEW, show)
        return answer if isinstance(answer, ReviewVerdict) else None

    async def apply(self, plan: Plan, verdict: ReviewVerdict) -> Outcome:
        accepted = {f.path: f.text for f in verdict.files}
        written: list[str] = []
        deleted: list[str] = []
        rejected: list[str] = []
        failed: list[str] = []
        for file in plan.files:
            text, shown = accepted.get(file.path), os.path.relpath(file.path, self.repo.top)
            if text is None:
                rejected.append(shown)
            elif file.path in plan.deletions and text == "":
                if await self.side.service.revert(file.path, None) == "removed":
                    deleted.append(shown)
                else:
                    failed.append(f"{shown} (unsaved changes in its buffer)")
            else:
                try:
                    await self.side.service.write(file.path, text)
                    written.append(shown)
                except RequestError as exc:
                    failed.append(f"{shown} ({exc})")
        return Outcome(tuple(written), tuple(deleted), tuple(rejected), tuple(failed), tuple(plan.skipped))


def _reason(exc: RequestError) -> str:
    data = exc.data
    reason = data.get("reason") if isinstance(data, dict) else None
    return str(reason) if reason else str(exc)


def _text(data: bytes | None) -> str | None:
    if data is None or len(data) > MAX_FILE_BYTES or b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
