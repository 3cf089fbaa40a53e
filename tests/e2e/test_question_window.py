"""The question form's window fits the form: every line, its key hint last, is on screen; on a
screen too small for it the window is capped and the form scrolls (real host, demo agent)."""

from __future__ import annotations

import pytest

from helpers import NOTIFY, SELECT, wait_for

pytestmark = pytest.mark.timeout(90)

HINT = "<C-s> submits"


def form(nvim) -> dict:
    return nvim.exec_lua("""
        local q = require('acp_nvim.question')
        local e = q.open_questions[q.order[1]]
        if not e then return vim.empty_dict() end
        local win = vim.fn.bufwinid(e.buf)
        if win == -1 then return vim.empty_dict() end
        local lines = vim.api.nvim_buf_get_lines(e.buf, 0, -1, false)
        return { lines = lines, height = vim.api.nvim_win_get_height(win),
                 last_shown = vim.fn.line('w$', win), screen = vim.o.lines }""")


def ask(nvim) -> dict:
    nvim.exec_lua(NOTIFY + SELECT)
    nvim.command("Ai")
    wait_for(lambda: nvim.exec_lua("local s = require('acp_nvim.state').sessions['demo/1'] "
                                   "return s and s.state == 'idle'"), timeout=30, what="an idle session")
    nvim.command("Ai send ask tool")
    return wait_for(lambda: form(nvim).get("lines") and form(nvim), timeout=30, what="the question form's window")


def test_the_window_shows_the_whole_form_with_its_key_hint(nvim, workspace):
    shown = ask(nvim)
    assert len(shown["lines"]) >= 13, "the demo's form is the one that was cut at 12 lines"
    assert HINT in shown["lines"][-1]
    assert shown["height"] == len(shown["lines"])
    assert shown["last_shown"] == len(shown["lines"]), "the key hint is on screen"


def test_on_a_small_screen_the_window_is_capped_and_the_form_scrolls(nvim, workspace):
    nvim.command("set lines=14")
    shown = ask(nvim)
    assert shown["height"] < len(shown["lines"]) and shown["height"] <= shown["screen"] - 6
    # The cap is an upper bound: with the chat column's prompt window holding its rows, Neovim may give less.
    assert 1 <= shown["height"] <= nvim.exec_lua("return require('acp_nvim.question').window_height(1000)")
    # Five lines leave room for one window only (the chat column's windows need more: E593).
    assert nvim.exec_lua("vim.cmd.only() vim.o.lines = 5 return require('acp_nvim.question').window_height(13)") == 1
