"""The chat's prompt: a buffer of its own in a window under the chat, edited like any buffer (keys typed as
a user types them, a real host and demo agent): `u`/`<C-r>` undo and redo only what the user typed, the
agent's streaming never touches the prompt's undo history, a send clears it in one undo step."""

from __future__ import annotations

import pytest

from helpers import buffer_text, wait_for
from helpers import session_state as state

pytestmark = pytest.mark.timeout(90)

CHAT = "acp://chat/demo/1"
PROMPT = "acp://prompt/demo/1"

UNDO_STATE = """
local buf = vim.fn.bufnr(...)
return vim.api.nvim_buf_call(buf, function()
  local tree = vim.fn.undotree()
  return { changenr = vim.fn.changenr(), seq_last = tree.seq_last, entries = #tree.entries }
end)"""


def start(nvim) -> None:
    nvim.command("Ai")
    wait_for(lambda: state(nvim).get("state") == "idle", timeout=20, what="the session to start")


def lines(nvim, name: str = PROMPT) -> list[str]:
    return nvim.api.buf_get_lines(nvim.funcs.bufnr(name), 0, -1, False)


def typed(nvim, keys: str, expected: list[str], mode: str = "n") -> None:
    """Type ``keys`` and wait until the prompt holds ``expected`` with Neovim in ``mode`` (insert mode
    may be its completion submode)."""
    nvim.input(keys)
    wait_for(lambda: lines(nvim) == expected and nvim.api.get_mode()["mode"] in (mode, mode + "c"),
             what=f"the prompt to read {expected!r} after {keys!r}", nvim=nvim)


def in_prompt_window(nvim) -> None:
    """Go to the prompt window as a user does: `<C-w>j` from the chat window above it."""
    nvim.api.set_current_win(nvim.funcs.bufwinid(CHAT))
    nvim.input("<C-w>j")
    wait_for(lambda: nvim.api.buf_get_name(0) == PROMPT and nvim.api.get_mode()["mode"] == "n",
             what="normal mode in the prompt window", nvim=nvim)


def test_u_and_ctrl_r_undo_and_redo_what_the_user_typed(nvim):
    start(nvim)
    buf = nvim.funcs.bufnr(PROMPT)
    option = lambda name: nvim.api.get_option_value(name, {"buf": buf})  # noqa: E731
    assert (option("filetype"), option("buftype"), option("bufhidden")) == ("acp_prompt", "nofile", "hide")
    assert nvim.exec_lua("local l = vim.bo[...].undolevels; return l == -123456 and vim.go.undolevels or l",
                         buf) == nvim.options["undolevels"], "the user's 'undolevels'"
    in_prompt_window(nvim)
    typed(nvim, "ifirst line<Esc>", ["first line"])
    typed(nvim, "osecond line<Esc>", ["first line", "second line"])
    typed(nvim, "u", ["first line"])
    typed(nvim, "<C-r>", ["first line", "second line"])
    typed(nvim, "uu", [""])
    typed(nvim, "<C-r>", ["first line"])
    assert state(nvim).get("state") == "idle" and "restarted" not in buffer_text(nvim, CHAT), \
        "<C-r> is redo, not a restart"


def test_streaming_into_the_chat_leaves_the_prompts_undo_history_alone(nvim):
    start(nvim)
    in_prompt_window(nvim)
    typed(nvim, "ia draft<Esc>", ["a draft"])
    before = nvim.exec_lua(UNDO_STATE, PROMPT)
    nvim.command("Ai send slow 60")  # 60 chunks, one every 50 ms
    wait_for(lambda: "tick 5" in buffer_text(nvim, CHAT), timeout=20, what="the agent to stream", nvim=nvim)
    assert nvim.exec_lua(UNDO_STATE, PROMPT) == before, "streaming is no change of the prompt"
    typed(nvim, "A, more<Esc>", ["a draft, more"])  # typed while the agent streams
    wait_for(lambda: "── turn ended: end_turn" in buffer_text(nvim, CHAT), timeout=30, what="the turn's end",
             nvim=nvim)
    after = nvim.exec_lua(UNDO_STATE, PROMPT)
    assert after["seq_last"] == before["seq_last"] + 1 and after["entries"] == before["entries"] + 1, \
        "one undo step: the user's own"
    assert "tick 59" in buffer_text(nvim, CHAT) and lines(nvim) == ["a draft, more"]
    typed(nvim, "u", ["a draft"])
    typed(nvim, "u", [""])
    typed(nvim, "<C-r><C-r>", ["a draft, more"])


