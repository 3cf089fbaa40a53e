--- :Ai changes: the files the agent changed in a turn, compared with their text before it.
---
--- The list buffer `acp://changes/{agent}/{n}` shows one line per file:
---   M changed · A created · D deleted · = back as before · ? content before the turn unknown
--- Keys: <CR> diff view · X revert the file · Q quickfix list · R refresh · q close.
--- In the diff view (before | now, diff mode) `do` in the file's window, or `dp` in the
--- before window, reverts the hunk under the cursor; `:w` saves.
--- `X` runs `:Ai changes revert {file}`: Python writes the file through its opener (confined to
--- the workspace, atomic); over unsaved changes it refuses once (a second X reverts). The file's text now is read here
--- only for display, and only from a regular file (never a FIFO or a device: they would block).
local M = {}

local api = vim.api
local buffers = require('acp_nvim.host.buffers')
local diff = require('acp_nvim.kit.diff')
local scratch = require('acp_nvim.kit.scratch')

---@type table<integer, { key: string, turn: integer, entries: table[], rows: table<integer, integer> }>
M.lists = {}

local HEADER_LINES = 3

local MAX_BYTES = 32 * 1024 * 1024
local uv = vim.uv
local READ_FLAGS = bit.bor(uv.constants.O_RDONLY, uv.constants.O_NONBLOCK or 0, uv.constants.O_NOFOLLOW or 0)

--- Whether `path` is a regular file (not a symlink, FIFO, device, socket or folder).
local function is_regular(path)
  local st = uv.fs_lstat(path)
  return st ~= nil and st.type == 'file'
end

--- The file's bytes, only for a regular file within the size cap (nil otherwise).
local function read_disk(path)
  if not is_regular(path) then
    return nil
  end
  local fd = uv.fs_open(path, READ_FLAGS, 0)
  if not fd then
    return nil
  end
  local st = uv.fs_fstat(fd)
  local text = st and st.type == 'file' and st.size <= MAX_BYTES and uv.fs_read(fd, st.size, 0) or nil
  uv.fs_close(fd)
  return text
end

--- The file's text now: its buffer if loaded (unsaved edits included), else the disk.
function M.current_text(path)
  local text = buffers.text(path)
  if text ~= nil then
    return text
  end
  return read_disk(path)
end

local function status_of(entry, now)
  if not entry.known then
    return '?'
  elseif entry.before == nil then
    return now == nil and '=' or 'A'
  elseif now == nil then
    return 'D'
  end
  return now == entry.before and '=' or 'M'
end

local function counts(before, now)
  local added, removed = 0, 0
  local hunks = vim.diff(before or '', now or '', { result_type = 'indices' })
  ---@cast hunks integer[][]
  for _, h in ipairs(hunks) do
    removed, added = removed + h[2], added + h[4]
  end
  return ('+%d -%d'):format(added, removed)
end

local function entry_line(entry)
  local now = M.current_text(entry.path)
  local status = status_of(entry, now)
  local name = vim.fn.fnamemodify(entry.path, ':~:.')
  local detail = status == '?' and 'content before the turn unknown' or counts(entry.before, now)
  return ('%s  %s  %s  (%s)'):format(status, name, detail, entry.via == 'fs' and 'through Neovim' or 'on disk')
end

