"""Edits with parked cursors (lua/acp_nvim/kit/parked.lua) in a real Neovim with a UI attached (only
then does Neovim scroll windows): each window ends where the same edits made directly leave it."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(60)

SCENARIOS = r"""
local parked = require('acp_nvim.kit.parked')
local api = vim.api
local function fill(buf, count, long)
  local lines = {}
  for i = 1, count do
    lines[i] = (long and i % 7 == 0) and ('long %d '):format(i) .. ('word '):rep(60) or ('line %d'):format(i)
  end
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
end
-- each edit inserts `size` lines `from_end` lines before the buffer's end
local function edits(buf, count, size, from_end, long)
  for k = 1, count do
    local row = api.nvim_buf_line_count(buf) - from_end
    local block = {}
    for i = 1, size do
      block[i] = ('new %d.%d'):format(k, i) .. (long and (' w'):rep(i * 10) or '')
    end
    api.nvim_buf_set_lines(buf, row, row, false, block)
  end
end
local function view(win)
  return api.nvim_win_call(win, function()
    local v = vim.fn.winsaveview()
    return { cursor = { v.lnum, v.col }, top = v.topline, bottom = vim.fn.line('w$'), curswant = v.curswant }
  end)
end
local scenarios = {
  { name = 'following the end, small edits', count = 30, size = 3, from_end = 1, place = 'normal! G' },
  { name = 'following the end, one big flush', count = 200, size = 35, from_end = 1, place = 'normal! G' },
  { name = 'following the end, wrapped lines', count = 100, size = 7, from_end = 1, place = 'normal! G', long = true },
  { name = 'reading the middle, an edit above the view', count = 1, size = 2, from_end = 1100,
    place = 'normal! 1000Gzz' },
  { name = 'reading the middle, edits below', count = 10, size = 5, from_end = 1, place = 'normal! 1000Gzz' },
  { name = 'scrolloff, following the end', count = 100, size = 35, from_end = 1, place = 'normal! G', so = 5 },
  { name = 'scrolloff, an edit above the view', count = 1, size = 2, from_end = 1100,
    place = 'normal! 1000Gzz', so = 5 },
  { name = 'after $: j and k keep aiming at the end of lines', count = 20, size = 3, from_end = 2,
    place = 'normal! G$', extra = 'x' },
}
local buf = api.nvim_get_current_buf()
local win = api.nvim_get_current_win()
vim.wo.wrap, vim.wo.linebreak = true, true
local results = {}
for _, s in ipairs(scenarios) do
  local ends = {}
  for _, how in ipairs({ 'direct', 'parked' }) do
    vim.wo.scrolloff = s.so or 0
    fill(buf, 2000, s.long)
    vim.cmd('normal! gg')
    vim.cmd('redraw')
    vim.cmd(s.place)
    if s.extra then
      api.nvim_buf_set_lines(buf, -1, -1, false, { s.extra })
      vim.cmd('normal! j')
    end
    vim.cmd('redraw')
    local from = api.nvim_buf_line_count(buf) - s.from_end + 1
    local before, during = api.nvim_win_get_cursor(win)[1], nil
    local function edit()
      during = api.nvim_win_get_cursor(win)[1]
      edits(buf, s.count, s.size, s.from_end, s.long)
    end
    if how == 'parked' then parked.edit(buf, from, edit) else edit() end
    vim.cmd('redraw')
    ends[how] = view(win)
    ends.was_parked = during ~= before
  end
  results[#results + 1] = { s.name, ends.direct, ends.parked, ends.was_parked }
end
return results
"""


PRELUDE = """
local api = vim.api
local buf = api.nvim_get_current_buf()
local parked = require('acp_nvim.kit.parked')
local function fill(count)
  local lines = {}
  for i = 1, count do lines[i] = 'line ' .. i end
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
end
"""


@pytest.fixture
def ui(nvim):
    """A UI attached (its redraws are left unread): Neovim keeps windows' views only for a screen."""
    nvim.ui_attach(100, 40, rgb=True, ext_linegrid=True)
    yield nvim
    nvim.ui_detach()


def test_each_window_ends_where_the_same_edits_made_directly_leave_it(ui):
    for name, direct, parked, was_parked in ui.exec_lua(SCENARIOS):
        assert parked == direct, name
        assert was_parked == name.startswith(("following", "scrolloff, following", "after $")), name


def test_a_cursor_in_a_long_prompt_comes_back_with_the_prompt_in_sight(ui):
    """Brought back from far above, the cursor on a prompt's first line shows the lines after it."""
    end = ui.exec_lua(PRELUDE + """
        fill(2000)
        vim.cmd('normal! G2k')
        vim.cmd('redraw')
        local from = api.nvim_buf_line_count(buf) - 2
        parked.edit(buf, from, function()
          for _ = 1, 100 do
            local row = api.nvim_buf_line_count(buf) - 3
            api.nvim_buf_set_lines(buf, row, row, false, vim.split(('new\\n'):rep(35), '\\n'))
          end
        end)
        vim.cmd('redraw')
        return { api.nvim_win_get_cursor(0)[1], vim.fn.line('w$'), api.nvim_buf_line_count(buf),
          api.nvim_buf_get_lines(buf, api.nvim_win_get_cursor(0)[1] - 1, -1, false) }
    """)
    cursor, bottom, count, after = end
    assert after == ["line 1998", "line 1999", "line 2000"]  # the cursor stayed on its text
    assert bottom == count and cursor == count - 2


def test_a_failing_edit_still_gives_every_cursor_back(ui):
    result = ui.exec_lua(PRELUDE + """
        fill(500)
        vim.cmd('normal! G')
        vim.cmd('redraw')
        local ok, err = pcall(parked.edit, buf, 499, function()
          api.nvim_buf_set_lines(buf, 499, 499, false, { 'one', 'two' })
          error('boom')
        end)
        return { ok, tostring(err), api.nvim_win_get_cursor(0)[1], api.nvim_buf_get_lines(buf, -2, -1, false)[1],
          #api.nvim_buf_get_extmarks(buf, api.nvim_create_namespace('acp_nvim.parked'), 0, -1, {}) }
    """)
    ok, err, cursor, line, marks = result
    assert not ok and "boom" in err
    assert cursor == 502 and line == "line 500"  # back on its text, below the two lines added
    assert marks == 0


def test_windows_above_the_edits_and_other_windows_of_the_buffer(ui):
    """Two windows on one buffer: one reads the top (left alone), one follows the end (parked)."""
    result = ui.exec_lua(PRELUDE + """
        fill(3000)
        vim.cmd('split')
        local reading, following = api.nvim_get_current_win(), vim.fn.win_getid(2)
        api.nvim_win_set_cursor(reading, { 10, 2 })
        api.nvim_win_set_cursor(following, { 3000, 0 })
        vim.cmd('redraw')
        parked.edit(buf, 2999, function()
          for _ = 1, 50 do
            local row = api.nvim_buf_line_count(buf) - 1
            api.nvim_buf_set_lines(buf, row, row, false, { 'a', 'b', 'c', 'd' })
          end
        end)
        vim.cmd('redraw')
        return { api.nvim_win_get_cursor(reading), api.nvim_win_get_cursor(following),
          api.nvim_win_call(following, function() return vim.fn.line('w$') end), api.nvim_buf_line_count(buf) }
    """)
    reading, following, bottom, count = result
    assert reading == [10, 2]
    assert following == [count, 0] and bottom == count
