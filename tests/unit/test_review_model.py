"""The review model: whole-file reconstruction from every diff shape agents send."""

from __future__ import annotations

import pytest
from acp.helpers import tool_diff_content

from acp_nvim.core.files.paths import PathPolicy
from acp_nvim.core.permissions.accepted import AcceptedEdit, AcceptedEdits, agent_note
from acp_nvim.core.permissions.review import (
    Current,
    ProposedEdit,
    ReviewVerdict,
    proposed_edits,
    raw_input_edits,
    reconstruct,
)
from acp_nvim.core.permissions.text_merge import carry_over
from acp_nvim.core.transcript.tool_calls import ToolCallState
from acp_nvim.nvim.permissions.review_spec import review_table, split_lines

TEXT = "".join(f"line {i}\n" for i in range(1, 11))
P = "/ws/a.txt"


def agent_text(text: str = TEXT) -> str:
    return text.replace("line 3\n", "line three\n") + "appended\n"


def test_whole_file_diff():
    review = reconstruct(P, Current(TEXT), [ProposedEdit(P, TEXT, agent_text())])
    assert (review.located, review.agent_text, review.base, review.note) == ("whole", agent_text(), TEXT, "")


def test_whole_file_diff_without_final_newline_keeps_the_file_ending():
    review = reconstruct(P, Current(TEXT), [ProposedEdit(P, TEXT.rstrip("\n"), agent_text().rstrip("\n"))])
    assert review.located == "whole" and review.agent_text == agent_text()


def test_snippet_is_placed_in_the_whole_file():
    review = reconstruct(P, Current(TEXT), [ProposedEdit(P, "line 3", "line three")])
    assert review.located == "snippet"
    assert review.agent_text == TEXT.replace("line 3\n", "line three\n")


def test_snippet_found_twice_changes_the_first_and_says_so():
    text = "x = 1\ny = 2\nx = 1\n"
    review = reconstruct(P, Current(text), [ProposedEdit(P, "x = 1", "x = 9")])
    assert review.agent_text == "x = 9\ny = 2\nx = 1\n" and "occurs 2 times" in review.note


def test_replace_all():
    review = reconstruct(P, Current("a a a\n"), [ProposedEdit(P, "a", "b", replace_all=True)])
    assert review.agent_text == "b b b\n"


def test_snippet_in_a_crlf_file():
    text = "one\r\ntwo\r\nthree\r\n"
    review = reconstruct(P, Current(text), [ProposedEdit(P, "one\ntwo", "ONE\ntwo")])
    assert review.agent_text == "ONE\r\ntwo\r\nthree\r\n"


def test_snippet_not_found_shows_the_diff_as_sent():
    review = reconstruct(P, Current(TEXT), [ProposedEdit(P, "not in the file", "new text")])
    assert review.snippet_only and review.base == "not in the file" and review.agent_text == "new text"
    assert "showing its diff as sent" in review.note


def test_missing_file_with_old_text_is_not_found():
    review = reconstruct(P, Current(None), [ProposedEdit(P, "old", "new")])
    assert review.snippet_only and "does not exist" in review.note


def test_new_file():
    review = reconstruct(P, Current(None), [ProposedEdit(P, None, "hello\n")])
    assert (review.located, review.base, review.agent_text) == ("new", "", "hello\n")


def test_whole_content_over_an_existing_file():
    review = reconstruct(P, Current(TEXT), [ProposedEdit(P, None, "replaced\n")])
    assert review.located == "whole" and "replaces the whole file" in review.note


def test_several_edits_apply_in_order():
    edits = [ProposedEdit(P, "line 1\n", "first\n"), ProposedEdit(P, "line 10", "last")]
    review = reconstruct(P, Current(TEXT), edits)
    assert review.agent_text.startswith("first\nline 2") and review.agent_text.endswith("last\n")


def test_whole_file_diff_on_a_buffer_the_user_changed_since():
    """The agent read the disk; the user typed elsewhere since: the agent's change lands on their text."""
    mine = TEXT.replace("line 8\n", "line 8 typed by me\n")
    review = reconstruct(P, Current(mine, loaded=True), [ProposedEdit(P, TEXT, agent_text())])
    assert review.located == "merged" and "changed since the agent read it" in review.note
    assert review.agent_text == agent_text(mine)
    assert review.base == mine and review.loaded


def test_conflicting_change_falls_back_to_the_diff_as_sent():
    mine = TEXT.replace("line 3\n", "line 3 typed by me\n")
    review = reconstruct(P, Current(mine), [ProposedEdit(P, TEXT, agent_text())])
    assert review.snippet_only


