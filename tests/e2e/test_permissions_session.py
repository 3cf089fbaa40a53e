"""The permission broker inside a real session with the real demo agent, through a fake editor port."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp import RequestError
from acp.schema import PermissionOption, ToolCallUpdate
from fake_editor import FakeEditor

from acp_nvim.core.config import parse_settings
from acp_nvim.core.permissions.review import FileVerdict, ReviewVerdict
from acp_nvim.core.session.manager import SessionManager
from acp_nvim.core.session.session import Prompt
from helpers import async_wait_for
from helpers.core import chat_text as chat

pytestmark = pytest.mark.timeout(30)

TEXT = "".join(f"line {i}\n" for i in range(1, 9))


class ReviewEditor(FakeEditor):
    """Answers reviews with ``decide(review)``; keeps rules and rejected copies under ``state``."""

    def __init__(self, state: Path, decide=None, answer_kind: str | None = "allow_once") -> None:
        super().__init__(answer_kind, state_dir=str(state))
        self.decide = decide
        self.deciding: list[asyncio.Task] = []

    def show_review(self, ticket, question, review) -> None:
        self.questions.append(question)
        self.reviews.append(review)
        self.tickets.append(ticket)
        self.deciding.append(asyncio.ensure_future(self._decide(ticket, review)))

    async def _decide(self, ticket, review) -> None:
        ticket.answer(await self.decide(review))


def accept_with(transform):
    async def decide(review):
        return ReviewVerdict(tuple(FileVerdict(f.path, transform(f.agent_text)) for f in review.files))
    return decide


async def started(tmp_path, editor, settings=None):
    manager = SessionManager(editor, parse_settings(settings or {}))
    session = manager.create(None, str(tmp_path))
    await session.start()
    return session


async def turn(session, text: str, count: int) -> str:
    session.submit(Prompt(text))
    await async_wait_for(lambda: chat(session).count("turn ended") >= count)
    return chat(session)


def workspace_file(tmp_path, name="a.txt") -> Path:
    path = tmp_path / name
    path.write_text(TEXT)
    return path


async def test_edited_proposal_lands_and_the_next_prompt_carries_a_note(tmp_path):
    path = workspace_file(tmp_path)
    editor = ReviewEditor(tmp_path / "state", accept_with(lambda t: t.replace("line 4", "line 4 by me")))
    session = await started(tmp_path, editor)
    try:
        text = await turn(session, f"edit {path}", 1)
        assert "line 4 by me" in path.read_text() and "edited by demo" in path.read_text()
        assert "note for the agent" in text
        review = editor.reviews[0]
        assert review.files[0].located == "whole" and review.number == 1
        text = await turn(session, "hello", 2)
        assert "You said: [Note from the editor, acp.nvim]" in text  # the note is the prompt's first block
        notes = text.count("[Note from the editor")
        text = await turn(session, "hello", 3)
        assert text.count("[Note from the editor") == notes  # sent once
    finally:
        await session.close()


async def test_agent_writing_the_disk_ends_with_the_accepted_text(tmp_path):
    path = workspace_file(tmp_path)
    editor = ReviewEditor(tmp_path / "state", accept_with(lambda t: t.replace("line 4", "line 4 by me")))
    session = await started(tmp_path, editor)
    try:
        await turn(session, f"edit-disk {path}", 1)
        await async_wait_for(lambda: "line 4 by me" in path.read_text())
        assert path.read_text().splitlines()[0].endswith("edited by demo")
    finally:
        await session.close()


async def test_snippet_request_reviews_the_whole_file(tmp_path):
    path = workspace_file(tmp_path)
    editor = ReviewEditor(tmp_path / "state", accept_with(lambda t: t))
    session = await started(tmp_path, editor)
    try:
        await turn(session, f"edit-snippet {path}", 1)
        file = editor.reviews[0].files[0]
        assert file.located == "snippet" and file.base == TEXT
        assert file.agent_text == TEXT.replace("line 1\n", "line 1 edited by demo\n", 1)
        assert path.read_text() == file.agent_text
    finally:
        await session.close()


async def test_rejection_answers_the_reject_option_and_keeps_a_copy(tmp_path):
    path = workspace_file(tmp_path)

    async def reject(review):
        return ReviewVerdict(tuple(FileVerdict(f.path, None) for f in review.files))

    editor = ReviewEditor(tmp_path / "state", reject)
    session = await started(tmp_path, editor)
    try:
        text = await turn(session, f"edit {path}", 1)
        assert "Edit rejected" in text and path.read_text() == TEXT
        copy = tmp_path / "state" / "acp_nvim" / "rejected" / "demo-1" / "1-a.txt"
        assert copy.read_text().endswith("added by the demo agent\n")
        assert copy.stat().st_mode & 0o777 == 0o600
        assert f"kept in {copy}" in text
    finally:
        await session.close()


async def test_a_whole_rejection_holds_for_the_agents_retry_in_the_same_turn(tmp_path):
    path = workspace_file(tmp_path)

    async def reject(review):
        return ReviewVerdict(tuple(FileVerdict(f.path, None) for f in review.files))

    session = await started(tmp_path, ReviewEditor(tmp_path / "state", reject))
    try:
        await turn(session, f"edit {path}", 1)
        with pytest.raises(RequestError, match="rejected"):  # the agent writes the file anyway
            await session.files.write(str(path), TEXT + "added by the demo agent\n")
        assert path.read_text() == TEXT
        assert "refused the agent's write" in chat(session)  # the user is told
    finally:
        await session.close()


async def test_kept_rejections_are_pruned_to_the_configured_bounds(tmp_path):
    path = workspace_file(tmp_path)

    async def reject(review):
        return ReviewVerdict(tuple(FileVerdict(f.path, None) for f in review.files))

    editor = ReviewEditor(tmp_path / "state", reject)
    session = await started(tmp_path, editor, {"permissions": {"rejected": {"max_files": 2}}})
    try:
        for count in range(1, 4):
            text = await turn(session, f"edit {path}", count)
        folder = tmp_path / "state" / "acp_nvim" / "rejected" / "demo-1"
        assert sorted(p.name for p in folder.iterdir()) == ["2-a.txt", "3-a.txt"]
        assert "pruned 1 old rejected proposal(s)" in text
    finally:
        await session.close()


async def test_multi_file_review_with_one_file_rejected(tmp_path):
    a, b = workspace_file(tmp_path, "a.txt"), workspace_file(tmp_path, "b.txt")

    async def only_a(review):
        return ReviewVerdict(tuple(FileVerdict(f.path, f.agent_text if f.path == str(a) else None)
                                   for f in review.files))

    editor = ReviewEditor(tmp_path / "state", only_a)
    session = await started(tmp_path, editor)
    try:
        text = await turn(session, f"multi-edit {a} {b}", 1)
        assert [Path(f.path).name for f in editor.reviews[0].files] == ["a.txt", "b.txt"]
        assert a.read_text().endswith("added by the demo agent\n") and b.read_text() == TEXT
        assert "rejected this change in the review" in text
    finally:
        await session.close()


async def test_cancel_dismisses_the_review_and_late_requests_are_cancelled(tmp_path):
    path = workspace_file(tmp_path)
    never = asyncio.get_running_loop().create_future()

    async def hang(review):
        return await never

    editor = ReviewEditor(tmp_path / "state", hang)
    session = await started(tmp_path, editor)
    try:
        session.submit(Prompt(f"edit {path}"))
        await async_wait_for(lambda: session.state == "waiting")
        assert await session.cancel()
        assert len(editor.dismissed) == 1
        late = await session.request_permission(
            ToolCallUpdate(tool_call_id="late", title="late", kind="execute"),
            [PermissionOption(option_id="y", name="Yes", kind="allow_once")])
        assert late.outcome.outcome == "cancelled"
        await async_wait_for(lambda: "turn ended: cancelled" in chat(session))
        assert path.read_text() == TEXT and not session.view.pending
        wire = [e.summary for e in session.log.entries() if e.kind in ("notification", "response")]
        cancel = wire.index("notification session/cancel")
        answer = next(i for i, s in enumerate(wire) if s.startswith("response session/request_permission"))
        assert cancel < answer, f"the answer 'cancelled' went out before session/cancel: {wire}"
    finally:
        await session.close()


async def test_always_answer_becomes_a_rule_on_disk(tmp_path):
    editor = ReviewEditor(tmp_path / "state", answer_kind="allow_always")
    session = await started(tmp_path, editor)
    try:
        text = await turn(session, "shell git status -s", 1)
        assert "remembered: always allow execute `git status -s …`" in text
        assert (tmp_path / "state" / "acp_nvim" / "rules.json").exists()
        editor.answer_kind = None  # would answer nothing: the rule must answer instead
        text = await turn(session, "shell git status", 2)
        assert "allowed automatically (rule: always allow execute `git status -s …`" in text
        assert len(editor.questions) == 1
    finally:
        await session.close()


async def test_policies_per_session(tmp_path):
    path = workspace_file(tmp_path)
    editor = ReviewEditor(tmp_path / "state", answer_kind="reject_once")
    session = await started(tmp_path, editor, {"permissions": {"policy": "auto-edit"}})
    try:
        assert session.permissions.policy == "auto-edit"
        text = await turn(session, f"edit {path}", 1)
        assert "allowed automatically (policy auto-edit" in text and not editor.reviews
        text = await turn(session, "shell ls", 2)
        assert "Command rejected" in text and len(editor.questions) == 1
        session.permissions.set_policy("trust")
        text = await turn(session, "shell ls", 3)
        assert "allowed automatically (policy trust): execute · ls → Always allow" in text
        with pytest.raises(ValueError, match="unknown policy"):
            session.permissions.set_policy("yolo")
    finally:
        await session.close()


class FailingReviewEditor(FakeEditor):
    """An editor whose review view fails to open (the verdict carries the error)."""

    def show_review(self, ticket, question, review) -> None:
        self.reviews.append(review)
        ticket.answer(ReviewVerdict((), error="no review view"))


async def test_a_review_view_that_fails_asks_plainly(tmp_path):
    path = workspace_file(tmp_path)
    editor = FailingReviewEditor(answer_kind="allow_once")
    session = await started(tmp_path, editor)
    try:
        text = await turn(session, f"edit {path}", 1)
        assert "the review view failed (no review view): asking without it" in text
        # the plain prompt showed no text to accept: the agent's write opens its own review (which
        # fails the same way and is asked plainly again)
        assert len(editor.reviews) == 2 and len(editor.questions) == 2 and "edited by demo" in path.read_text()
    finally:
        await session.close()