def test_a_send_clears_the_prompt_in_one_undo_step(nvim):
    start(nvim)
    in_prompt_window(nvim)
    typed(nvim, "ihello there<C-s>", [""], mode="i")
    wait_for(lambda: "You said: hello there" in buffer_text(nvim, CHAT), timeout=20, what="the reply", nvim=nvim)
    typed(nvim, "<Esc>u", ["hello there"])
    typed(nvim, "A again<Esc><CR>", [""])  # <CR> in normal mode sends too
    wait_for(lambda: "You said: hello there again" in buffer_text(nvim, CHAT), timeout=20, what="the reply",
             nvim=nvim)
    typed(nvim, "u", ["hello there again"])
    typed(nvim, "<C-r>", [""])


def test_completion_history_and_the_chat_keys_work_from_the_prompt(nvim, workspace):
    (workspace / "alpha_unique.py").write_text("x\n")
    start(nvim)
    wait_for(lambda: state(nvim).get("command_info"), what="the agent's slash commands", nvim=nvim)
    in_prompt_window(nvim)
    typed(nvim, "i/pla<C-x><C-o>", ["/plan"], mode="i")
    typed(nvim, " @alpha_u<C-x><C-o>", ["/plan @alpha_unique.py"], mode="i")
    typed(nvim, "<C-u>", [""], mode="i")
    typed(nvim, "echo from the prompt<C-s>", [""], mode="i")
    wait_for(lambda: buffer_text(nvim, CHAT).count("── turn ended") >= 1, timeout=20, what="the turn", nvim=nvim)
    typed(nvim, "<M-p>", ["echo from the prompt"], mode="i")
    typed(nvim, "<M-n>", [""], mode="i")
    typed(nvim, "<Esc>", [""])
    in_chat = nvim.funcs.bufwinid(CHAT)
    nvim.api.set_current_win(in_chat)
    nvim.command("normal! gg")
    nvim.input("G")  # the chat's own motions stay Vim's
    wait_for(lambda: nvim.api.win_get_cursor(in_chat)[0] == nvim.api.buf_line_count(nvim.funcs.bufnr(CHAT)),
             what="G in the chat", nvim=nvim)


def test_the_prompt_window_sits_under_the_chat_and_closes_with_it(nvim):
    start(nvim)
    chat_win, prompt_win = nvim.funcs.bufwinid(CHAT), nvim.funcs.bufwinid(PROMPT)
    assert prompt_win != -1 and nvim.api.get_current_win().handle == chat_win, "the chat window has the cursor"
    chat_row, chat_col = nvim.api.win_get_position(chat_win)
    prompt_row, prompt_col = nvim.api.win_get_position(prompt_win)
    assert prompt_col == chat_col and nvim.api.win_get_width(prompt_win) == nvim.api.win_get_width(chat_win)
    assert prompt_row > chat_row + nvim.api.win_get_height(chat_win) - 1, "below it"
    assert nvim.api.win_get_height(prompt_win) == 6, "chat.prompt_height"
    assert nvim.api.get_option_value("winfixheight", {"win": prompt_win})
    label = nvim.exec_lua("return require('acp_nvim.chat').chats['demo/1'].label")
    assert "<C-s> or <CR> sends" in label and "history" in label
    winbar = nvim.api.get_option_value("winbar", {"win": prompt_win}).removeprefix("%#AcpNvimPromptSeparator#")
    shown = winbar.removesuffix("…")  # the label, shortened at a word boundary to the window (acp_nvim-layout)
    assert label.startswith(shown) and len(shown) > len("── prompt"), (label, winbar)
    nvim.command("close")
    wait_for(lambda: nvim.funcs.bufwinid(PROMPT) == -1, what="the prompt window to close with the chat's",
             nvim=nvim)
    nvim.command("Ai")
    wait_for(lambda: nvim.funcs.bufwinid(CHAT) != -1 and nvim.funcs.bufwinid(PROMPT) != -1,
             what="both windows again", nvim=nvim)


def test_a_low_chat_window_keeps_its_lines_and_the_height_is_checked(nvim):
    nvim.exec_lua("require('acp_nvim').setup({ chat = { position = 'bottom', height = 9, prompt_height = 6 } })")
    start(nvim)
    chat_win, prompt_win = nvim.funcs.bufwinid(CHAT), nvim.funcs.bufwinid(PROMPT)
    assert prompt_win != -1
    assert nvim.api.win_get_height(chat_win) >= 5, "the chat keeps at least 5 lines: the prompt gets lower"
    assert 1 <= nvim.api.win_get_height(prompt_win) < 6
    problems = nvim.exec_lua("""local m = require('acp_nvim'); m.setup({ chat = { prompt_height = 0 } })
        local _ = m.config; return table.concat(require('acp_nvim.config.options').problems, '\\n')""")
    assert problems == "chat.prompt_height: expected a whole number from 1 to 100; using the default"
    assert nvim.exec_lua("return require('acp_nvim').config.chat.prompt_height") == 6
