"""The view kit (lua/acp_nvim/kit/) in a real headless Neovim: scratch buffers described by data,
the one leftover policy, and diff windows whose options are saved and given back exactly."""

from __future__ import annotations

import pytest
from pynvim.api.common import NvimError

pytestmark = pytest.mark.timeout(30)

KIT = "require('acp_nvim.kit')"


def create(nvim, spec: dict) -> tuple[int, bool]:
    buf, created = nvim.exec_lua(f"return {{ {KIT}.scratch.create(...) }}", spec)
    return buf, created


def buf_opts(nvim, buf: int, *names: str) -> dict:
    return {name: nvim.api.get_option_value(name, {"buf": buf}) for name in names}


def win_opt(nvim, win: int, name: str, scope: str = "local"):
    return nvim.api.get_option_value(name, {"win": win, "scope": scope})


# -- scratch buffers ---------------------------------------------------------------------------


def test_a_spec_makes_the_buffer_it_describes(nvim, workspace):
    buf, created = create(nvim, {"name": "acp://kit/one.py", "kind": "test", "buftype": "acwrite",
                                 "bufhidden": "hide", "filetype_from": str(workspace / "one.py"),
                                 "modifiable": False, "lines": ["x = 1", "y = 2"]})
    assert created
    assert nvim.api.buf_get_name(buf) == "acp://kit/one.py"
    assert buf_opts(nvim, buf, "buftype", "bufhidden", "swapfile", "filetype", "modifiable", "modified") == {
        "buftype": "acwrite", "bufhidden": "hide", "swapfile": False, "filetype": "python",
        "modifiable": False, "modified": False}
    assert nvim.api.buf_get_lines(buf, 0, -1, False) == ["x = 1", "y = 2"]
    assert nvim.api.buf_get_var(buf, "acp_nvim_scratch") == "test"
    assert not nvim.api.get_option_value("buflisted", {"buf": buf})


def test_the_buffer_is_named_before_it_is_filled_and_filling_is_no_undo_step(nvim):
    nvim.exec_lua("""
        _G.at_naming = nil
        vim.api.nvim_create_autocmd('BufFilePost', { pattern = 'acp://kit/*', callback = function(ev)
          _G.at_naming = vim.api.nvim_buf_get_lines(ev.buf, 0, -1, false)
        end })""")
    buf, _ = create(nvim, {"name": "acp://kit/named", "lines": ["text"]})
    assert nvim.exec_lua("return _G.at_naming") == [""]
    nvim.api.set_current_buf(buf)
    nvim.command("silent! undo")
    assert nvim.api.buf_get_lines(buf, 0, -1, False) == ["text"]


def test_a_leftover_of_ours_is_wiped_and_replaced(nvim):
    old, _ = create(nvim, {"name": "acp://kit/left", "bufhidden": "hide", "lines": ["old"]})
    new, created = create(nvim, {"name": "acp://kit/left", "lines": ["new"]})
    assert created and new != old
    assert not nvim.api.buf_is_valid(old)
    assert nvim.api.buf_get_lines(new, 0, -1, False) == ["new"]


def test_reuse_keeps_the_buffer_and_its_maps_and_refills_it(nvim):
    buf, _ = create(nvim, {"name": "acp://kit/list", "bufhidden": "hide", "modifiable": False,
                           "lines": ["one"], "reuse": True})
    nvim.exec_lua("vim.keymap.set('n', 'R', '<Nop>', { buffer = ... })", buf)
    again, created = create(nvim, {"name": "acp://kit/list", "bufhidden": "hide", "modifiable": False,
                                   "lines": ["two", "three"], "reuse": True})
    assert again == buf and not created
    assert nvim.api.buf_get_lines(buf, 0, -1, False) == ["two", "three"]
    assert nvim.api.get_option_value("modifiable", {"buf": buf}) is False
    assert nvim.exec_lua("return vim.api.nvim_buf_call(..., function() return vim.fn.maparg('R', 'n') end)",
                         buf) == "<Nop>"


