"""Nothing is answered by accident, end to end: real host, real demo agent, keys typed with
``nvim_input`` as a user types them (issue 11 §2)."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import advance_guard_clock, answer_keys, chat, freeze_guard_clock, wait_armed, wait_for

# The guard's clock is frozen and moved on by the tests (helpers.freeze_guard_clock): "at once" and
# "after a pause" are what the test says, never what a loaded machine makes of them.


IN_PROMPT = "return vim.api.nvim_get_current_win() == require('acp_nvim.question.permission').prompt.win"


def typed(nvim, key: str) -> None:
    """Type ``key`` a millisecond of the frozen guard clock after the last, and return once Neovim has
    handled it: the guard records a typed key in the same input cycle that runs the key's mapping,
    and a request is served only between cycles."""
    last = "return require('acp_nvim.kit.guard').last"
    before = nvim.exec_lua(last)
    advance_guard_clock(nvim, 1)
    nvim.input(key)
    wait_for(lambda: nvim.exec_lua(last) != before, what=f"the key {key} to be handled", nvim=nvim)


def session(nvim) -> dict:
    return nvim.exec_lua("return require('acp_nvim.state').sessions['demo/1'] or vim.empty_dict()")


def queued(nvim) -> list[dict]:
    return nvim.exec_lua("return vim.tbl_map(function(e) return { id = e.id, title = e.q.title } end, "
                         "require('acp_nvim.question.permission').pending())")


def float_text(nvim) -> str:
    return "\n".join(nvim.exec_lua("""
        local w = require('acp_nvim.question.permission').prompt.win
        if not (w and vim.api.nvim_win_is_valid(w)) then return {} end
        return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false)"""))


def started(nvim, workspace: Path) -> Path:
    """notes.txt open in a window of its own, the demo session idle in the chat beside it."""
    path = workspace / "notes.txt"
    path.write_text("")
    nvim.command(f"edit {path}")
    nvim.command("Ai")
    wait_for(lambda: session(nvim).get("state") == "idle", timeout=30, what="an idle session")
    nvim.command(f"call win_gotoid(bufwinid('{path}'))")
    return path


def test_typing_while_a_request_arrives_answers_nothing_and_every_key_lands(nvim, workspace):
    path = started(nvim, workspace)
    freeze_guard_clock(nvim)  # however slowly the keys come, the user counts as typing
    file_win = nvim.api.get_current_win()
    nvim.input("iAl")
    nvim.command("Ai send shell git status")  # the agent asks while the user types on
    typed = "so hello"
    for index, key in enumerate(typed):
        nvim.input(key)
        if index == 0:
            wait_for(lambda: queued(nvim), timeout=30, what="the request to arrive", nvim=nvim)
    wait_for(lambda: nvim.api.get_current_line() == "Also hello", timeout=10, what="every typed key")
    assert nvim.api.get_current_win() == file_win and nvim.api.get_mode()["mode"] == "i"
    assert [entry["title"] for entry in queued(nvim)] == ["git status"], "the request is pending"
    wait_for(lambda: session(nvim).get("state") == "waiting", timeout=10, what="the session to wait for the user")
    assert session(nvim).get("pending") == 1, "the Python side holds it unanswered"
    assert "would run" not in chat(nvim) and "Command rejected" not in chat(nvim), "the agent got no answer"
    assert ":Ai permissions goes to this prompt" in float_text(nvim)
    nvim.input("<Esc>:w<CR>")
    wait_for(lambda: path.read_text() == "Also hello\n", timeout=10, what="the typed text saved")
    nvim.input(":Ai permissions<CR>")
    wait_for(lambda: nvim.exec_lua(IN_PROMPT), what="the prompt entered", nvim=nvim)
    advance_guard_clock(nvim, 1000)
    answer_keys(nvim, "r")
    wait_for(lambda: "Command rejected" in chat(nvim), timeout=20, what="the answer the user chose")
    assert session(nvim).get("pending") == 0


def test_a_fast_key_does_nothing_and_always_shows_the_rule_first(nvim, workspace):
    started(nvim, workspace)
    freeze_guard_clock(nvim)
    nvim.command("Ai send shell git status -s")
    wait_for(lambda: queued(nvim), timeout=30, what="the request")
    assert nvim.exec_lua(IN_PROMPT), \
        "idle in normal mode: the prompt is entered"
    for key in "a1A":
        typed(nvim, key)
    assert "s more:" in float_text(nvim), "the keys were turned away"
    assert len(queued(nvim)) == 1 and session(nvim).get("pending") == 1, "nothing was answered"
    advance_guard_clock(nvim, 1000)
    wait_armed(nvim)
    nvim.input("A")
    wait_for(lambda: "Remember this answer?" in float_text(nvim), timeout=5, what="the confirmation")
    assert ("always allow execute `git status -s …` (with further file or ref names; no other option, "
                                  "no path outside, no link)") in float_text(nvim)
    typed(nvim, "y")
    assert "s more:" in float_text(nvim), "the confirmation's key was turned away"
    assert len(queued(nvim)) == 1
    advance_guard_clock(nvim, 1000)
    answer_keys(nvim, "y")
    text = wait_for(lambda: "turn ended" in chat(nvim) and chat(nvim), timeout=20)
    assert "(demo) would run: git status -s" in text and "remembered: always allow execute `git status -s …`" in text
    rules = json.loads((Path(nvim.funcs.stdpath("state")) / "acp_nvim" / "rules.json").read_text())["rules"]
    mine = [(r["command"], r["exact"]) for r in rules if r["workspace"] == str(workspace)]
    assert mine == [(["git", "status"], False)]


def test_a_compound_command_offers_no_always(nvim, workspace):
    nvim.exec_lua("require('acp_nvim').setup({ permissions = { arm_ms = 100, quiet_ms = 100 } })")
    started(nvim, workspace)
    nvim.command("Ai send shell cd /ws && npm test")
    wait_for(lambda: queued(nvim), timeout=30, what="the request")
    text = float_text(nvim)
    assert "(allow_always)  · not offered" in text and "it has `&`/`&&` runs several commands" in text
    answer_keys(nvim, "A")
    wait_for(lambda: "keys wait" not in float_text(nvim) and "is not offered" in float_text(nvim).split("\n")[-1])
    assert "Remember" not in float_text(nvim) and len(queued(nvim)) == 1
    answer_keys(nvim, "r")
    wait_for(lambda: "Command rejected" in chat(nvim), timeout=20)
    stored = Path(nvim.funcs.stdpath("state")) / "acp_nvim" / "rules.json"  # shared by the tests of a run
    assert not stored.exists() or str(workspace) not in stored.read_text()
