--- Diff windows: diff mode only on windows the kit opened, their options saved and restored.
---
--- `tab(bufs)` opens a tab page with one window per buffer, left to right, all in diff mode;
--- `stop(win)` ends diff mode in one of them and gives its options back exactly;
--- `close(wins)` does that for every window, then closes them.
local M = {}

local api = vim.api
local winopts = require('acp_nvim.kit.winopts')

--- What diff mode (and our winbars) change in a window.
M.OPTIONS = { 'diff', 'scrollbind', 'cursorbind', 'foldmethod', 'foldcolumn', 'foldenable', 'foldlevel',
  'wrap', 'winbar' }

---@type table<integer, true> windows the kit opened and put in diff mode
local ours = {}

--- Put `win`, a window the kit opened, in diff mode after saving its options.
local function start(win)
  winopts.save(win, M.OPTIONS)
  ours[win] = true
  api.nvim_win_call(win, function()
    vim.cmd('diffthis')
  end)
end

--- The empty buffer :tabnew made, unless it is one we show.
local function drop_empty(buf, bufs)
  if vim.tbl_contains(bufs, buf) or api.nvim_buf_get_name(buf) ~= '' or vim.bo[buf].modified then
    return
  end
  pcall(api.nvim_buf_delete, buf, { force = true })
end

--- A new tab page showing `bufs` side by side in diff mode; the last window is current.
---@param bufs integer[]
---@return integer[] wins left to right
function M.tab(bufs)
  vim.cmd('tabnew')
  local first, empty = api.nvim_get_current_win(), api.nvim_get_current_buf()
  vim.wo[first].winfixbuf = false -- a window of ours, whatever the window we came from had
  api.nvim_win_set_buf(first, bufs[1])
  drop_empty(empty, bufs)
  local wins = { first }
  for i = 2, #bufs do
    wins[i] = api.nvim_open_win(bufs[i], false, { split = 'right', win = wins[i - 1] })
  end
  for _, win in ipairs(wins) do
    start(win)
  end
  api.nvim_set_current_win(wins[#wins])
  return wins
end

--- Set options of a diff window (a winbar, …); they are given back by stop().
function M.set(win, opts)
  if api.nvim_win_is_valid(win) then
    winopts.set(win, opts)
  end
end

--- Whether `win` is a diff window of the kit still in diff mode.
function M.is_ours(win)
  return ours[win] == true
end

--- End diff mode in `win` and give its options back (nothing for a window that is not ours).
function M.stop(win)
  if not ours[win] then
    return
  end
  ours[win] = nil
  if api.nvim_win_is_valid(win) then
    api.nvim_win_call(win, function()
      vim.cmd('diffoff')
    end)
  end
  winopts.restore(win)
end

--- stop() every window of `wins`, then close them; returns those that could not close
--- (the editor's last window).
---@param wins integer[]
---@return integer[] left
function M.close(wins)
  for _, win in ipairs(wins) do
    M.stop(win)
  end
  local left = {}
  for _, win in ipairs(wins) do
    if api.nvim_win_is_valid(win) and not pcall(api.nvim_win_close, win, true) then
      left[#left + 1] = win
    end
  end
  return left
end

return M
