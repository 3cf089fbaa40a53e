"""The board's rows (core/session/board.py): what a session shows at a glance, from its view, its open
questions, its turn, the files it changed in all its turns, its worktree; the past ones of the workspace."""

from __future__ import annotations

import asyncio

from fake_editor import FakeEditor

from acp_nvim.core.config import parse_settings
from acp_nvim.core.files.changes import FileChange
from acp_nvim.core.history.record import SessionRecord
from acp_nvim.core.questions import CHOICE, PERMISSION, REVIEW
from acp_nvim.core.session.board import MAX_FILES, past_rows, rows
from acp_nvim.core.session.lifecycle import State
from acp_nvim.core.session.manager import SessionManager
from acp_nvim.core.worktrees.worktree import Worktree
from helpers import async_wait_for


def manager(tmp_path) -> SessionManager:
    return SessionManager(FakeEditor(), parse_settings({}))


async def test_rows_follow_the_order_sessions_were_made_and_mark_the_current_one(tmp_path):
    sessions = manager(tmp_path)
    first, second = sessions.create(None, str(tmp_path)), sessions.create(None, str(tmp_path))
    found = rows(sessions.sessions, sessions.book, sessions.questions, sessions.current_key)
    assert [(r.key, r.order, r.current, r.state) for r in found] == [
        (first.key, 1, False, "starting"), (second.key, 2, True, "starting")]
    sessions.forget(first.key)
    assert [r.key for r in rows(sessions.sessions, sessions.book, sessions.questions, None)] == [second.key]


async def test_a_shown_question_makes_the_row_wait_and_says_on_what(tmp_path):
    sessions = manager(tmp_path)
    session = sessions.create(None, str(tmp_path))
    session.lifecycle.move(State.IDLE)
    with sessions.questions.open(session.key, REVIEW) as review, sessions.questions.open(session.key, CHOICE):
        row = sessions.book.row(session, sessions.questions)
        assert (row.state, row.waiting) == ("idle", ())  # registered, not shown yet
        task = asyncio.ensure_future(review.ask(REVIEW, lambda ticket: None))
        await async_wait_for(lambda: review.waiting, what="the review shown")
        row = sessions.book.row(session, sessions.questions)
        assert (row.state, row.waiting) == ("waiting", ("review",))
        review.answer(None)
        await task
    with sessions.questions.open(session.key, PERMISSION) as prompt:
        task = asyncio.ensure_future(prompt.ask(PERMISSION, lambda ticket: None))
        await async_wait_for(lambda: prompt.waiting, what="the prompt shown")
        assert sessions.book.row(session, sessions.questions).waiting == ("prompt",)
        prompt.answer(None)
        await task


async def test_changed_files_are_kept_over_all_turns_and_bounded(tmp_path):
    sessions = manager(tmp_path)
    session = sessions.create(None, str(tmp_path))
    changes = session.files.changes
    for turn in range(3):
        changes.begin_turn()
        changes.current.record(str(tmp_path / f"f{turn}.py"), "x", "fs", None)
        changes.current.record(str(tmp_path / "same.py"), str(turn), "fs", None)
    row = sessions.book.row(session, sessions.questions)
    assert row.files == ("f0.py", "same.py", "f1.py") and row.changed == 4  # the first ones named, all counted
    entry = sessions.book.entries[session.key]
    for n in range(MAX_FILES + 5):
        entry.note(1, FileChange(f"/x/{n}", None, True, "y", "disk"))
    assert len(entry.files) == MAX_FILES and entry.changed == MAX_FILES + 9


async def test_a_worktree_gives_the_row_its_branch(tmp_path):
    sessions = manager(tmp_path)
    tree = Worktree("feature", str(tmp_path), "acp/feature", "abc123")
    session = sessions.create(None, str(tmp_path), worktree=tree)
    assert sessions.book.worktree(session.key) is tree
    assert sessions.book.row(session, sessions.questions).as_table()["branch"] == "acp/feature"


async def test_a_failed_agent_says_why(tmp_path):
    sessions = manager(tmp_path)
    session = sessions.create(None, str(tmp_path))
    session.opener.fail("the agent exited with code 3")
    row = sessions.book.row(session, sessions.questions)
    assert (row.state, row.failure) == ("failed", "the agent exited with code 3")


def test_past_rows_skip_open_sessions_and_stop_at_the_limit():
    records = [SessionRecord("demo", "/w", f"id{n}", 1.0, 10.0 - n, title="" if n else "named",
                             first_prompt=f"prompt {n}\nmore") for n in range(5)]
    found = past_rows(records, {"id1"}, 3)
    assert [(r.key, r.title, r.state, r.activity) for r in found] == [
        ("id0", "named", "past", 10.0), ("id2", "prompt 2", "past", 8.0), ("id3", "prompt 3", "past", 7.0)]
