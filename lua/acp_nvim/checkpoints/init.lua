--- :Ai checkpoints: the turns of a session, newest first, each a checkpoint a rewind goes back to.
---
--- The list buffer `acp://checkpoints/{agent}/{n}` shows one row per turn: its number, the time it
--- ran, its prompt's first line, the files it changed (+added −removed lines) and whether they
--- changed since (you, a later turn, another program). Keys:
---   <CR> the turn's combined diff (one scratch buffer, a fold per file)
---   r    rewind to before the turn (:Ai rewind {turn})
---   e    put the turn's prompt in the chat's prompt: <C-s> rewinds to before it and sends it
---   u    undo the last rewind (:Ai rewind undo)
---   R    refresh · q close
--- Rows come from Python (python/acp_nvim/nvim/checkpoints/checkpoint_commands.py); the list is a view
--- object owning its buffer, registered by session key.
local M = {}

local api = vim.api
local scratch = require('acp_nvim.kit.scratch')

local HEADER = {
  'Turns of %s, newest first · <CR> diff · r rewind to before it · e edit its prompt and run it again',
  'u undo the last rewind%s · R refresh · q close',
  '',
}

---@class acp_nvim.CheckpointRow
---@field turn integer
---@field prompt string
---@field time string
---@field files integer
---@field added integer
---@field removed integer
---@field state 'done'|'running'|'undone'|'pruned'
---@field since boolean
---@field note string

---@class acp_nvim.CheckpointList
---@field buf integer
---@field key string
---@field rows acp_nvim.CheckpointRow[]
---@field at table<integer, acp_nvim.CheckpointRow> row by buffer line
local List = {}
List.__index = List
M.List = List

---@type table<string, acp_nvim.CheckpointList> the registry: lists by session key
M.lists = {}

local function call(action, key, arg)
  require('acp_nvim.host').call.chat(action, key, arg)
end

local STATE = { running = 'running', pruned = 'pruned (cannot rewind)' } -- an undone turn's note says it

local function row_line(row)
  local files = row.files == 0 and 'no files'
    or ('%d file%s +%d −%d'):format(row.files, row.files == 1 and '' or 's', row.added, row.removed)
  local tail = {}
  for _, part in ipairs({ STATE[row.state] or false, row.since and 'changed since', (row.note or '') ~= '' and row.note }) do
    if part then
      tail[#tail + 1] = part
    end
  end
  return ('%3d  %s  %-40s  %s'):format(row.turn, row.time, row.prompt, files)
    .. (#tail > 0 and ('  · ' .. table.concat(tail, ' · ')) or '')
end

--- Draw the rows (`undo`: what :Ai rewind undo would take back, '' for nothing).
function List:render(rows, undo)
  self.rows, self.at = rows, {}
  local lines = {}
  for i, template in ipairs(HEADER) do
    lines[i] = i == 1 and template:format(self.key) or template:format(undo ~= '' and (': ' .. undo) or '')
  end
  if #rows == 0 then
    lines[#lines + 1] = '(no turn yet)'
  end
  for _, row in ipairs(rows) do
    lines[#lines + 1] = row_line(row)
    self.at[#lines] = row
  end
  scratch.fill(self.buf, lines)
end

--- The row under the cursor (nil on the header).
function List:row()
  return self.at[api.nvim_win_get_cursor(0)[1]]
end

local function with_row(list, fn)
  return function()
    local row = list:row()
    if row then
      fn(row)
    end
  end
end

function List:set_keys()
  local buf, key = self.buf, self.key
  local function map(lhs, fn, desc)
    vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, desc = 'acp.nvim checkpoints: ' .. desc })
  end
  map('<CR>', with_row(self, function(row)
    call('checkpoint_diff', key, { turn = row.turn })
  end), 'the turn\'s diff')
  map('r', with_row(self, function(row)
    vim.cmd.Ai({ args = { 'rewind', tostring(row.turn) } })
  end), 'rewind to before the turn')
  map('e', with_row(self, function(row)
    call('edit_turn', key, { turn = row.turn })
  end), 'edit the turn\'s prompt and run it again')
  map('u', function()
    vim.cmd.Ai({ args = { 'rewind', 'undo' } })
  end, 'undo the last rewind')
  map('R', function()
    call('checkpoints_refresh', key)
  end, 'refresh')
  map('q', function()
    vim.cmd('close')
  end, 'close')
end

--- The list of session `key` (a new one when it has none, or its buffer is gone).
function List.of(key)
  local list = M.lists[key]
  if list and api.nvim_buf_is_valid(list.buf) then
    return list
  end
  local buf = scratch.create({ name = 'acp://checkpoints/' .. key, kind = 'checkpoints', buftype = 'nofile',
    bufhidden = 'hide', filetype = 'acp_nvim_checkpoints', modifiable = false, reuse = true })
  list = setmetatable({ buf = buf, key = key, rows = {}, at = {} }, List)
  vim.b[buf].acp_nvim_session = key -- r and u run :Ai rewind for this list's session
  list:set_keys()
  M.lists[key] = list
  api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    once = true,
    callback = function()
      M.lists[key] = nil
    end,
  })
  return list
end

--- Show the list of session `key` with `rows` (newest first), in a split at the bottom.
function M.open(key, rows, undo)
  local list = List.of(key)
  list:render(rows, undo or '')
  local win = vim.fn.bufwinid(list.buf)
  if win == -1 then
    vim.cmd('botright split')
    win = api.nvim_get_current_win()
    api.nvim_win_set_buf(win, list.buf)
    api.nvim_win_set_height(win, math.min(#rows + #HEADER + 1, 15))
  end
  api.nvim_set_current_win(win)
  api.nvim_win_set_cursor(win, { math.min(#HEADER + 1, api.nvim_buf_line_count(list.buf)), 0 })
  return list.buf
end

--- Draw the list of session `key` again if it is open (after a rewind, a turn).
function M.refresh(key, rows, undo)
  local list = M.lists[key]
  if list and api.nvim_buf_is_valid(list.buf) then
    list:render(rows, undo or '')
  end
end

--- The combined diff of turn `turn` of session `key`: one scratch buffer, a fold per file.
function M.show_diff(key, turn, lines)
  local buf = scratch.create({ name = ('acp://checkpoint/%s/%d'):format(key, turn), kind = 'checkpoints',
    buftype = 'nofile', bufhidden = 'wipe', lines = lines, modifiable = false, filetype = 'diff', reuse = true })
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    vim.cmd('botright split')
    win = api.nvim_get_current_win()
    api.nvim_win_set_buf(win, buf)
  end
  api.nvim_set_current_win(win)
  local wo = vim.wo[win][0]
  wo.foldmethod = 'expr'
  wo.foldexpr = "getline(v:lnum)=~#'^diff --acp '?'>1':'='"
  wo.foldlevel = 1
  vim.keymap.set('n', 'q', function()
    vim.cmd('close')
  end, { buffer = buf, nowait = true, desc = 'acp.nvim: close the diff' })
  api.nvim_win_set_cursor(win, { 1, 0 })
  return buf
end

return M
