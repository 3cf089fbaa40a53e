"""One layout for any number of sessions (|acp_nvim-layout|), in a real Neovim with a UI attached and
keys typed, against real demo agents: one chat column per tab that switches between the sessions' chats,
no window under 20 columns, :Ai toggle, the board and the log below, the windows' labels (winbar), and the header
and the prompt window's separator (its winbar) fitted to the window at a word boundary."""

from __future__ import annotations

import pytest

from helpers import NOTIFY, SELECT, buffer_text, session_state, wait_for, wait_idle

pytestmark = pytest.mark.timeout(180)

COLUMNS, LINES = 160, 45

WINDOWS_LUA = """
local out = {}
for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
  if vim.api.nvim_win_get_config(win).relative == '' then
    local buf = vim.api.nvim_win_get_buf(win)
    local pos = vim.api.nvim_win_get_position(win)
    out[#out + 1] = { win = win, name = vim.api.nvim_buf_get_name(buf), ft = vim.bo[buf].filetype,
      width = vim.api.nvim_win_get_width(win), height = vim.api.nvim_win_get_height(win),
      row = pos[1], col = pos[2] }
  end
end
return out"""

SCREEN_ROW_LUA = """
local win, line = ...
local pos = vim.fn.win_screenpos(win)
local info = vim.fn.getwininfo(win)[1]
local cells = {}
for col = pos[2] + info.textoff, pos[2] + vim.api.nvim_win_get_width(win) - 1 do
  cells[#cells + 1] = vim.fn.screenstring(pos[1] + info.winbar + line, col)
end
return table.concat(cells)"""


@pytest.fixture
def ui(nvim):
    """The editor with a UI of a fixed size attached, so Neovim draws its screen."""
    nvim.ui_attach(COLUMNS, LINES, rgb=True, ext_linegrid=True)
    nvim.exec_lua(NOTIFY + SELECT)
    yield nvim
    nvim.ui_detach()


def typed(nvim, keys: str) -> None:
    """Type ``keys`` as the user does (each test then waits for what they do)."""
    nvim.input(keys)


def windows(nvim) -> list[dict]:
    return nvim.exec_lua(WINDOWS_LUA)


def chats(nvim) -> list[dict]:
    return [w for w in windows(nvim) if w["ft"] == "acp_chat"]


def shown_chat(nvim) -> str:
    found = chats(nvim)
    return found[0]["name"] if len(found) == 1 else ""


def screen_row(nvim, win: int, line: int) -> str:
    """What the screen shows in row ``line`` (0-based) of window ``win``'s text area."""
    nvim.command("redraw")
    return nvim.exec_lua(SCREEN_ROW_LUA, win, line).rstrip()


def winbar(nvim, win: int) -> str:
    """The window's winbar as drawn on the screen."""
    nvim.command("redraw")
    return nvim.exec_lua("""
local win = ...
local pos = vim.fn.win_screenpos(win)
local row = pos[1]
local cells = {}
for col = pos[2], pos[2] + vim.api.nvim_win_get_width(win) - 1 do
  cells[#cells + 1] = vim.fn.screenstring(row, col)
end
return table.concat(cells)""", win).strip()


def new_session(nvim, key: str) -> None:
    typed(nvim, ":Ai new<CR>")
    wait_idle(nvim, key)
    wait_for(lambda: shown_chat(nvim) == f"acp://chat/{key}", what=f"{key}'s chat in the column")


def test_three_sessions_and_the_boards_n_share_one_column_and_no_window_is_narrow(ui):
    nvim = ui
    for key in ("demo/1", "demo/2", "demo/3"):
        new_session(nvim, key)
        assert len(chats(nvim)) == 1
    typed(nvim, ":Ai board<CR>")
    wait_for(lambda: "demo/3 " in buffer_text(nvim, "acp://board"), what="the board's rows")
    column = chats(nvim)[0]
    board = next(w for w in windows(nvim) if w["name"] == "acp://board")
    assert board["row"] > 0, "the board opens below the editing window"
    assert board["col"] + board["width"] <= column["col"], "the board is beside the chat column, not under it"
    prompt = next(w for w in windows(nvim) if w["ft"] == "acp_prompt")
    assert prompt["col"] == column["col"] and prompt["row"] > column["row"], "the prompt window is under the chat"
    assert prompt["row"] + prompt["height"] >= LINES - 4, "the chat column keeps its full height"

    typed(nvim, f":call win_gotoid({board['win']})<CR>")
    wait_for(lambda: nvim.api.get_current_win().handle == board["win"], what="the cursor in the board")
    typed(nvim, "n")  # the board's key: a new session of the agent under the cursor
    wait_idle(nvim, "demo/4")
    wait_for(lambda: shown_chat(nvim) == "acp://chat/demo/4", what="demo/4's chat in the same column")
    wins = windows(nvim)
    assert all(w["width"] >= 20 for w in wins), wins
    assert len([w for w in wins if w["ft"] == "acp_chat"]) == 1, wins
    assert chats(nvim)[0]["win"] == column["win"] and chats(nvim)[0]["width"] == column["width"]

    typed(nvim, ":Ai open demo/3<CR>")
    wait_for(lambda: shown_chat(nvim) == "acp://chat/demo/3", what=":Ai open demo/3 in the column")
    assert winbar(nvim, column["win"]).startswith("demo/3 · chat")
    board = next(w for w in windows(nvim) if w["name"] == "acp://board")
    assert winbar(nvim, board["win"]).startswith("acp · board")

    typed(nvim, ":Ai log<CR>")
    wait_for(lambda: any(w["name"] == "acp://log/demo/3" for w in windows(nvim)), what="the log of demo/3")
    log = next(w for w in windows(nvim) if w["name"] == "acp://log/demo/3")
    assert log["row"] > 0 and log["col"] + log["width"] <= column["col"], "the log opens below, beside the column"
    assert winbar(nvim, log["win"]).startswith("demo/3 · log")
    after = chats(nvim)[0]
    assert (after["width"], after["height"]) == (column["width"], column["height"]), "the column is not squeezed"
    assert all(w["width"] >= 20 for w in windows(nvim)), windows(nvim)