def test_an_unloaded_leftover_is_not_reused_but_replaced(nvim):
    buf, _ = create(nvim, {"name": "acp://kit/gone", "bufhidden": "hide", "lines": ["old"], "reuse": True})
    nvim.command(f"bunload! {buf}")
    again, created = create(nvim, {"name": "acp://kit/gone", "lines": ["fresh"], "reuse": True})
    assert created and again != buf and not nvim.api.buf_is_valid(buf)
    assert nvim.api.buf_get_lines(again, 0, -1, False) == ["fresh"]


def test_a_buffer_that_is_not_ours_is_never_touched(nvim, workspace):
    path = workspace / "mine.txt"
    nvim.command(f"edit {path}")
    nvim.api.buf_set_lines(0, 0, -1, False, ["typed, not saved"])
    user_buf = nvim.api.get_current_buf().number
    count = len(nvim.api.list_bufs())
    with pytest.raises(NvimError, match=r"already exists and is not a view of acp\.nvim"):
        create(nvim, {"name": str(path), "lines": ["ours"]})
    assert nvim.api.buf_get_lines(user_buf, 0, -1, False) == ["typed, not saved"]
    assert len(nvim.api.list_bufs()) == count


def test_find_matches_names_exactly_not_as_patterns(nvim):
    create(nvim, {"name": "acp://kit/block/33", "bufhidden": "hide"})
    assert nvim.exec_lua(f"return {KIT}.scratch.find('acp://kit/block/3')") is None
    assert nvim.funcs.bufnr("acp://kit/block/3") != -1, "bufnr() would have taken block 33"


def test_a_buffer_that_cannot_be_set_up_is_wiped(nvim, workspace):
    count = len(nvim.api.list_bufs())
    nvim.exec_lua("_G.real_match = vim.filetype.match; vim.filetype.match = function() error('boom') end")
    try:
        with pytest.raises(NvimError, match="boom"):
            create(nvim, {"name": "acp://kit/broken", "filetype_from": str(workspace / "x.py")})
    finally:
        nvim.exec_lua("vim.filetype.match = _G.real_match")
    assert len(nvim.api.list_bufs()) == count
    assert nvim.funcs.bufexists("acp://kit/broken") == 0


def test_an_unnamed_spec_makes_an_unnamed_buffer(nvim):
    first, _ = create(nvim, {"kind": "float", "lines": ["one"], "modifiable": False})
    second, created = create(nvim, {"kind": "float", "lines": ["two"]})
    assert created and first != second and nvim.api.buf_get_name(first) == ""
    assert nvim.api.buf_get_lines(first, 0, -1, False) == ["one"]


def test_relative_names_are_found_by_their_full_path(nvim, workspace):
    buf, _ = create(nvim, {"name": "notes.md (proposal)", "bufhidden": "hide"})
    assert nvim.api.buf_get_name(buf) == f"{workspace}/notes.md (proposal)"
    assert nvim.exec_lua(f"return {KIT}.scratch.find('notes.md (proposal)')") == buf


# -- window options ----------------------------------------------------------------------------


def test_window_options_come_back_exactly_and_globals_are_untouched(nvim):
    nvim.command("set foldmethod=manual")
    nvim.command("setlocal foldmethod=indent nowrap")
    win = nvim.api.get_current_win().handle
    nvim.exec_lua(f"{KIT}.winopts.set(..., {{ foldmethod = 'diff', wrap = true, winbar = 'bar' }})", win)
    nvim.exec_lua(f"{KIT}.winopts.set(..., {{ foldmethod = 'marker' }})", win)  # the first save wins
    assert win_opt(nvim, win, "foldmethod") == "marker" and win_opt(nvim, win, "winbar") == "bar"
    assert win_opt(nvim, win, "foldmethod", "global") == "manual"
    nvim.exec_lua(f"{KIT}.winopts.restore(...)", win)
    assert (win_opt(nvim, win, "foldmethod"), win_opt(nvim, win, "wrap"), win_opt(nvim, win, "winbar")) == (
        "indent", False, "")
    assert win_opt(nvim, win, "foldmethod", "global") == "manual"
    assert nvim.exec_lua(f"return {KIT}.winopts.saved(...)", win) is None


