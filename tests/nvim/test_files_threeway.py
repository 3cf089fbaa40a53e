"""The three-way view in a real headless Neovim (the answer to Python is captured in Lua)."""

from __future__ import annotations

import pytest

from helpers import wait_for

pytestmark = pytest.mark.timeout(30)

T = "require('acp_nvim.threeway')"
CAPTURE = ("_G.answers = {}; require('acp_nvim.host').call.answer = "
           "function(id, outcome) table.insert(_G.answers, {id, outcome}) end")


def open_view(nvim, workspace, purpose="write", base="a\nb\nc\n", agent="a\nB agent\nc\nd agent\n"):
    path = workspace / "file.txt"
    path.write_text(base)
    nvim.command(f"edit {path}")
    nvim.command("normal! ggA mine\x1b")
    nvim.exec_lua(CAPTURE)
    nvim.exec_lua(f"{T}.open(...)", 7, {"path": str(path), "base": base, "agent": agent, "purpose": purpose,
                                        "title": "test"})
    return path


def answers(nvim):
    return nvim.exec_lua("return _G.answers")


def test_layout_base_yours_agent_in_diff_mode(nvim, workspace):
    path = open_view(nvim, workspace)
    wins = nvim.api.tabpage_list_wins(0)
    names = [nvim.api.buf_get_name(nvim.api.win_get_buf(w)) for w in wins]
    assert names == [f"acp://base/7{path}", str(path), f"acp://agent/7{path}"]
    assert all(nvim.api.get_option_value("diff", {"win": w}) for w in wins)
    assert nvim.api.get_current_win() == wins[1], "the cursor starts in your buffer"
    assert "ga take the agent's" in nvim.api.get_option_value("winbar", {"win": wins[1]})


def test_put_a_hunk_from_the_agent_then_keep(nvim, workspace):
    path = open_view(nvim, workspace)
    agent_win = nvim.api.tabpage_list_wins(0)[2]
    nvim.api.set_current_win(agent_win)
    nvim.command("normal! 4G")
    nvim.command("normal dp")
    mine = nvim.funcs.bufnr(str(path))
    assert nvim.api.buf_get_lines(mine, 0, -1, False) == ["a mine", "b", "c", "d agent"]
    nvim.command("normal q")
    assert answers(nvim) == [[7, "mine"]]
    assert len(nvim.api.list_tabpages()) == 1 and path.read_text() == "a\nb\nc\n"
    assert nvim.funcs.bufnr(f"acp://agent/7{path}") == -1, "scratch buffers are wiped"


def test_closing_the_tab_keeps_yours_and_answers_once(nvim, workspace):
    path = open_view(nvim, workspace)
    nvim.command("tabclose")
    wait_for(lambda: answers(nvim), what="the answer WinClosed schedules")
    assert answers(nvim) == [[7, "mine"]]
    assert nvim.api.buf_get_lines(nvim.funcs.bufnr(str(path)), 0, 1, False) == ["a mine"]
    nvim.exec_lua(f"{T}.finish(7, 'agent')")
    assert answers(nvim) == [[7, "mine"]], "a second decision is ignored"


def test_taking_every_hunk_counts_as_the_agents_text(nvim, workspace):
    path = open_view(nvim, workspace, base="a\n", agent="a\n")
    nvim.command("normal! u")  # your buffer back to the agent's text
    nvim.command("normal gm")
    assert answers(nvim) == [[7, "agent"]] and path.read_text() == "a\n"


def test_disk_purpose_take_agent_marks_buffer_in_sync(nvim, workspace):
    path = open_view(nvim, workspace, purpose="disk")
    path.write_text("a\nB agent\nc\nd agent\n")
    nvim.command("normal ga")
    buf = nvim.funcs.bufnr(str(path))
    assert nvim.api.buf_get_lines(buf, 0, -1, False) == ["a", "B agent", "c", "d agent"]
    assert not nvim.api.get_option_value("modified", {"buf": buf})
    assert answers(nvim) == [[7, "agent"]]


def test_a_disk_view_leaves_the_buffer_the_view_of_the_file_it_read_until_the_user_decides(nvim, workspace):
    path = workspace / "file.txt"
    path.write_text("a\nb\nc\n")
    nvim.command(f"edit {path}")
    nvim.command("normal! ggA mine\x1b")
    buf = nvim.funcs.bufnr(str(path))
    source = "return require('acp_nvim.host.buffers').source(...)"
    read_from = nvim.exec_lua(source, buf)
    path.rename(workspace / "file.old")
    path.write_text("another file\n")  # a new file at the name, the buffer's text is the old one's
    nvim.exec_lua(CAPTURE)
    nvim.exec_lua(f"{T}.open(...)", 7, {"path": str(path), "base": "a\nb\nc\n", "agent": "another file\n",
                                        "purpose": "disk", "title": "test"})
    assert nvim.exec_lua(source, buf) == read_from
    nvim.command("normal gm")  # the user keeps their text over the file at the name: it is that file's view now
    assert answers(nvim) == [[7, "mine"]]
    assert nvim.exec_lua(source, buf) != read_from


def test_maps_on_your_buffer_are_restored(nvim, workspace):
    path = workspace / "file.txt"
    path.write_text("x\n")
    nvim.command(f"edit {path}")
    nvim.command("nnoremap <buffer> ga :let g:mine_ga = 1<CR>")
    nvim.command("normal! Ay\x1b")
    nvim.exec_lua(CAPTURE)
    nvim.exec_lua(f"{T}.open(...)", 3, {"path": str(path), "base": "x\n", "agent": "z\n", "purpose": "write",
                                        "title": ""})
    nvim.command("normal gm")
    nvim.command(f"buffer {nvim.funcs.bufnr(str(path))}")
    assert nvim.funcs.maparg("ga", "n") == ":let g:mine_ga = 1<CR>"
    assert nvim.funcs.maparg("gm", "n") == "" and nvim.funcs.maparg("do", "n") == ""


def test_a_buffer_gone_answers_gone(nvim, workspace):
    nvim.exec_lua(CAPTURE)
    nvim.exec_lua(f"{T}.open(...)", 9, {"path": str(workspace / "nope.txt"), "base": None, "agent": "x",
                                        "purpose": "write", "title": ""})
    assert answers(nvim) == [[9, "gone"]]


def test_your_buffer_gets_its_window_options_back(nvim, workspace):
    path = open_view(nvim, workspace)
    nvim.command("normal gm")
    nvim.command(f"tab sbuffer {nvim.funcs.bufnr(str(path))}")  # a new window on your buffer
    for win in nvim.api.tabpage_list_wins(0):
        assert nvim.api.get_option_value("diff", {"win": win}) is False
        assert nvim.api.get_option_value("winbar", {"win": win}) == ""
        assert nvim.api.get_option_value("foldmethod", {"win": win}) == "manual"


def test_a_leftover_of_an_earlier_view_with_the_same_name_gives_way(nvim, workspace):
    path = workspace / "file.txt"
    nvim.exec_lua("require('acp_nvim.kit.scratch').create(...)",
                  {"name": f"acp://agent/7{path}", "kind": "threeway", "bufhidden": "hide", "lines": ["stale"]})
    open_view(nvim, workspace)
    assert nvim.exec_lua("return require('acp_nvim.threeway').ids()") == [7]
    agent = nvim.api.win_get_buf(nvim.api.tabpage_list_wins(0)[2])
    assert nvim.api.buf_get_lines(agent, 0, -1, False) == ["a", "B agent", "c", "d agent"]
