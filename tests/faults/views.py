"""What the harness reads of the plugin's views, in one place: when the Lua views change shape,
this is the file to update. Most lookups go by what a user sees (buffer names, window text);
the three-way view is read through its module."""

from __future__ import annotations

from .driver import Editor, wait_until

SHOWN_REQUEST_LUA = """
local chat, pattern = ...
for _, win in ipairs(vim.api.nvim_list_wins()) do
  local buf = vim.api.nvim_win_get_buf(win)
  if vim.api.nvim_buf_get_name(buf) ~= chat then
    for _, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
      local found = line:match(pattern)
      if found then return found end
    end
  end
end
"""

REVIEW_OPEN_LUA = """
-- review buffers are scratch buffers of kind 'review' (named after the file, not acp://review/…)
local scratch = require('acp_nvim.kit.scratch')
for _, win in ipairs(vim.api.nvim_list_wins()) do
  if scratch.is_ours(vim.api.nvim_win_get_buf(win), 'review') then return true end
end
return false
"""

FOCUS_REVIEW_LUA = """
local scratch = require('acp_nvim.kit.scratch')
for _, win in ipairs(vim.api.nvim_list_wins()) do
  local buf = vim.api.nvim_win_get_buf(win)
  if scratch.is_ours(buf, 'review') and vim.bo[buf].buftype == 'acwrite' then
    vim.api.nvim_set_current_tabpage(vim.api.nvim_win_get_tabpage(win))
    vim.api.nvim_set_current_win(win)
    return true
  end
end
return false
"""

ARMED_LUA = """
local permission, review = require('acp_nvim.question.permission'), require('acp_nvim.review')
if permission.prompt.view and not permission.armed() and vim.api.nvim_get_current_win() ~= permission.prompt.win then
  permission.show_prompt() -- the user goes to it (:Ai permissions): it does not take the cursor while keys come
end
return permission.armed() or review.armed()
"""

CURSOR_ON_CHANGE_LUA = """
for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
  local buf = vim.api.nvim_win_get_buf(win)
  if vim.api.nvim_buf_get_name(buf):match('^acp://changes/') then
    for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
      if line:find(..., 1, true) then
        vim.api.nvim_set_current_win(win)
        vim.api.nvim_win_set_cursor(win, { i, 0 })
        return true
      end
    end
  end
end
return false
"""


def shown_request(ed: Editor, pattern: str) -> str | None:
    """The first text matching Lua ``pattern`` in a window other than the chat (a prompt), if any."""
    found = ed.lua(SHOWN_REQUEST_LUA, ed.CHAT, pattern)
    return str(found) if found else None


def answer(ed: Editor, keys: str, timeout: float = 10) -> bool:
    """Type ``keys`` into the prompt (gone to first, as with ``:Ai permissions``) or the current review
    window once its keys count (``permissions.arm_ms``); False if they never did."""
    if not wait_until(lambda: ed.lua(ARMED_LUA), timeout):
        return False
    ed.keys(keys)
    return True


def review_open(ed: Editor) -> bool:
    """Whether a review (a scratch buffer of kind ``review``) is shown in a window."""
    return bool(ed.lua(REVIEW_OPEN_LUA))


def focus_review(ed: Editor) -> bool:
    """Make the review's proposal window current (keys typed next act on the review)."""
    return bool(ed.lua(FOCUS_REVIEW_LUA))


def cursor_on_change(ed: Editor, name: str) -> bool:
    """Put the cursor on the line of ``name`` in the ``:Ai changes`` list; False if it is not listed."""
    return bool(ed.lua(CURSOR_ON_CHANGE_LUA, name))


def threeway_open(ed: Editor) -> bool:
    return bool(ed.lua("return #require('acp_nvim.threeway').ids() > 0"))


def keep_mine_in_threeway(ed: Editor) -> None:
    """Close the open three-way view keeping the user's text (``gm``)."""
    ed.lua("local tw = require('acp_nvim.threeway') for _, id in ipairs(tw.ids()) do tw.finish(id, 'mine') end")