# -- diff windows ------------------------------------------------------------------------------


def diff_tab(nvim, user_buf: int) -> list[int]:
    other, _ = create(nvim, {"name": "acp://kit/other", "lines": ["a", "B"]})
    return nvim.exec_lua(f"return {KIT}.diff.tab(...)", [user_buf, other])


def test_a_diff_tab_puts_only_its_own_windows_in_diff_mode(nvim, workspace):
    path = workspace / "file.txt"
    path.write_text("a\nb\n")
    nvim.command(f"edit {path}")
    user_win, user_buf = nvim.api.get_current_win().handle, nvim.api.get_current_buf().number
    tabs = len(nvim.api.list_tabpages())
    wins = diff_tab(nvim, user_buf)
    assert len(nvim.api.list_tabpages()) == tabs + 1
    assert nvim.api.win_get_buf(wins[0]).number == user_buf
    assert nvim.api.get_current_win().handle == wins[-1]
    assert all(win_opt(nvim, w, "diff") for w in wins) and not win_opt(nvim, user_win, "diff")
    assert not any(nvim.api.buf_get_name(b) == "" for b in nvim.api.list_bufs() if b.number > user_buf), \
        "the empty buffer of :tabnew is gone"
    nvim.exec_lua(f"{KIT}.diff.stop(...)", user_win)  # not ours: nothing happens
    assert not win_opt(nvim, user_win, "diff")


def test_stop_gives_a_diff_window_its_options_back(nvim, workspace):
    path = workspace / "file.txt"
    path.write_text("a\nb\n")
    nvim.command(f"edit {path}")
    nvim.command("setlocal foldmethod=indent foldcolumn=2 wrap")
    left = diff_tab(nvim, nvim.api.get_current_buf().number)[0]
    nvim.exec_lua(f"{KIT}.diff.set(..., {{ winbar = 'DIFF' }})", left)
    assert win_opt(nvim, left, "foldmethod") == "diff" and win_opt(nvim, left, "winbar") == "DIFF"
    nvim.exec_lua(f"{KIT}.diff.stop(...)", left)
    names = ("foldmethod", "foldcolumn", "wrap", "winbar", "diff", "scrollbind")
    assert {name: win_opt(nvim, left, name) for name in names} == {
        "foldmethod": "indent", "foldcolumn": "2", "wrap": True, "winbar": "", "diff": False, "scrollbind": False}


def test_close_closes_the_windows_but_never_the_last_one(nvim):
    tabs = len(nvim.api.list_tabpages())
    wins = diff_tab(nvim, nvim.api.get_current_buf().number)
    assert nvim.exec_lua(f"return {KIT}.diff.close(...)", wins) == []
    assert len(nvim.api.list_tabpages()) == tabs
    wins = diff_tab(nvim, nvim.api.get_current_buf().number)
    nvim.command("tabonly")
    assert nvim.exec_lua(f"return {KIT}.diff.close(...)", wins) == [wins[-1]]
    assert not win_opt(nvim, wins[-1], "diff")


# -- one-line messages -------------------------------------------------------------------------


def test_a_message_is_cut_to_fit_the_command_line_keeping_its_ends(nvim):
    nvim.command("set columns=80 ruler showcmd")
    room = nvim.eval("v:echospace")
    before, after = "[acp.nvim] review waiting: ", "; opens when you pause"
    title = "Edit " + "very/long/path/" * 10 + "file.py"
    line = nvim.exec_lua(f"return {KIT}.oneline.fit(...)", before, title, after)
    assert line.startswith(before + "Edit very/") and line.endswith("…" + after)
    assert nvim.funcs.strdisplaywidth(line) <= room
    assert nvim.exec_lua(f"return {KIT}.oneline.fit(...)", before, "Edit a.txt", after) == before + "Edit a.txt" + after
    nvim.command("set columns=30")  # not even the ends fit: the whole is cut
    line = nvim.exec_lua(f"return {KIT}.oneline.fit(...)", before, title, after)
    assert nvim.funcs.strdisplaywidth(line) <= max(nvim.eval("v:echospace"), 20) and line.endswith("…")