local function render(buf)
  local list = M.lists[buf]
  local lines = {
    ('Files changed in turn %d of %s'):format(list.turn, list.key),
    '<CR> diff · X revert file · Q quickfix · R refresh · q close',
    '',
  }
  list.rows = {}
  for i, entry in ipairs(list.entries) do
    lines[#lines + 1] = entry_line(entry)
    list.rows[#lines] = i
  end
  scratch.fill(buf, lines)
end

local function entry_at_cursor(buf)
  local list = M.lists[buf]
  local index = list and list.rows[api.nvim_win_get_cursor(0)[1]]
  return index and list.entries[index] or nil
end

local function notify(msg, level)
  require('acp_nvim.kit.notify').notify('[acp.nvim] ' .. msg, level or vim.log.levels.INFO)
end

--- The buffer of `path`, loaded (a hidden one is created for a file that is not open).
local function file_buffer(path)
  local buf = buffers.find(path)
  if buf then
    return buf
  end
  buf = vim.fn.bufadd(path)
  vim.fn.bufload(buf)
  return buf
end

--- Diff view of `entry`: its text before the turn (left) and the file now (right).
function M.diff(entry)
  if not entry.known then
    notify(entry.path .. ': the content before the turn is unknown', vim.log.levels.WARN)
    return
  end
  if buffers.find(entry.path) == nil and uv.fs_lstat(entry.path) and not is_regular(entry.path) then
    notify(entry.path .. ': not a regular file: no diff view', vim.log.levels.WARN)
    return
  end
  local target = file_buffer(entry.path)
  local before = scratch.create({ name = ('acp://before/%s'):format(entry.path), kind = 'changes',
    buftype = 'nofile', bufhidden = 'wipe', lines = entry.before and (buffers.parse(entry.before)) or {},
    modifiable = false, filetype = vim.bo[target].filetype })
  local left, right = unpack(diff.tab({ before, target }))
  diff.set(left, { winbar = '%#AcpNvimHeader#BEFORE the turn · dp revert hunk · q close' })
  diff.set(right, { winbar = '%#AcpNvimHeader#NOW · do revert hunk · :w save' })
  vim.keymap.set('n', 'q', function()
    vim.cmd('tabclose')
  end, { buffer = before, nowait = true })
  -- one side closed: the other leaves diff mode with its options given back
  api.nvim_create_autocmd('WinClosed', {
    pattern = { tostring(left), tostring(right) },
    once = true,
    callback = function()
      diff.stop(left)
      diff.stop(right)
    end,
  })
  return { before = before, target = target, left = left, right = right }
end

--- Put `entry`'s file back as it was before the turn (`:Ai changes revert`: one undo step in its
--- buffer, saved; a file the agent created is deleted). Over unsaved changes: a second X.
function M.revert(entry)
  if not entry.known then
    notify(entry.path .. ': cannot revert, the content before the turn is unknown', vim.log.levels.WARN)
    return false
  end
  vim.cmd.Ai({ args = { 'changes', 'revert', entry.path } })
  return true
end

--- Draw every open list again (after a revert).
function M.refresh()
  for buf in pairs(M.lists) do
    if api.nvim_buf_is_loaded(buf) then
      render(buf)
    else
      M.lists[buf] = nil
    end
  end
end

local function to_quickfix(buf)
  local list = M.lists[buf]
  local items = {}
  for _, entry in ipairs(list.entries) do
    items[#items + 1] = { filename = entry.path, lnum = 1, text = entry_line(entry) }
  end
  vim.fn.setqflist({}, ' ', { title = ('acp.nvim changes, turn %d of %s'):format(list.turn, list.key), items = items })
  vim.cmd('copen')
end

local function set_keys(buf)
  local function map(lhs, fn)
    vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true })
  end
  map('<CR>', function()
    local entry = entry_at_cursor(buf)
    if entry then
      M.diff(entry)
    end
  end)
  map('X', function()
    local entry = entry_at_cursor(buf)
    if entry then
      M.revert(entry)
    end
  end)
  map('R', function()
    render(buf)
  end)
  map('Q', function()
    to_quickfix(buf)
  end)
  map('q', function()
    vim.cmd('close')
  end)
end

--- Show the changeset of `turn` of session `key`. entries: { path, before, known, via }.
function M.open(key, turn, entries)
  local buf, created = scratch.create({ name = 'acp://changes/' .. key, kind = 'changes', buftype = 'nofile',
    bufhidden = 'hide', filetype = 'acp_nvim_changes', modifiable = false, reuse = true })
  if created then
    set_keys(buf)
  end
  for _, entry in ipairs(entries) do
    if entry.before == vim.NIL then
      entry.before = nil
    end
  end
  M.lists[buf] = { key = key, turn = turn, entries = entries, rows = {} }
  vim.b[buf].acp_nvim_session = key -- X runs :Ai changes revert for this list's session
  render(buf)
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    vim.cmd('botright split')
    win = api.nvim_get_current_win()
    api.nvim_win_set_buf(win, buf)
    api.nvim_win_set_height(win, math.min(#entries + HEADER_LINES + 1, 15))
  end
  api.nvim_set_current_win(win)
  api.nvim_win_set_cursor(win, { math.min(HEADER_LINES + 1, api.nvim_buf_line_count(buf)), 0 })
  return buf
end

return M
