"""Reviews, permission prompts and questions come to the user (|acp_nvim-focus|), end to end: a
Neovim whose terminal UI runs in a pty (messages that do not fit give a real hit-enter prompt), the
real host and demo agent, keys typed with ``nvim_input`` as a user types them.

A request that arrives while the user types (within ``permissions.quiet_ms`` of a key, or in a mode
other than normal) waits beside them; it takes the cursor by itself once they are idle, however
long after; never while they type; never with ``permissions.focus = 'never'``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import INIT, NVIM
from helpers import answer_keys, chat, review_open
from helpers import wait_for as wait_for_any
from helpers.terminal import nvim_in_terminal
from shell_env import shell_env

pytestmark = pytest.mark.timeout(120)

HIT_ENTER = ("r", "rm", "r?")


@pytest.fixture
def tui(nvim_env: dict[str, str], tmp_path: Path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    env = {**os.environ, **nvim_env, **shell_env(workspace)}
    env.pop("TMUX", None)
    with nvim_in_terminal([NVIM, "-u", INIT], env, workspace, tmp_path / "nvim.sock") as (nvim, terminal):
        probes.append(nvim)
        try:
            yield nvim, terminal, workspace
        finally:
            probes.remove(nvim)


def wait_for(probe, what: str = ""):
    """``helpers.wait_for``, failing at once on a hit-enter prompt (Neovim answers nothing but
    ``nvim_get_mode`` then: the test would hang, not fail)."""
    def checked():
        mode = probes[-1].api.get_mode()
        assert not (mode["blocking"] and mode["mode"] in HIT_ENTER), "a message stopped Neovim at a hit-enter prompt"
        return probe()
    return wait_for_any(checked, what=what)


probes: list = []


def wait_review(nvim) -> None:
    wait_for(lambda: review_open(nvim), what="the review to open")


def sample(nvim, workspace: Path) -> Path:
    path = workspace / "sample.txt"
    path.write_text("".join(f"line {i}\n" for i in range(1, 9)))
    nvim.command(f"edit {path}")
    return path


def mode(nvim) -> str:
    return nvim.api.get_mode()["mode"]


def review_state(nvim) -> str | None:
    return nvim.exec_lua("local r = require('acp_nvim.review').list()[1]; return r and r.state")


def idle_for(nvim, windows: int) -> bool:
    """The user typed nothing for ``windows`` typing windows (``quiet_ms``) and is in normal mode."""
    return nvim.exec_lua("""
        local g = require('acp_nvim.kit.guard')
        local quiet = require('acp_nvim.config.options').config.permissions.quiet_ms
        return vim.api.nvim_get_mode().mode == 'n' and g.now() - g.last > ... * quiet""", windows)


def test_the_review_of_a_typed_command_opens_by_itself_once_the_user_is_idle(tui):
    nvim, terminal, workspace = tui
    # a wide typing window: the agent answers within it, so the review must wait for the pause
    nvim.exec_lua("require('acp_nvim').setup({ permissions = { quiet_ms = 1500 } })")
    path = sample(nvim, workspace)
    before = path.read_text()
    nvim.input(":Ai send edit %:p<CR>")
    wait_review(nvim)
    assert mode(nvim) not in HIT_ENTER, "no message stopped Neovim at a hit-enter prompt"
    assert b"Press ENTER" not in terminal.output
    assert nvim.api.buf_get_name(0) == f"{path} (review 1 of demo:1)", "the cursor is in the proposal"
    assert path.read_text() == before, "no key answered it"
    answer_keys(nvim, "ga")
    wait_for(lambda: "turn ended" in chat(nvim), what="the turn to end")
    assert path.read_text() != before


def test_a_review_never_takes_the_cursor_while_the_user_types_and_comes_when_they_stop(tui):
    nvim, _, workspace = tui
    sample(nvim, workspace)
    notes = workspace / "notes.txt"
    nvim.command(f"split {notes}")
    nvim.input(f":Ai send edit {workspace / 'sample.txt'}<CR>iAl")  # insert mode: typing
    typed = "so hello"
    for index, key in enumerate(typed):
        nvim.input(key)
        if index == 0:
            wait_for(lambda: review_state(nvim) == "queued", what="the review to arrive")
    wait_for(lambda: nvim.api.get_current_line() == "Also hello", what="every typed key")
    assert mode(nvim) == "i" and nvim.api.buf_get_name(0) == str(notes)
    assert len(nvim.api.list_tabpages()) == 1 and review_state(nvim) == "queued"
    nvim.input("<Esc>")
    wait_review(nvim)
    assert nvim.api.buf_get_name(0).endswith("/sample.txt (review 1 of demo:1)")
    assert nvim.api.buf_get_lines(nvim.funcs.bufnr(str(notes)), 0, -1, False) == ["Also hello"]
    assert mode(nvim) not in HIT_ENTER


def test_focus_never_keeps_the_review_waiting_for_ai_permissions(tui):
    nvim, _, workspace = tui
    nvim.exec_lua("require('acp_nvim').setup({ permissions = { focus = 'never', quiet_ms = 100 } })")
    path = sample(nvim, workspace)
    nvim.input(":Ai send edit %:p<CR>")
    wait_for(lambda: review_state(nvim) is not None, what="the review to arrive")
    wait_for(lambda: idle_for(nvim, 5), what="the user to be idle for five typing windows")
    assert review_state(nvim) == "queued" and len(nvim.api.list_tabpages()) == 1
    assert nvim.exec_lua("return require('acp_nvim.kit.guard').waiting()") == 0, "nothing waits to take the cursor"
    nvim.input(":Ai permissions<CR>")
    wait_review(nvim)
    assert nvim.api.buf_get_name(0) == f"{path} (review 1 of demo:1)"


def test_a_permission_prompt_is_entered_once_the_user_is_idle_and_its_keys_wait_from_then(tui):
    nvim, _, workspace = tui
    nvim.command(f"edit {workspace / 'notes.txt'}")
    file_win = nvim.api.get_current_win()
    nvim.input(":Ai send shell git status<CR>iAl")
    typed = "so hello"
    for index, key in enumerate(typed):
        nvim.input(key)
        if index == 0:
            wait_for(lambda: nvim.exec_lua("return #require('acp_nvim.question.permission').pending()") == 1,
                     what="the request to arrive")
    wait_for(lambda: nvim.api.get_current_line() == "Also hello", what="every typed key")
    assert nvim.api.get_current_win() == file_win and mode(nvim) == "i"
    assert nvim.exec_lua("return require('acp_nvim.question.permission').prompt:is_open()"), "shown beside the user"
    nvim.input("<Esc>")
    wait_for(lambda: nvim.exec_lua("return require('acp_nvim.question.permission').prompt:focused()"),
             what="the prompt to take the cursor")
    assert nvim.exec_lua("""
        local view = require('acp_nvim.question.permission').prompt.view
        return view.shown_at >= require('acp_nvim.kit.guard').last"""), "its keys wait arm_ms from when it came"
    assert mode(nvim) not in HIT_ENTER
    answer_keys(nvim, "r")
    wait_for(lambda: "Command rejected" in chat(nvim), what="the answer the user chose")
    assert nvim.api.buf_get_lines(nvim.funcs.bufnr(str(workspace / "notes.txt")), 0, -1, False) == ["Also hello"]


def test_a_question_takes_the_cursor_once_the_user_is_idle(tui):
    nvim, _, workspace = tui
    nvim.command(f"edit {workspace / 'notes.txt'}")
    nvim.input(":Ai send ask<CR>iAl")
    typed = "so hello"
    for index, key in enumerate(typed):
        nvim.input(key)
        if index == 0:
            wait_for(lambda: nvim.exec_lua("return #require('acp_nvim.question').list()") == 1,
                     what="the question to arrive")
    wait_for(lambda: nvim.api.get_current_line() == "Also hello", what="every typed key")
    assert mode(nvim) == "i" and nvim.api.buf_get_name(0) == str(workspace / "notes.txt")
    nvim.input("<Esc>")
    wait_for(lambda: nvim.api.buf_get_name(0).startswith("acp://question/demo/"), what="the form to take the cursor")
    assert mode(nvim) not in HIT_ENTER
    assert not review_open(nvim)
