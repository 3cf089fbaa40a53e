"""The permission prompt for requests without a diff (lua/acp_nvim/question/permission.lua) in real Neovim,
driven with typed keys (``nvim_input``): nothing is answered by accident (acp_nvim.kit.guard)."""

from __future__ import annotations

import pytest

from helpers import answer_keys, capture_notes, wait_armed, wait_for
from helpers.lua import call_recorder

pytestmark = pytest.mark.timeout(40)

RECORDER = call_recorder("answer", "acp_answers")

OPTIONS = [
    {"id": "demo-yes", "name": "Allow once", "kind": "allow_once"},
    {"id": "demo-always", "name": "Always allow", "kind": "allow_always"},
    {"id": "demo-no", "name": "Reject", "kind": "reject_once"},
    {"id": "demo-never", "name": "Always reject", "kind": "reject_always"},
    {"id": "x-other", "name": "Ask me later", "kind": "something_new"},
]
ALLOW_RULE = "always allow execute `git status …` (with any further arguments) (demo in /ws)"
RULES = {"allow_always": ALLOW_RULE,
         "reject_always": "always reject execute `git status …` (with any further arguments) (demo in /ws)"}
SLOW = {"arm_ms": 4000, "quiet_ms": 4000}
"""Delays no test machine outruns: a key sent right after the prompt appears is surely too early."""
FAST = {"arm_ms": 150, "quiet_ms": 100}


def ask(nvim, qid: int, title: str, detail: str, kind: str = "execute", rules=None, no_rule: str = "",
        options=None) -> None:
    nvim.exec_lua("require('acp_nvim.question.permission').ask(...)", qid, {
        "session": "demo/1", "title": title, "kind": kind, "detail": detail, "options": options or OPTIONS,
        "rules": RULES if rules is None else rules, "no_rule": no_rule})


def setup(nvim, **permissions) -> None:
    nvim.exec_lua("require('acp_nvim').setup({ permissions = ... })", permissions)


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


def float_text(nvim) -> str:
    return "\n".join(nvim.exec_lua("""
        local w = require('acp_nvim.question.permission').prompt.win
        if not (w and vim.api.nvim_win_is_valid(w)) then return {} end
        return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false)"""))


def float_open(nvim) -> bool:
    return nvim.exec_lua("local w = require('acp_nvim.question.permission').prompt.win; return w ~= nil and "
                         "vim.api.nvim_win_is_valid(w)")


def in_float(nvim) -> bool:
    return nvim.exec_lua("return vim.api.nvim_get_current_win() == require('acp_nvim.question.permission').prompt.win")


def answers(nvim) -> list:
    return nvim.eval("g:acp_answers")


@pytest.fixture
def prompt(nvim):
    nvim.exec_lua(RECORDER)
    return nvim


def test_prompt_snapshot_shows_everything(prompt):
    setup(prompt, **FAST)
    ask(prompt, 1, "git status", "$ git status\n→ /ws/repo")
    ask(prompt, 2, "fetch https://example.com", '{\n  "url": "https://example.com"\n}', kind="fetch")
    assert "keys wait a moment" in float_text(prompt), "the hint says keys wait while they do"
    wait_armed(prompt)
    wait_for(lambda: "q hides this prompt" in float_text(prompt))
    rows = [row.rstrip() for row in screen(prompt) if "│" in row or "╭" in row or "╰" in row]
    text = "\n".join(rows)
    assert "acp.nvim · permission 1/2" in rows[0]
    for expected in ("demo/1 asks permission:", "git status", "kind: execute", "$ git status", "→ /ws/repo",
                     "[1/a]   Allow once  (allow_once)",
                     "[2/A]   Always allow  (allow_always)  · shows the rule first",
                     "[3/r]   Reject  (reject_once)", "[4/R]   Always reject  (reject_always)",
                     "[5]     Ask me later  (something_new)", "1 more request waiting: :Ai permissions lists them",
                     "q hides this prompt (still pending)"):
        assert expected in text, expected


