"""Review comments as the editor sends them: parsed with bounds, worded for the agent and the chat."""

from __future__ import annotations

from acp_nvim.core.permissions.comments import chat_line, note_for_agent
from acp_nvim.core.port import MAX_COMMENT_CHARS, MAX_COMMENTS, ReviewComment, ReviewVerdict

P = "/ws/a.py"


def test_comments_come_with_each_file_of_the_verdict():
    verdict = ReviewVerdict.from_editor({"files": [
        {"path": P, "text": "x", "comments": [{"side": "proposal", "first": 3, "last": 3, "text": " why? ",
                                               "quote": "line 3"}]},
        {"path": "/ws/b", "comments": [{"side": "current", "first": 5, "last": 2, "text": "keep"}]},
    ]})
    assert verdict.comments == [ReviewComment(P, 3, 3, "proposal", "why?", "line 3"),
                                ReviewComment("/ws/b", 2, 5, "current", "keep", "")]


def test_what_is_not_a_comment_is_skipped_and_the_rest_is_bounded():
    raw = [{"first": 1, "text": ""}, {"first": "1", "text": "x"}, "x", {"text": "no line"},
           {"first": 0, "text": "y" * (MAX_COMMENT_CHARS + 5), "side": "elsewhere"}]
    comments = ReviewVerdict.from_editor({"files": [{"path": P, "comments": raw}]}).comments
    assert comments == [ReviewComment(P, 1, 1, "proposal", "y" * MAX_COMMENT_CHARS)]
    many = [{"first": 1, "text": str(i)} for i in range(MAX_COMMENTS + 10)]
    assert len(ReviewVerdict.from_editor({"files": [{"path": P, "comments": many}]}).comments) == MAX_COMMENTS
    assert ReviewVerdict.from_editor({"files": [{"path": P, "comments": "no"}]}).comments == []


def test_the_agent_reads_which_lines_of_which_side_and_the_answer():
    note = note_for_agent("Edit a.py", "rejected", [
        ReviewComment(P, 3, 3, "proposal", "why?", "x = 1"),
        ReviewComment(P, 2, 6, "current", "keep these", "a\nb\nc\nd\ne"),
    ])
    assert note.splitlines() == [
        "The user commented on the review of 'Edit a.py' (answered: rejected):",
        "- /ws/a.py, line 3 of your proposed text ('x = 1'): why?",
        "- /ws/a.py, lines 2-6 of the file as it was before your edit ('a' ⏎ 'b' ⏎ 'c' …): keep these",
    ]


def test_the_chat_shows_one_line_per_comment():
    assert chat_line(ReviewComment(P, 2, 4, "proposal", "first\nsecond")) == (P, ":2-4 (proposal): first")
