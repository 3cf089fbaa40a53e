"""The permission prompt for requests without a diff (lua/acp_nvim/permission.lua) in real Neovim."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(30)

RECORDER = """
let g:acp_answers = []
function! AcpNvimAnswer(id, option) abort
  call add(g:acp_answers, [a:id, a:option])
endfunction
"""

OPTIONS = [
    {"id": "demo-yes", "name": "Allow once", "kind": "allow_once"},
    {"id": "demo-always", "name": "Always allow", "kind": "allow_always"},
    {"id": "demo-no", "name": "Reject", "kind": "reject_once"},
    {"id": "demo-never", "name": "Always reject", "kind": "reject_always"},
    {"id": "x-other", "name": "Ask me later", "kind": "something_new"},
]


def ask(nvim, qid: int, title: str, detail: str, kind: str = "execute") -> None:
    nvim.exec_lua("require('acp_nvim.permission').ask(...)", qid, {
        "session": "demo/1", "title": title, "kind": kind, "detail": detail, "options": OPTIONS})


def screen(nvim) -> list[str]:
    nvim.command("redraw!")
    return nvim.exec_lua("""
        local rows = {}
        for r = 1, vim.o.lines do
          local chars = {}
          for c = 1, vim.o.columns do chars[#chars + 1] = vim.fn.screenstring(r, c) end
          rows[#rows + 1] = table.concat(chars)
        end
        return rows""")


def float_open(nvim) -> bool:
    return nvim.exec_lua("local w = require('acp_nvim.permission').win; return w ~= nil and "
                         "vim.api.nvim_win_is_valid(w)")


@pytest.fixture
def prompt(nvim):
    nvim.command(RECORDER)
    return nvim


def test_prompt_snapshot_shows_everything(prompt):
    ask(prompt, 1, "git status", "$ git status\n→ /ws/repo")
    ask(prompt, 2, "fetch https://example.com", '{\n  "url": "https://example.com"\n}', kind="fetch")
    rows = [row.rstrip() for row in screen(prompt) if "│" in row or "╭" in row or "╰" in row]
    text = "\n".join(rows)
    assert "acp.nvim · permission 1/2" in rows[0]
    for expected in ("demo/1 asks permission:", "git status", "kind: execute", "$ git status", "→ /ws/repo",
                     "[1/a]   Allow once  (allow_once)", "[2/A]   Always allow  (allow_always)",
                     "[3/r]   Reject  (reject_once)", "[4/R]   Always reject  (reject_always)",
                     "[5]     Ask me later  (something_new)", "1 more request waiting: :Ai permissions lists them",
                     "q hides this prompt (still pending)"):
        assert expected in text, expected


def test_answers_go_out_once_and_the_queue_moves_on(prompt):
    ask(prompt, 1, "git status", "$ git status")
    ask(prompt, 2, "make", "$ make")
    prompt.input("A")
    assert prompt.eval("g:acp_answers") == [[1, "demo-always"]]
    assert "$ make" in prompt.api.buf_get_lines(0, 0, -1, False)[5]
    prompt.input("5")  # an option of a kind we have no letter for: by number
    assert prompt.eval("g:acp_answers") == [[1, "demo-always"], [2, "x-other"]]
    assert not float_open(prompt)
    prompt.input("a")
    assert len(prompt.eval("g:acp_answers")) == 2


def test_hide_and_show_again(prompt):
    ask(prompt, 1, "git status", "$ git status")
    prompt.input("q")
    assert not float_open(prompt)
    assert prompt.eval("g:acp_answers") == []
    prompt.command("Ai permissions")
    assert float_open(prompt)
    prompt.input("r")
    assert prompt.eval("g:acp_answers") == [[1, "demo-no"]]


def test_dismiss_drops_the_request_without_answering(prompt):
    ask(prompt, 1, "git status", "$ git status")
    ask(prompt, 2, "make", "$ make")
    prompt.exec_lua("require('acp_nvim.permission').dismiss(1)")
    assert "$ make" in "\n".join(prompt.api.buf_get_lines(0, 0, -1, False))
    prompt.exec_lua("require('acp_nvim.permission').dismiss(2)")
    assert not float_open(prompt) and prompt.eval("g:acp_answers") == []


def test_nothing_pending(prompt):
    prompt.exec_lua("_G.msgs = {} vim.notify = function(m) table.insert(_G.msgs, m) end")
    prompt.command("Ai permissions")
    assert prompt.exec_lua("return _G.msgs") == ["[acp.nvim] no permission request is pending"]