def test_keys_wait_until_the_prompt_was_visible_long_enough(prompt):
    setup(prompt, **SLOW)
    ask(prompt, 1, "git status", "$ git status")
    assert in_float(prompt), "idle in normal mode: the prompt is entered"
    prompt.input("a")
    prompt.input("1")
    wait_for(lambda: "keys wait" in float_text(prompt) and "more" in float_text(prompt))
    assert answers(prompt) == [], "a fast a or 1 answers nothing"
    setup(prompt, **FAST)
    answer_keys(prompt, "a")
    wait_for(lambda: answers(prompt) == [[1, "demo-yes"]])
    assert not float_open(prompt)


def test_a_key_right_after_typing_does_not_count(prompt):
    setup(prompt, arm_ms=0, quiet_ms=4000)
    ask(prompt, 1, "git status", "$ git status")
    prompt.input("j")  # typing (here: moving in the prompt)
    prompt.input("a")  # ... and on without a pause
    wait_for(lambda: "keys wait" in float_text(prompt))
    assert answers(prompt) == []


def test_answers_go_out_once_and_the_next_prompt_waits_again(prompt):
    setup(prompt, **FAST)
    ask(prompt, 1, "git status", "$ git status")
    ask(prompt, 2, "make", "$ make")
    answer_keys(prompt, "r")
    wait_for(lambda: answers(prompt) == [[1, "demo-no"]])
    assert "$ make" in float_text(prompt) and in_float(prompt), "the next request, in the same place"
    setup(prompt, **SLOW)
    prompt.input("r")  # the second request just appeared: too early
    assert answers(prompt) == [[1, "demo-no"]]
    setup(prompt, **FAST)
    answer_keys(prompt, "5")  # an option of a kind we have no letter for: by number
    wait_for(lambda: answers(prompt) == [[1, "demo-no"], [2, "x-other"]])
    assert not float_open(prompt)
    prompt.input("a")
    assert len(answers(prompt)) == 2


def test_always_asks_to_confirm_the_exact_rule(prompt):
    setup(prompt, **FAST)
    ask(prompt, 1, "git status", "$ git status -s")
    answer_keys(prompt, "A")
    wait_for(lambda: "Remember this answer?" in float_text(prompt))
    assert ALLOW_RULE in float_text(prompt) and answers(prompt) == []
    answer_keys(prompt, "n")  # back to the request: nothing stored, nothing answered
    wait_for(lambda: "[1/a]" in float_text(prompt))
    answer_keys(prompt, "A")
    wait_for(lambda: "Remember this answer?" in float_text(prompt))
    setup(prompt, **SLOW)
    prompt.input("y")  # the confirmation's keys wait too: "Ay" in a hurry stores nothing
    assert answers(prompt) == []
    setup(prompt, **FAST)
    answer_keys(prompt, "y")
    wait_for(lambda: answers(prompt) == [[1, "demo-always"]])


def test_always_is_not_offered_when_no_rule_fits(prompt):
    setup(prompt, **FAST)
    reason = "the command is not a simple command: it has `&`/`&&` runs several commands"
    ask(prompt, 1, "git status && rm -rf ~", "$ git status && rm -rf ~", rules={}, no_rule=reason)
    text = float_text(prompt)
    assert "(allow_always)  · not offered" in text and f'"always" is not offered: {reason}' in text
    answer_keys(prompt, "A")
    wait_for(lambda: text.count("not offered") < float_text(prompt).count("not offered"))
    answer_keys(prompt, "2")
    assert answers(prompt) == [] and "Remember" not in float_text(prompt)
    answer_keys(prompt, "a")
    wait_for(lambda: answers(prompt) == [[1, "demo-yes"]])


