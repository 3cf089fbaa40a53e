"""The board's view in Lua (``acp_nvim.board``), fed rows as Python sends them, without a host: what a
row says, that redraws keep the cursor on its session, that an agent's text cannot break a line, and
the keys' targets."""

from __future__ import annotations

import pytest

from helpers import buffer_text, wait_for
from helpers.lua import call_recorder

pytestmark = pytest.mark.timeout(30)


def row(key: str, order: int, **fields: object) -> dict:
    base = {"key": key, "agent": "demo", "state": "idle", "title": "", "waiting": [], "queued": 0, "failure": "",
            "turn_started": False, "activity": False, "tokens": "", "files": [], "changed": 0, "branch": "",
            "order": order, "session_id": f"id-{order}", "current": False}
    return {**base, **fields}


def lines(nvim) -> list[str]:
    return buffer_text(nvim, "acp://board").split("\n")


def line_of(nvim, key: str) -> str:
    return next(text for text in lines(nvim) if text[2:].startswith(key + " "))


@pytest.fixture
def board(nvim):
    nvim.exec_lua(call_recorder("command", "commands") + call_recorder("board", "board_events"))
    nvim.exec_lua("require('acp_nvim.board').open(...)", [row("demo/1", 1), row("demo/2", 2)])
    return nvim


def test_a_row_says_what_the_session_does(board):
    now = board.exec_lua("local t = vim.uv.clock_gettime('realtime'); return t.sec + t.nsec / 1e9")
    board.exec_lua("require('acp_nvim.board').update(...)", [
        row("demo/1", 1, state="running", turn_started=now - 65, activity=now - 4, queued=2, current=True,
            tokens="12k/200k tokens · 0.1 USD", title="fix the parser", branch="acp/parser",
            files=["a.py", "b.py", "c.py"], changed=5),
        row("demo/2", 2, state="failed", failure="usage limit")], [])
    first = line_of(board, "demo/1")
    assert first.startswith("▸ demo/1") and "running 1m05s · 2 queued" in first and "4s ago" in first
    assert "12k/200k tokens · 0.1 USD" in first and "fix the parser" in first and "⎇ acp/parser" in first
    assert first.endswith("5 files: a.py, b.py, c.py, …")
    assert "failed: usage limit" in line_of(board, "demo/2")
    assert lines(board)[0] == "acp.nvim · 2 sessions"


def test_an_agents_text_cannot_break_the_row(board):
    board.exec_lua("require('acp_nvim.board').update(...)",
                   [row("demo/1", 1, title="evil\ntitle\x1b[2J\rx", files=["a\nb.py"])], [])
    assert len(lines(board)) == 5 and "evil title" in line_of(board, "demo/1")


def test_redraws_keep_the_cursor_on_its_session(board):
    board.command("call cursor(5, 4)")  # on demo/2
    assert board.funcs.getline(".").startswith("  demo/2")
    board.exec_lua("require('acp_nvim.board').update(...)", [row("demo/0", 0)], [])  # a row above it
    assert board.funcs.getline(".").startswith("  demo/2") and board.funcs.col(".") == 4
    board.exec_lua("require('acp_nvim.board').update(...)", [], ["demo/0", "demo/1"])
    assert board.funcs.getline(".").startswith("  demo/2")
    board.exec_lua("require('acp_nvim.board').set_past(...)", [row("id-9", 9, state="past", title="yesterday")])
    assert board.funcs.getline(".").startswith("  demo/2")
    assert lines(board)[-2:] == ["── past sessions of this folder (<CR> resumes one) ──",
                                 lines(board)[-1]] and "yesterday" in lines(board)[-1]


def test_keys_run_their_command_for_the_row_under_the_cursor(board):
    board.command("call cursor(5, 1)")
    for key in ("c", "x", "r"):
        board.input(key)
    wait_for(lambda: board.api.get_mode()["mode"] == "c", what="r to ask before restarting")
    board.input("1<CR>")  # "Restart demo"
    wait_for(lambda: board.api.get_mode()["mode"] == "n", what="the answer")
    board.command("call cursor(4, 1)")
    board.input("<CR>")
    commands = board.eval("g:commands")
    assert [(c[0]["sub"], c[0]["session"]) for c in commands] == [
        ("cancel", "demo/2"), ("close", "demo/2"), ("restart", "demo/2"), ("open", "demo/1")]
    board.command("bwipe acp://board")
    assert board.eval("g:board_events") == [["closed", None]]


def test_next_waiting_row_wraps_around(board):
    board.exec_lua("require('acp_nvim.board').update(...)",
                   [row("demo/1", 1, state="waiting", waiting=["review"]), row("demo/3", 3, state="waiting")], [])
    board.command("call cursor(5, 1)")  # demo/2
    board.input("]w")
    assert board.funcs.getline(".").startswith("  demo/3")
    board.input("]w")
    assert board.funcs.getline(".").startswith("  demo/1")
    board.input("[w")
    assert board.funcs.getline(".").startswith("  demo/3")