def test_toggle_hides_and_shows_the_column_with_its_width_and_the_session_runs_on(ui):
    nvim = ui
    new_session(nvim, "demo/1")
    new_session(nvim, "demo/2")
    typed(nvim, ":Ai send slow 60<CR>")
    wait_for(lambda: session_state(nvim, "demo/2").get("state") == "running", what="demo/2 running")
    typed(nvim, ":vertical resize 50<CR>")  # the cursor is in the chat column: make it 50 wide
    wait_for(lambda: chats(nvim)[0]["width"] == 50, what="the column resized to 50")

    typed(nvim, ":Ai toggle<CR>")
    wait_for(lambda: not chats(nvim), what="the chat column hidden")
    assert session_state(nvim, "demo/2").get("state") == "running", "hiding the chat keeps the session"
    assert all(w["width"] >= 20 for w in windows(nvim))

    typed(nvim, ":Ai toggle<CR>")
    wait_for(lambda: shown_chat(nvim) == "acp://chat/demo/2", what="the chat column shown again")
    assert chats(nvim)[0]["width"] == 50, "the column keeps the width the user gave it"
    typed(nvim, "<Plug>(AcpNvimToggle)")
    wait_for(lambda: not chats(nvim), what="<Plug>(AcpNvimToggle) hides it")
    nvim.command("Ai toggle")
    wait_for(lambda: shown_chat(nvim) == "acp://chat/demo/2", what=":Ai toggle shows it again")


def fitted(full: str, shown: str, width: int) -> None:
    """``shown`` is ``full``, or its words up to a word boundary and '…', within ``width`` cells."""
    assert len(shown) <= width, (shown, width)
    if shown == full:
        return
    assert shown.endswith("…"), (full, shown)
    head = shown[:-1]
    assert full.startswith(head) and full[len(head)] in " ·", f"cut mid-word: {shown!r} of {full!r}"


@pytest.mark.parametrize("width", [80, 40])
def test_the_header_and_the_separator_fit_the_window_without_a_cut_word(ui, width):
    nvim = ui
    new_session(nvim, "demo/1")
    title = "A rather long title for a narrow chat column, longer than eighty columns of the screen"
    typed(nvim, f":Ai send title {title}<CR>")
    header = f"# acp.nvim · demo/1 · {title}"
    wait_for(lambda: buffer_text(nvim, "acp://chat/demo/1").startswith(header + "\n"), what="the title")
    win = chats(nvim)[0]["win"]
    typed(nvim, f":call win_gotoid({win}) | vertical resize {width}<CR>")
    wait_for(lambda: chats(nvim)[0]["width"] == width, what=f"the column resized to {width}")

    def header_row() -> str:
        shown = screen_row(nvim, win, 0)
        return shown if shown.endswith("…") else ""

    shown = wait_for(header_row, what=f"the header fitted to {width} columns")
    fitted(header, shown, width)
    assert buffer_text(nvim, "acp://chat/demo/1").startswith(header + "\n"), "the buffer keeps the whole header"

    prompt_win = next(w["win"] for w in windows(nvim) if w["ft"] == "acp_prompt")
    separator = winbar(nvim, prompt_win)  # the separator is the prompt window's winbar
    full = nvim.exec_lua("return require('acp_nvim.chat').chats['demo/1'].label")
    fitted(full, separator, width)

    assert len(header) > 80 and len(full) > 80

    if width == 40:  # wider again: fitted again to the new width
        typed(nvim, ":vertical resize 130<CR>")
        wait_for(lambda: screen_row(nvim, win, 0) == header, what="the whole header in 130 columns")
