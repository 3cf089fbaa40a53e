"""Under policy ask, a disk edit that arrives without a permission request opens a review of its own
(base: the file before the change); only a change no review can be shown for is flagged in the chat."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from fake_editor import FakeEditor

from acp_nvim.core.config import parse_settings
from acp_nvim.core.files.changes import FileChange
from acp_nvim.core.permissions.unreviewed import UnreviewedEdits
from acp_nvim.core.session.manager import SessionManager
from acp_nvim.core.session.session import Prompt
from acp_nvim.core.transcript.conversation import Conversation
from helpers import async_wait_for
from helpers.core import chat_text as chat

pytestmark = pytest.mark.timeout(30)

MODE_AGENT = Path(__file__).resolve().parents[1] / "e2e" / "mode_agent.py"
ENV = {"ACP_TEST_MODES": "ask,free", "ACP_TEST_ASKING": "ask"}


async def started(tmp_path, mode: str, policy: str = "ask", answer: str = "allow_once"):
    editor = FakeEditor(answer)
    spec = {"command": sys.executable, "args": [str(MODE_AGENT)], "env": ENV, "mode": mode}
    manager = SessionManager(editor, parse_settings({"agents": {"probe": spec}, "permissions": {"policy": policy}}))
    session = manager.create("probe", str(tmp_path))
    await session.start()
    return editor, session


async def write(session, path: Path, text: str) -> None:
    turns = session.details.turns
    session.submit(Prompt(json.dumps({"op": "write", "path": str(path), "text": text})))
    await async_wait_for(lambda: session.details.turns > turns and session.state == "idle")


@pytest.mark.parametrize(("answer", "lands"), [("allow_once", "after\n"), ("reject_once", "before\n")])
async def test_an_unasked_disk_edit_opens_a_review_of_that_change(tmp_path, answer, lands):
    target = tmp_path / "a.txt"
    target.write_text("before\n")
    editor, session = await started(tmp_path, "free", answer=answer)
    try:
        await write(session, target, "after\n")
        await async_wait_for(lambda: editor.reviews)
        [review] = editor.reviews
        [file] = review.files
        assert file.path == str(target.resolve()) and file.current == "before\n" and file.agent_text == "after\n"
        await async_wait_for(lambda: target.read_text() == lands)
        assert not session.unreviewed.flags and "not reviewed" not in chat(session)
    finally:
        await session.close()


async def test_an_edit_the_user_was_asked_about_is_not_reviewed_again(tmp_path):
    target = tmp_path / "b.txt"
    target.write_text("before\n")
    editor, session = await started(tmp_path, "ask")
    try:
        await write(session, target, "after\n")
        assert editor.reviews or editor.questions, "the agent asked"
        await async_wait_for(lambda: session.files.changes.latest() is not None)
        assert len(editor.reviews) <= 1 and target.read_text() == "after\n"
        assert not session.unreviewed.flags and "not reviewed" not in chat(session)
    finally:
        await session.close()


@pytest.mark.parametrize("policy", ["auto-edit", "trust"])
async def test_other_policies_review_nothing(tmp_path, policy):
    target = tmp_path / "c.txt"
    target.write_text("before\n")
    editor, session = await started(tmp_path, "free", policy)
    try:
        await write(session, target, "after\n")
        await async_wait_for(lambda: session.files.changes.latest() is not None)
        assert not session.unreviewed.flags and not editor.reviews and target.read_text() == "after\n"
    finally:
        await session.close()


def test_a_change_no_review_can_be_shown_for_is_flagged():
    transcript = Conversation()
    unreviewed = UnreviewedEdits(transcript)
    change = FileChange("/ws/a.txt", None, False, "after\n", "disk")
    unreviewed.flag(change, "its content before the turn is unknown")
    [(block, flagged)] = unreviewed.flags.items()
    text = "\n".join(b.text() for b in transcript.blocks)
    assert flagged is change and "⚠ not reviewed: the agent changed /ws/a.txt on disk" in text
    assert "it cannot be put back from here" in text
    assert unreviewed.reverted(block) is change and unreviewed.reverted(block) is None


def test_the_flag_names_the_revert_key():
    transcript = Conversation()
    UnreviewedEdits(transcript).flag(FileChange("/ws/a.txt", "before\n", True, "after\n", "disk"), "why")
    UnreviewedEdits(transcript, "").flag(FileChange("/ws/b.txt", "before\n", True, "after\n", "disk"), "why")
    text = "\n".join(b.text() for b in transcript.blocks)
    assert "<LocalLeader>x on this line reverts it" in text, "keymaps.revert's default, never Vim's X"
    assert ":Ai changes revert /ws/b.txt reverts it" in text, "the key turned off: the command"
