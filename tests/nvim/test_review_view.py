"""The review view (lua/acp_nvim/review/init.lua) in a real headless Neovim, fed by the real core model.

The verdict function the rplugin provides is replaced by a recorder, so each test sees exactly
what would go back to Python (and how many times).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from acp_nvim.core.permissions.review import Current, ProposedEdit, Review, reconstruct
from acp_nvim.nvim.permissions.review_spec import review_table
from helpers import answer_keys, capture_notes, wait_for
from helpers.lua import call_recorder

pytestmark = pytest.mark.timeout(30)

RECORDER = call_recorder("review_done", "acp_verdicts")

LINES = [f"line {i}" for i in range(1, 21)]
TEXT = "\n".join(LINES) + "\n"


def agent_version(text: str = TEXT) -> str:
    """Two hunks: line 2 changed, a line added at the end."""
    lines = text.splitlines()
    lines[1] = "line 2 changed by the agent"
    return "\n".join([*lines, "appended by the agent"]) + "\n"


@pytest.fixture
def view(nvim):
    nvim.exec_lua(RECORDER)
    nvim.exec_lua("require('acp_nvim').setup({ permissions = { arm_ms = 150, quiet_ms = 100 } })")
    return nvim


def open_review(nvim, files: list[tuple[str, Current, list[ProposedEdit]]], rid: int = 1, number: int = 1,
                title: str = "Edit files") -> None:
    review = Review("demo/1", number, title, "edit", [reconstruct(path, cur, edits) for path, cur, edits in files])
    nvim.exec_lua("require('acp_nvim.review').open(...)", rid, review_table(review))


def single(nvim, path: Path, loaded: bool = False, rid: int = 1, number: int = 1) -> None:
    open_review(nvim, [(str(path), Current(TEXT, loaded=loaded), [ProposedEdit(str(path), TEXT, agent_version())])],
                rid=rid, number=number)


def verdicts(nvim) -> list:
    return nvim.eval("g:acp_verdicts")


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


def review_buffers(nvim) -> list[str]:
    names = nvim.exec_lua("return vim.tbl_map(vim.api.nvim_buf_get_name, vim.api.nvim_list_bufs())")
    return [name for name in names if re.search(r" \((current, )?review \d+ of ", name)]


def named(nvim, name: str) -> int:
    """The buffer called exactly ``name`` (-1 when there is none)."""
    return nvim.exec_lua("return require('acp_nvim.kit.scratch').find(...) or -1", name)


def proposal_buf(nvim, name: str) -> int:
    return named(nvim, f"{name} (review 1 of demo:1)")


def accepted_text(nvim, index: int = 0) -> str | None:
    files = verdicts(nvim)[-1][1]["files"]
    return files[index].get("text")


# -- layout ------------------------------------------------------------------------------


def test_layout_snapshot(view, workspace):
    path = workspace / "sample.py"
    path.write_text(TEXT)
    view.command("set lines=30")
    single(view, path)
    assert "[keys wait a moment]" in view.api.get_option_value("winbar", {"win": view.funcs.win_getid(1)})
    wait_for(lambda: "keys wait" not in view.api.get_option_value("winbar", {"win": view.funcs.win_getid(1)}))
    rows = screen(view)
    assert rows[0].startswith(" [No Name]  2 sample.py (review 1 of demo:1) ")  # tabline: the file's name
    winbar_left, _, winbar_right = rows[1].partition("│")
    assert winbar_left.startswith("current sample.py · ga accept · gr reject · ]c [c next/prev hunk")
    assert winbar_right.startswith("proposal 1/1 · do leave hunk (current→proposal) · dp take hunk (agent→proposal)")
    left, right = zip(*(row.split("│", 1) for row in rows[2:19]), strict=True)
    assert left[0].strip() == "line 1" and right[0].strip() == "line 1"
    assert left[1].strip() == "line 2" and right[1].strip() == "line 2 changed by the agent"
    assert left[8].startswith("+ +--  6 lines: line 9··") and right[8].startswith("+ +--  6 lines: line 9··")
    assert left[9].strip() == "line 15" and right[14].strip() == "line 20"
    assert right[15].strip() == "appended by the agent"
    assert set(left[15].strip()) == {"-"}  # diff filler opposite the added line
    assert rows[18].startswith("~ ")
    status_left, _, status_right = rows[-2].partition(" sample.py (review")
    assert status_left.startswith("sample.py (current, review 1 of demo:1)")
    assert status_right.startswith(" 1 of demo:1)")


def test_the_tab_label_is_the_files_name(view, workspace):
    path = workspace / "src" / "hello.py"
    path.parent.mkdir()
    path.write_text(TEXT)
    single(view, path)
    assert view.eval("&tabline") == "", "the user's 'tabline' is left alone"
    view.command("tabprevious")  # the label of a tab that is not current comes from its last window
    label = screen(view)[0]
    assert "  2 s/hello.py (review 1 of demo:1) " in label  # as Neovim labels a tab of src/hello.py
    assert "a//" not in label


def test_a_leftover_buffer_of_an_earlier_review_gives_way(view, workspace):
    stale = view.exec_lua("return require('acp_nvim.kit.scratch').create(...)",
                          {"name": "a.txt (review 1 of demo:1)", "kind": "review", "bufhidden": "hide",
                           "lines": ["stale"]})
    single(view, workspace / "a.txt")
    assert not view.api.buf_is_valid(stale)
    assert view.api.buf_get_lines(proposal_buf(view, "a.txt"), 0, 2, False) == ["line 1", "line 2 changed by the agent"]


def test_a_file_buffer_with_the_review_name_is_never_touched(view, workspace):
    view.command("edit " + view.funcs.fnameescape(f"{workspace}/a.txt (review 1 of demo:1)"))
    view.api.buf_set_lines(0, 0, -1, False, ["mine, unsaved"])
    mine = view.api.get_current_buf().number
    single(view, workspace / "a.txt")
    verdict = verdicts(view)[0][1]
    assert verdict["files"] == [] and "not a view of acp.nvim" in verdict["error"]
    assert view.api.buf_get_lines(mine, 0, -1, False) == ["mine, unsaved"]


def test_buffers_windows_and_filetype(view, workspace):
    path = workspace / "sample.py"
    path.write_text(TEXT)
    before_tabs = len(view.api.list_tabpages())
    first_win = view.api.get_current_win()
    single(view, path)
    assert len(view.api.list_tabpages()) == before_tabs + 1
    buf = proposal_buf(view, "sample.py")
    assert view.api.get_current_buf().number == buf
    opts = {name: view.api.get_option_value(name, {"buf": buf}) for name in ("buftype", "swapfile", "filetype")}
    assert opts == {"buftype": "acwrite", "swapfile": False, "filetype": "python"}
    assert view.api.get_option_value("modifiable", {"buf": buf}) is True
    tab_wins = view.api.tabpage_list_wins(view.api.get_current_tabpage())
    assert [view.api.get_option_value("diff", {"win": w}) for w in tab_wins] == [True, True]
    assert view.api.get_option_value("diff", {"win": first_win}) is False
    base = named(view, "sample.py (current, review 1 of demo:1)")
    assert base != -1 and view.api.get_option_value("modifiable", {"buf": base}) is False


def test_loaded_buffer_is_the_left_side_with_its_unsaved_text(view, workspace):
    path = workspace / "notes.txt"
    path.write_text(TEXT)
    view.command(f"edit {path}")
    view.command("normal! ggOtyped but not saved")
    live = view.api.get_current_buf().number
    current = "typed but not saved\n" + TEXT
    edits = [ProposedEdit(str(path), current, agent_version(current))]
    open_review(view, [(str(path), Current(current, loaded=True), edits)])
    left_win = view.api.tabpage_list_wins(view.api.get_current_tabpage())[0]
    assert view.api.win_get_buf(left_win).number == live
    assert "[unsaved]" in view.api.get_option_value("winbar", {"win": left_win})
    answer_keys(view, "ga")
    assert accepted_text(view) == agent_version(current)
    assert view.api.buf_get_lines(live, 0, 1, False) == ["typed but not saved"]
    assert view.api.get_option_value("modified", {"buf": live}) is True


# -- verdicts ------------------------------------------------------------------------------


def test_accept_sends_agent_text_once_and_leaves_nothing(view, workspace):
    path = workspace / "a.txt"
    single(view, path)
    answer_keys(view, "ga")
    assert len(verdicts(view)) == 1
    assert accepted_text(view) == agent_version()
    assert review_buffers(view) == []
    assert len(view.api.list_tabpages()) == 1
    view.input("ga")  # no review any more: nothing else goes out
    assert len(verdicts(view)) == 1


def test_reject_sends_no_text(view, workspace):
    single(view, workspace / "a.txt")
    answer_keys(view, "gr")
    assert verdicts(view)[-1][1]["files"][0].get("text") is None
    assert review_buffers(view) == []


def test_partial_hunk_accept_with_do(view, workspace):
    single(view, workspace / "a.txt")
    view.command("normal! gg]c")  # first hunk: line 2
    assert view.funcs.line(".") == 2
    view.command("diffget")  # `do`: leave this hunk (current → proposal)
    answer_keys(view, "ga")
    assert accepted_text(view) == TEXT + "appended by the agent\n"


def test_take_hunk_back_with_dp(view, workspace):
    single(view, workspace / "a.txt")
    view.command("normal! gg]c")
    view.command("diffget")
    view.input("dp")  # take the agent's version back (agent → proposal)
    answer_keys(view, "ga")
    assert accepted_text(view) == agent_version()


def test_edited_proposal_is_what_is_accepted(view, workspace):
    single(view, workspace / "a.txt")
    view.api.buf_set_lines(0, 4, 5, False, ["line 5 edited by the user"])
    view.command("write")  # :w in the proposal accepts it
    expected = agent_version().replace("line 5\n", "line 5 edited by the user\n")
    assert accepted_text(view) == expected


def test_closing_the_view_rejects(view, workspace):
    single(view, workspace / "a.txt")
    view.command("tabclose")
    assert len(verdicts(view)) == 1
    assert verdicts(view)[0][1]["files"][0].get("text") is None
    assert review_buffers(view) == []


def test_closing_hides_when_configured(view, workspace):
    view.exec_lua("require('acp_nvim').setup({permissions = {close_is_reject = false}})")
    single(view, workspace / "a.txt")
    view.api.buf_set_lines(0, 0, 1, False, ["kept edit"])
    view.command("tabclose")
    assert verdicts(view) == []
    assert view.exec_lua("return require('acp_nvim.review').list()[1].state") == "hidden"
    view.command("Ai permissions")
    assert view.api.buf_get_lines(0, 0, 1, False) == ["kept edit"]
    answer_keys(view, "ga")
    assert accepted_text(view).startswith("kept edit\n")


def test_window_options_and_maps_of_the_live_buffer_are_restored(view, workspace):
    path = workspace / "live.txt"
    path.write_text(TEXT)
    view.command(f"edit {path}")
    view.command("setlocal foldmethod=indent wrap")
    view.command("nnoremap <buffer> ga <Cmd>let g:mine = 1<CR>")
    single(view, path, loaded=True)
    answer_keys(view, "gr")
    view.command("split")  # a new window on the same buffer takes its last window options
    for win in view.api.tabpage_list_wins(0):
        assert view.api.get_option_value("diff", {"win": win}) is False
        assert view.api.get_option_value("foldmethod", {"win": win}) == "indent"
        assert view.api.get_option_value("scrollbind", {"win": win}) is False
        assert view.api.get_option_value("winbar", {"win": win}) == ""
    view.input("ga")
    assert view.eval("get(g:, 'mine', 0)") == 1


def test_multi_file_reviews_every_file(view, workspace):
    a, b = workspace / "a.txt", workspace / "b.lua"
    open_review(view, [
        (str(a), Current(TEXT), [ProposedEdit(str(a), TEXT, agent_version())]),
        (str(b), Current(TEXT), [ProposedEdit(str(b), TEXT, agent_version())]),
    ])
    assert len(view.api.list_tabpages()) == 3
    assert view.api.buf_get_name(0).endswith("/a.txt (review 1 of demo:1)")
    answer_keys(view, "ga")
    assert verdicts(view) == []
    assert view.api.buf_get_name(0).endswith("/b.lua (review 1 of demo:1)")
    assert view.api.get_option_value("filetype", {"buf": 0}) == "lua"
    answer_keys(view, "gr")
    files = verdicts(view)[0][1]["files"]
    assert [f["path"] for f in files] == [str(a), str(b)]
    assert files[0]["text"] == agent_version() and files[1].get("text") is None
    assert review_buffers(view) == []


def test_accept_all_files_at_once(view, workspace):
    a, b = workspace / "a.txt", workspace / "b.txt"
    open_review(view, [(str(p), Current(TEXT), [ProposedEdit(str(p), TEXT, agent_version())]) for p in (a, b)])
    answer_keys(view, "gA")
    assert [f["text"] for f in verdicts(view)[0][1]["files"]] == [agent_version(), agent_version()]


def test_new_file(view, workspace):
    path = workspace / "new.md"
    open_review(view, [(str(path), Current(None), [ProposedEdit(str(path), None, "# hello\n")])])
    wins = view.api.tabpage_list_wins(0)
    assert view.api.buf_get_lines(view.api.win_get_buf(wins[0]), 0, -1, False) == [""]
    assert "[new file]" in view.api.get_option_value("winbar", {"win": wins[1]})
    answer_keys(view, "ga")
    assert accepted_text(view) == "# hello\n"


def test_snippet_not_found_shows_the_diff_as_sent_read_only(view, workspace):
    path = workspace / "a.txt"
    open_review(view, [(str(path), Current(TEXT), [ProposedEdit(str(path), "not there", "replacement")])])
    buf = view.api.get_current_buf()
    assert view.api.buf_get_lines(buf, 0, -1, False) == ["replacement"]
    assert view.api.get_option_value("modifiable", {"buf": buf}) is False
    assert "diff as sent" in view.api.get_option_value("winbar", {"win": 0})


def test_second_review_waits_for_the_first(view, workspace):
    single(view, workspace / "a.txt", rid=1, number=1)
    single(view, workspace / "b.txt", rid=2, number=2)
    assert view.api.buf_get_name(0).endswith("/a.txt (review 1 of demo:1)")
    assert "+1 waiting" in view.api.get_option_value("winbar", {"win": 0})
    answer_keys(view, "ga")
    assert view.api.buf_get_name(0) == f"{workspace}/b.txt (review 2 of demo:1)"
    answer_keys(view, "gr")
    assert [v[0] for v in verdicts(view)] == [1, 2]


def test_dismiss_closes_without_answering(view, workspace):
    single(view, workspace / "a.txt")
    view.exec_lua("require('acp_nvim.review').dismiss(1)")
    assert verdicts(view) == []
    assert review_buffers(view) == []
    assert len(view.api.list_tabpages()) == 1


def test_permissions_lists_prompts_and_reviews(view, workspace):
    single(view, workspace / "a.txt")
    view.exec_lua("require('acp_nvim.question.permission').ask(7, ...)", {
        "session": "demo/1", "title": "git status", "kind": "execute", "detail": "$ git status",
        "options": [{"id": "y", "name": "Allow once", "kind": "allow_once"}]})
    view.command("Ai permissions")
    lines = view.api.buf_get_lines(0, 0, -1, False)
    assert any("[execute] git status (demo/1)" in line for line in lines)
    assert any("[review, open] Edit files (demo/1)" in line for line in lines)


def test_write_quit_in_the_proposal_accepts_and_keeps_the_editor(view, workspace):
    single(view, workspace / "a.txt")
    view.api.buf_set_lines(0, 0, 1, False, ["first line edited"])
    view.command("wq")
    wait_for(lambda: verdicts(view), what="the scheduled decision")
    assert accepted_text(view).startswith("first line edited\n")
    assert len(verdicts(view)) == 1
    assert review_buffers(view) == []
    assert view.eval("1 + 1") == 2


def test_a_view_that_cannot_open_reports_and_cleans_up(view, workspace):
    view.exec_lua("_G.real_match = vim.filetype.match; vim.filetype.match = function() error('boom') end")
    try:
        single(view, workspace / "a.txt")
    finally:
        view.exec_lua("vim.filetype.match = _G.real_match")
    verdict = verdicts(view)[0][1]
    assert verdict["files"] == [] and "boom" in verdict["error"]
    assert review_buffers(view) == [] and len(view.api.list_tabpages()) == 1


# -- keys that answer only when meant ----------------------------------------------------


def test_verdict_keys_wait_until_the_review_was_visible_long_enough(view, workspace):
    view.exec_lua("require('acp_nvim').setup({ permissions = { arm_ms = 4000, quiet_ms = 4000 } })")
    single(view, workspace / "a.txt")
    view.input("ga")
    view.input("gA")
    assert verdicts(view) == [], "a fast ga answers nothing"
    view.exec_lua("require('acp_nvim').setup({ permissions = { arm_ms = 150, quiet_ms = 100 } })")
    answer_keys(view, "ga")
    assert accepted_text(view) == agent_version()


def test_a_review_never_takes_the_cursor_from_typing(view, workspace):
    capture_notes(view, "msgs")
    path = workspace / "notes.txt"
    view.command(f"edit {path}")
    view.input("iAl")
    single(view, workspace / "a.txt")
    view.input("so hello")
    wait_for(lambda: view.api.get_current_line() == "Also hello")
    assert view.api.get_mode()["mode"] == "i" and len(view.api.list_tabpages()) == 1
    assert view.exec_lua("return require('acp_nvim.review').list()[1].state") == "queued"
    assert any("review waiting" in m and "when you pause" in m for m in view.exec_lua("return _G.msgs"))
    view.input("<Esc>")
    view.command("Ai permissions")
    assert view.api.buf_get_name(0).endswith("/a.txt (review 1 of demo:1)")
    answer_keys(view, "gr")
    assert verdicts(view)[0][1]["files"][0].get("text") is None
    assert view.api.buf_get_lines(view.funcs.bufnr(str(path)), 0, -1, False) == ["Also hello"]