def test_typing_in_insert_mode_is_never_taken(prompt, workspace):
    setup(prompt, **FAST)
    path = workspace / "notes.txt"
    prompt.command(f"edit {path}")
    prompt.input("iAl")
    ask(prompt, 1, "git status", "$ git status")
    prompt.input("so hello")
    wait_for(lambda: prompt.api.get_current_line() == "Also hello")
    assert prompt.api.get_mode()["mode"] == "i" and not in_float(prompt)
    assert float_open(prompt) and ":Ai permissions goes to this prompt" in float_text(prompt)
    assert answers(prompt) == []
    prompt.input("<Esc>")
    prompt.command("Ai permissions")
    assert in_float(prompt)
    answer_keys(prompt, "a")
    wait_for(lambda: answers(prompt) == [[1, "demo-yes"]])
    assert prompt.api.buf_get_lines(prompt.funcs.bufnr(str(path)), 0, -1, False) == ["Also hello"]


def test_a_user_who_just_typed_in_normal_mode_keeps_the_cursor(prompt):
    setup(prompt, arm_ms=0, quiet_ms=4000)
    prompt.exec_lua("require('acp_nvim.kit.guard').start()")  # as the first :Ai does
    prompt.command("enew")
    prompt.input("j")
    ask(prompt, 1, "git status", "$ git status")
    assert float_open(prompt) and not in_float(prompt)


def test_focus_never(prompt):
    setup(prompt, focus="never", **FAST)
    ask(prompt, 1, "git status", "$ git status")
    assert float_open(prompt) and not in_float(prompt)
    prompt.command("Ai permissions")
    assert in_float(prompt)


def test_control_characters_are_shown_and_ids_go_back_as_sent(prompt):
    setup(prompt, **FAST)
    options = [{"id": "y\x00es", "name": "A\x00llow\nonce", "kind": "allow_once"}]
    ask(prompt, 1, "two\nlines\x1b[31m", "$ ls", options=options, rules={})
    text = float_text(prompt)
    assert "two↵lines^[[31m" in text and "A^@llow↵once" in text
    answer_keys(prompt, "a")
    wait_for(lambda: answers(prompt))
    assert answers(prompt)[0][1] in ("y\x00es", b"y\x00es")


def test_a_request_that_cannot_be_shown_is_answered_empty(prompt):
    capture_notes(prompt, "msgs")
    prompt.exec_lua("require('acp_nvim.question.permission').ask(1, { session = 'demo/1', title = 't', "
                    "kind = 'execute', detail = '', "
                    "options = { { id = 'y', name = 'Yes', kind = 'allow_once' } }, rules = {} })")
    prompt.exec_lua("require('acp_nvim.kit.float').config = function() error('no room') end")
    prompt.exec_lua("require('acp_nvim.question.permission').dismiss(1)")
    ask(prompt, 2, "git status", "$ git status")
    assert answers(prompt) == [[2, None]]
    assert any("cannot show a permission request" in m for m in prompt.exec_lua("return _G.msgs"))
    assert prompt.exec_lua("return #require('acp_nvim.question.permission').pending()") == 0


def test_hide_and_show_again(prompt):
    setup(prompt, **FAST)
    ask(prompt, 1, "git status", "$ git status")
    prompt.input("q")
    assert not float_open(prompt)
    assert answers(prompt) == []
    prompt.command("Ai permissions")
    assert float_open(prompt)
    answer_keys(prompt, "r")
    wait_for(lambda: answers(prompt) == [[1, "demo-no"]])


def test_dismiss_drops_the_request_without_answering(prompt):
    ask(prompt, 1, "git status", "$ git status")
    ask(prompt, 2, "make", "$ make")
    prompt.exec_lua("require('acp_nvim.question.permission').dismiss(1)")
    assert "$ make" in float_text(prompt)
    prompt.exec_lua("require('acp_nvim.question.permission').dismiss(2)")
    assert not float_open(prompt) and answers(prompt) == []
    assert prompt.exec_lua("return #require('acp_nvim.question.permission').pending()") == 0


def test_nothing_pending(prompt):
    capture_notes(prompt, "msgs")
    prompt.command("Ai permissions")
    assert prompt.exec_lua("return _G.msgs") == ["[acp.nvim] no permission request is pending"]