@pytest.mark.parametrize(("base", "ours", "theirs", "expected"), [
    ("a\nb\nc\n", "a\nb\nc\nd\n", "a\nB\nc\n", "a\nB\nc\nd\n"),  # user appended, agent changed b
    ("a\nb\nc\n", "z\na\nb\nc\n", "a\nb\nX\nc\n", "z\na\nb\nX\nc\n"),  # insertion keeps its anchor
    ("a\nb\nc\n", "a\nB2\nc\n", "a\nB\nc\n", None),  # both changed b
    ("a\nb\nc\n", "q\nr\ns\nt\nu\nv\nw\n", "a\nB\nc\n", None),  # not the same file
])
def test_carry_over(base, ours, theirs, expected):
    assert carry_over(base, ours, theirs) == expected


# -- diff sources -----------------------------------------------------------------------


def state_with(content=None, raw_input=None) -> ToolCallState:
    state = ToolCallState("t1")
    state.content = content or []
    state.raw_input = raw_input
    return state


def test_request_content_first_then_earlier_updates_then_raw_input():
    request = state_with([tool_diff_content(P, "new", "old")], {"file_path": P, "old_string": "x", "new_string": "y"})
    assert proposed_edits(request, [ProposedEdit(P, "e", "f")]) == [ProposedEdit(P, "old", "new")]
    bare = state_with(raw_input={"file_path": P, "old_string": "x", "new_string": "y"})
    assert proposed_edits(bare, [ProposedEdit(P, "e", "f")]) == [ProposedEdit(P, "e", "f")]
    assert proposed_edits(bare, []) == [ProposedEdit(P, "x", "y")]
    assert proposed_edits(state_with(raw_input={"command": "ls"}), []) == []


@pytest.mark.parametrize(("raw", "expected"), [
    ({"file_path": P, "old_string": "a", "new_string": "b"}, [ProposedEdit(P, "a", "b")]),  # Claude Edit
    ({"file_path": P, "old_string": "a", "new_string": "b", "replace_all": True},
     [ProposedEdit(P, "a", "b", True)]),
    ({"file_path": P, "edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}]},
     [ProposedEdit(P, "a", "b"), ProposedEdit(P, "c", "d")]),  # MultiEdit
    ({"file_path": P, "content": "all\n"}, [ProposedEdit(P, None, "all\n")]),  # Write / write_file
    ({"filePath": P, "oldString": "a", "newString": "b", "replaceAll": True},
     [ProposedEdit(P, "a", "b", True)]),  # opencode
    ({"path": P, "old_str": "a", "new_str": "b"}, [ProposedEdit(P, "a", "b")]),
    ({"path": P}, []),
    ("not a dict", []),
])
def test_raw_input_edits(raw, expected):
    assert raw_input_edits(raw) == expected


# -- verdicts, accepted edits, notes -------------------------------------------------------


def test_verdict_from_the_editor():
    verdict = ReviewVerdict.from_editor({"files": [{"path": P, "text": "x"}, {"path": "/ws/b"}]})
    assert verdict.accepted and [f.text for f in verdict.files] == ["x", None]
    assert not ReviewVerdict.from_editor({"files": [{"path": P}]}).accepted
    assert not ReviewVerdict.from_editor(None).accepted


async def test_a_decision_names_the_file_through_a_symlink_of_the_workspace(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    ledger = AcceptedEdits(PathPolicy([str(tmp_path)]))
    await ledger.add(AcceptedEdit("t1", str(tmp_path / "link" / "a.txt"), "agent\n", "user\n", "base\n"))
    assert ledger.decision(await ledger.key_of(str(real / "a.txt"))).text == "user\n"


async def test_a_decision_outside_the_roots_is_not_kept(tmp_path):
    ledger = AcceptedEdits(PathPolicy([str(tmp_path / "ws")]))
    await ledger.add(AcceptedEdit("t1", str(tmp_path / "elsewhere.txt"), "agent\n", "user\n", "base\n"))
    assert ledger.pending() == []


def test_a_rejected_decision_targets_the_base():
    edit = AcceptedEdit("t1", P, "agent\n", None, "base\n")
    assert edit.target == "base\n" and not edit.allows("agent\n")


def test_agent_note():
    assert agent_note(P, "same\n", "same\n") is None
    assert "rejected your change" in agent_note(P, "x\n", None)
    note = agent_note(P, "a\nb\n", "a\nB\n")
    assert "changed your edit of /ws/a.txt" in note and "-b" in note and "+B" in note


def test_review_table_lines():
    review = reconstruct(P, Current("one\r\ntwo\r\n"), [ProposedEdit(P, "one", "ONE")])
    from acp_nvim.core.permissions.review import Review

    table = review_table(Review("demo/1", 3, "Edit", "edit", [review]))["files"][0]
    assert table["left"] == ["one", "two"] and table["agent"] == ["ONE", "two"]
    assert table["newline"] == "\r\n" and table["eol"] is True
    assert split_lines("") == [] and split_lines("a") == ["a"] and split_lines("a\n\n") == ["a", ""]
