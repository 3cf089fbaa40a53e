"""The sessions board (``:Ai board``), ``:Ai next`` / ``]w`` and the statusline's waiting count, in a real
Neovim against real demo agents: three sessions, one waiting for a review."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import NOTIFY, SELECT, answer_keys, buffer_text, notes, review_open, status, wait_for, wait_idle

pytestmark = pytest.mark.timeout(120)

BOARD = "acp://board"


def board_line(nvim, key: str) -> str:
    """The board's row of session ``key`` ('' when it has none)."""
    return next((line for line in buffer_text(nvim, BOARD).split("\n") if line[2:].startswith(key + " ")), "")


def wait_row(nvim, key: str, text: str, timeout: float = 30) -> str:
    return wait_for(lambda: text in (line := board_line(nvim, key)) and line, timeout=timeout,
                    what=f"the board to show {key} {text!r}")


def send_to(nvim, key: str, prompt: str) -> None:
    """``:Ai send {prompt}`` to session ``key`` (as from its chat)."""
    nvim.exec_lua("require('acp_nvim.host.ai').run_for(...)", key, ["send", *prompt.split(" ")])


def board_cursor(nvim) -> list[int]:
    return nvim.exec_lua("local win = vim.fn.bufwinid('acp://board'); return vim.api.nvim_win_get_cursor(win)")


@pytest.fixture
def three(nvim, workspace: Path):
    """Three idle demo sessions and the board open on them."""
    nvim.exec_lua(NOTIFY + SELECT)
    for key in ("demo/1", "demo/2", "demo/3"):
        nvim.command("Ai new")
        wait_idle(nvim, key)
    nvim.command("Ai board")
    for key in ("demo/1", "demo/2", "demo/3"):
        wait_row(nvim, key, "idle")
    return nvim


def test_the_board_follows_every_state_and_next_lands_on_the_waiting_review(three, workspace):
    nvim = three
    target = workspace / "sample.txt"
    target.write_text("".join(f"line {i}\n" for i in range(1, 9)))
    nvim.command("wincmd p")  # back to a chat: the board stays on screen below
    send_to(nvim, "demo/1", "slow 60")
    wait_row(nvim, "demo/1", "running")
    send_to(nvim, "demo/1", "hello after")
    wait_row(nvim, "demo/1", "· 1 queued")
    send_to(nvim, "demo/2", f"edit {target}")
    row = wait_row(nvim, "demo/2", "waiting for you: review")
    assert "idle" in board_line(nvim, "demo/3")
    send_to(nvim, "demo/3", "crash")
    wait_row(nvim, "demo/3", "failed: connection lost (the agent exited with code 3)")
    assert "waiting for you" in buffer_text(nvim, BOARD).split("\n")[0]  # the header counts them
    assert status(nvim).endswith("1 waiting") or "waiting for you" in status(nvim)
    assert row.index("demo/2") == 2

    nvim.command("tabfirst")  # the review opened in a tab of its own
    nvim.command(f"edit {workspace / 'other.txt'}")  # another buffer, no session of its own
    nvim.input("]w")
    wait_for(lambda: review_open(nvim) and "(review 1 of demo:2)" in nvim.api.buf_get_name(0), timeout=20,
             what="]w to land on demo/2's review")

    answer_keys(nvim, "ga")
    wait_for(lambda: "idle" in board_line(nvim, "demo/2") and "1 file: sample.txt" in board_line(nvim, "demo/2"),
             timeout=30, what="demo/2 idle with its changed file")
    wait_row(nvim, "demo/1", "idle", timeout=60)
    assert "edited by demo" in target.read_text()


def test_updates_never_move_the_cursor(three):
    nvim = three
    nvim.exec_lua("vim.api.nvim_win_set_cursor(vim.fn.bufwinid('acp://board'), { 5, 3 })")
    before = board_cursor(nvim)
    nvim.command("wincmd p")
    send_to(nvim, "demo/1", "slow 30")
    wait_row(nvim, "demo/1", "running")
    wait_for(lambda: "s ago" in board_line(nvim, "demo/1"), timeout=10, what="the activity column")
    assert board_cursor(nvim) == before
    wait_row(nvim, "demo/1", "idle", timeout=60)
    assert board_cursor(nvim) == before

    nvim.command("Ai new")  # a fourth row: the rows above the cursor stay, so does the cursor
    wait_row(nvim, "demo/4", "idle")
    assert board_cursor(nvim) == before


def test_board_keys_act_on_the_session_under_the_cursor(three):
    nvim = three
    nvim.exec_lua("vim.api.nvim_set_current_win(vim.fn.bufwinid('acp://board'))")
    line = next(i for i, text in enumerate(buffer_text(nvim, BOARD).split("\n"), 1) if "demo/3 " in text)
    nvim.api.win_set_cursor(0, [line, 0])
    nvim.input("x")
    wait_for(lambda: board_line(nvim, "demo/3") == "", timeout=20, what="x to close demo/3")
    line = next(i for i, text in enumerate(buffer_text(nvim, BOARD).split("\n"), 1) if "demo/2 " in text)
    nvim.api.win_set_cursor(0, [line, 0])
    nvim.input("<CR>")
    wait_for(lambda: nvim.api.buf_get_name(0).endswith("acp://chat/demo/2"), timeout=10, what="<CR> to open the chat")


def test_next_without_a_waiting_session_says_so(nvim):
    nvim.exec_lua(NOTIFY)
    nvim.command("Ai next")
    nvim.command("Ai prev")
    assert notes(nvim) == ["[acp.nvim] no session is waiting for you"] * 2
