--- The sessions board (:Ai board, |acp_nvim-board|): one live buffer, acp://board, with a row per
--- session of this Neovim and, read-only below them, the past sessions of the workspace.
---
--- Python sends rows (python/acp_nvim/core/session/board.py `Row`) when the board opens and then
--- only the rows that changed, at most every 250 ms; the running time and "ago" columns are
--- redrawn here once a second while the board is on screen. Every redraw changes only the lines
--- whose text differs, so the cursor stays where it is (on the same session's row when rows come
--- or go above it).
---
--- :Ai next / :Ai prev (and ]w / [w, |acp_nvim-board|) work from any buffer: they read the
--- sessions' states (acp_nvim.state) and the questions waiting in Lua (prompts, reviews, forms).
local M = {}

local api = vim.api
local scratch = require('acp_nvim.kit.scratch')
local NAME = 'acp://board'
local ns = api.nvim_create_namespace('acp_nvim.board')
local TICK_MS = 1000
local KEY_WIDTH, STATE_WIDTH, AGO_WIDTH, TOKENS_WIDTH, TITLE_WIDTH = 14, 30, 9, 28, 36

---@class acp_nvim.BoardRow
---@field key string           the session key (a past session: its id)
---@field agent string
---@field state string         starting|idle|running|waiting|failed|closed|past
---@field title string
---@field waiting string[]     what waits for you: review, prompt, question, conflict
---@field queued integer
---@field failure string       why it failed: the failed prompt's class, or why the agent stopped
---@field turn_started number|false  epoch seconds
---@field activity number|false      epoch seconds of the agent's last message
---@field tokens string
---@field limits string the usage meter ('' when none is reported)
---@field files string[]
---@field changed integer
---@field branch string
---@field order integer
---@field session_id string
---@field current boolean

---@class acp_nvim.Board
---@field buf integer
---@field rows table<string, acp_nvim.BoardRow> open sessions by key
---@field past acp_nvim.BoardRow[]
---@field lines string[]       the text shown
---@field keys (string|false)[] per line: the key of the row on it
---@field timer uv.uv_timer_t?
local Board = {}
Board.__index = Board
M.Board = Board

---@type acp_nvim.Board|nil the board while its buffer exists
M.board = nil

local STATE_HL = { running = 'AcpNvimBoardRunning', waiting = 'AcpNvimBoardWaiting', failed = 'AcpNvimBoardFailed',
  starting = 'AcpNvimBoardRunning', idle = 'AcpNvimBoardIdle', closed = 'AcpNvimBoardPast',
  past = 'AcpNvimBoardPast' }
local HELP = '<CR> chat · a what waits · c cancel · x close · r restart · n new · ]w [w waiting · q quit'

-- Text ----------------------------------------------------------------------------------

local function now()
  local t = vim.uv.clock_gettime('realtime')
  return t.sec + t.nsec / 1e9
end

--- "42s", "3m05s", "2h10m".
function M.duration(seconds)
  seconds = math.max(0, math.floor(seconds))
  if seconds < 60 then
    return seconds .. 's'
  elseif seconds < 3600 then
    return ('%dm%02ds'):format(math.floor(seconds / 60), seconds % 60)
  elseif seconds < 86400 then
    return ('%dh%02dm'):format(math.floor(seconds / 3600), math.floor(seconds % 3600 / 60))
  end
  return ('%dd'):format(math.floor(seconds / 86400))
end

local function clean(text)
  return (tostring(text or ''):gsub('[%c]', ' '))
end

--- `text` padded to `width` cells; a longer one is cut with "…" (`whole`: kept whole, the row shifts).
local function fit(text, width, whole)
  text = clean(text)
  local shown = api.nvim_strwidth(text)
  if whole and shown >= width then
    return text
  elseif shown > width then
    text = vim.fn.strcharpart(text, 0, width - 1) .. '…'
    shown = api.nvim_strwidth(text)
  end
  return text .. (' '):rep(width - shown)
end

--- The state column: "running 1m05s", "waiting for you: review", "failed: usage limit", ….
function M.state_text(row, at)
  local state = row.state
  local text = state
  if state == 'waiting' then
    local what = type(row.waiting) == 'table' and #row.waiting > 0 and table.concat(row.waiting, ', ') or nil
    text = 'waiting for you' .. (what and (': ' .. what) or '')
  elseif state == 'running' and row.turn_started then
    text = 'running ' .. M.duration(at - row.turn_started)
  elseif state == 'failed' and (row.failure or '') ~= '' then
    text = 'failed: ' .. row.failure
  elseif state == 'idle' and (row.failure or '') ~= '' then
    text = 'idle · failed: ' .. row.failure -- the last prompt failed (a limit): the agent still runs
  end
  if (row.queued or 0) > 0 then
    text = text .. (' · %d queued'):format(row.queued)
  end
  return text
end

local function files_text(row)
  local files = type(row.files) == 'table' and row.files or {}
  local count = math.max(row.changed or 0, #files)
  if count == 0 then
    return ''
  end
  local shown = table.concat(vim.list_slice(files, 1, 3), ', ')
  return ('%d file%s: %s%s'):format(count, count == 1 and '' or 's', shown, count > 3 and ', …' or '')
end

--- One row's line and where its state column is (byte offsets).
function M.row_line(row, at)
  local mark = row.current and '▸ ' or '  '
  local head = mark .. fit(row.key, KEY_WIDTH) .. ' '
  local state = fit(M.state_text(row, at), STATE_WIDTH, true) -- what it waits on, why it failed: whole
  local ago = row.activity and (M.duration(at - row.activity) .. ' ago') or ''
  local title = (row.title or '') ~= '' and row.title or (row.state == 'past' and row.agent or '')
  local parts = { head, state, ' ', fit(ago, AGO_WIDTH), ' ', fit(row.tokens or '', TOKENS_WIDTH), ' ',
    fit(title, TITLE_WIDTH) }
  if (row.branch or '') ~= '' then
    parts[#parts + 1] = ' ⎇ ' .. clean(row.branch)
  end
  if (row.limits or '') ~= '' then
    parts[#parts + 1] = '  ' .. clean(row.limits)
  end
  local files = files_text(row)
  if files ~= '' then
    parts[#parts + 1] = '  ' .. clean(files)
  end
  local line = table.concat(parts):gsub('%s+$', '')
  return line, #head, #head + #state
end

local function sorted_rows(rows)
  local list = vim.tbl_values(rows)
  table.sort(list, function(a, b)
    return (a.order or 0) < (b.order or 0)
  end)
  return list
end

local function waiting_count(rows)
  local n = 0
  for _, row in pairs(rows) do
    if row.state == 'waiting' then
      n = n + 1
    end
  end
  return n
end

--- The buffer's lines, the row key of each, and the state column's highlight per line.
function Board:layout()
  local at = now()
  local open = sorted_rows(self.rows)
  local waiting = waiting_count(self.rows)
  local lines, keys, marks = {}, {}, {}
  local function add(text, key, mark)
    lines[#lines + 1], keys[#keys + 1] = text, key or false
    if mark then
      marks[#lines] = mark
    end
  end
  local warm = require('acp_nvim.host.idle').describe()
  add(('acp.nvim · %d session%s%s%s'):format(#open, #open == 1 and '' or 's',
    waiting > 0 and (' · %d waiting for you'):format(waiting) or '', warm ~= '' and (' · warm: ' .. warm) or ''),
    nil, { 0, -1, 'AcpNvimHeader' })
  add(HELP, nil, { 0, -1, 'AcpNvimInfo' })
  add('')
  if #open == 0 then
    add('  no session yet: n starts one (or :Ai new [agent])', nil, { 0, -1, 'AcpNvimInfo' })
  end
  for _, row in ipairs(open) do
    local line, from, to = M.row_line(row, at)
    add(line, row.key, { from, to, STATE_HL[row.state] or 'AcpNvimBoardIdle' })
    for _, sub in ipairs(type(row.subagents) == 'table' and row.subagents or {}) do
      add('      ' .. clean(sub), row.key, { 0, -1, 'AcpNvimInfo' }) -- its running subagents, under it
    end
  end
  if #self.past > 0 then
    add('')
    add('── past sessions of this folder (<CR> resumes one) ──', nil, { 0, -1, 'AcpNvimInfo' })
    for _, row in ipairs(self.past) do
      add((M.row_line(row, at)), 'past:' .. row.session_id, { 0, -1, 'AcpNvimBoardPast' })
    end
  end
  return lines, keys, marks
end

-- Drawing in place ------------------------------------------------------------------------

--- Where each window showing the board has its cursor: the key of the row (or the line) and column.
local function cursors(board)
  local found = {}
  for _, win in ipairs(vim.fn.win_findbuf(board.buf)) do
    local pos = api.nvim_win_get_cursor(win)
    found[win] = { key = board.keys[pos[1]] or nil, line = pos[1], col = pos[2] }
  end
  return found
end

local function restore(board, saved)
  for win, pos in pairs(saved) do
    if api.nvim_win_is_valid(win) then
      local line = pos.line
      if pos.key then
        for i, key in ipairs(board.keys) do
          if key == pos.key then
            line = i
            break
          end
        end
      end
      line = math.min(line, #board.lines)
      local cur = api.nvim_win_get_cursor(win)
      if cur[1] ~= line or cur[2] ~= pos.col then
        pcall(api.nvim_win_set_cursor, win, { line, pos.col })
      end
    end
  end
end

--- Replace the lines that differ (hunks of a line diff, bottom up): the rest of the buffer, its
--- marks and the cursors on it stay.
local function patch(buf, old, new)
  if #old == #new then
    for i = 1, #new do
      if old[i] ~= new[i] then
        api.nvim_buf_set_lines(buf, i - 1, i, false, { new[i] })
      end
    end
    return
  end
  local hunks = vim.diff(table.concat(old, '\n') .. '\n', table.concat(new, '\n') .. '\n',
    { result_type = 'indices', algorithm = 'minimal' })
  ---@cast hunks integer[][]
  for i = #hunks, 1, -1 do
    local a_start, a_count, b_start, b_count = unpack(hunks[i])
    local first = a_count == 0 and a_start or a_start - 1
    api.nvim_buf_set_lines(buf, first, first + a_count, false, vim.list_slice(new, b_start, b_start + b_count - 1))
  end
end

--- Redraw what changed.
function Board:draw()
  if not api.nvim_buf_is_valid(self.buf) then
    return
  end
  local lines, keys, marks = self:layout()
  local saved = cursors(self)
  local bo = vim.bo[self.buf]
  if not vim.deep_equal(lines, self.lines) then
    bo.modifiable = true
    patch(self.buf, self.lines, lines)
    bo.modifiable = false
    bo.modified = false
  end
  self.lines, self.keys = lines, keys
  restore(self, saved)
  api.nvim_buf_clear_namespace(self.buf, ns, 0, -1)
  for line, mark in pairs(marks) do
    local stop = mark[2] < 0 and #lines[line] or math.min(mark[2], #lines[line])
    api.nvim_buf_set_extmark(self.buf, ns, line - 1, math.min(mark[1], stop), { end_col = stop, hl_group = mark[3] })
  end
end

function Board:visible()
  return api.nvim_buf_is_valid(self.buf) and #vim.fn.win_findbuf(self.buf) > 0
end

--- Redraw once a second while the board is on screen and a session runs (its clock moves).
function Board:tick()
  if self.timer or not self:visible() then
    return
  end
  self.timer = vim.uv.new_timer()
  self.timer:start(TICK_MS, TICK_MS, vim.schedule_wrap(function()
    if not self:visible() or not self:busy() then
      return self:stop()
    end
    self:draw()
  end))
end

function Board:busy()
  for _, row in pairs(self.rows) do
    if row.turn_started or row.activity then
      return true
    end
  end
  return false
end

function Board:stop()
  if self.timer then
    self.timer:stop()
    self.timer:close()
    self.timer = nil
  end
end

-- The buffer and its keys ---------------------------------------------------------------

--- The row under the cursor: its key and whether it is a past session's.
function Board:row_at_cursor()
  local key = self.keys[api.nvim_win_get_cursor(0)[1]]
  if not key then
    return nil
  end
  local id = key:match('^past:(.*)$')
  if id then
    for _, row in ipairs(self.past) do
      if row.session_id == id then
        return row, true
      end
    end
  end
  return self.rows[key], false
end

local function on_row(fn, live_only)
  return function()
    local board = M.board
    local row, past = board and board:row_at_cursor()
    if not row then
      return vim.notify('[acp.nvim] no session on this line', vim.log.levels.INFO)
    end
    if past and live_only then
      return vim.notify('[acp.nvim] a past session is read-only: <CR> resumes it', vim.log.levels.INFO)
    end
    fn(row, past)
  end
end

--- Run `:Ai {words}` for the session `key` (as if from its chat).
local function run_for(key, words)
  require('acp_nvim.host.ai').run_for(key, words)
end

local ACTIONS = {
  ['<CR>'] = { on_row(function(row, past)
    if past then
      vim.cmd('Ai resume ' .. row.session_id)
    else
      run_for(row.key, { 'open', row.key })
    end
  end), 'open the chat (a past session: resume it)' },
  a = { on_row(function(row)
    M.land(row.key)
  end, true), 'go to what the session waits on' },
  c = { on_row(function(row)
    run_for(row.key, { 'cancel' })
  end, true), 'cancel its turn' },
  x = { on_row(function(row)
    run_for(row.key, { 'close' })
  end, true), 'close the session' },
  r = { on_row(function(row)
    require('acp_nvim.chat.actions').confirm_restart(row.key, row.agent, row.state == 'running', function()
      run_for(row.key, { 'restart' })
    end)
  end, true), 'restart its agent, after asking' },
  n = { function()
    local board = M.board
    local row, past = board and board:row_at_cursor()
    vim.cmd('Ai new' .. (row and not past and (' ' .. row.agent) or ''))
  end, 'a new session (of the agent under the cursor)' },
  q = { function()
    vim.cmd('close')
  end, 'close the board window' },
}

function Board:map_keys()
  for lhs, action in pairs(ACTIONS) do
    vim.keymap.set('n', lhs, action[1], { buffer = self.buf, nowait = true, desc = 'acp.nvim board: ' .. action[2] })
  end
  local keys = require('acp_nvim.config.options').config.keymaps
  for lhs, step in pairs({ [keys.next_waiting] = 1, [keys.prev_waiting] = -1 }) do
    if lhs ~= '' then
      vim.keymap.set('n', lhs, function()
        self:jump_waiting(step)
      end, { buffer = self.buf, nowait = true, desc = 'acp.nvim board: the next session waiting for you' })
    end
  end
end

--- Move the cursor to the next (step 1) or previous (-1) row waiting for you, around the end.
function Board:jump_waiting(step)
  local line = api.nvim_win_get_cursor(0)[1]
  local count = #self.keys
  for i = 1, count do
    local at = (line - 1 + i * step) % count + 1
    local row = self.keys[at] and self.rows[self.keys[at]]
    if row and row.state == 'waiting' then
      return api.nvim_win_set_cursor(0, { at, 0 })
    end
  end
  vim.notify('[acp.nvim] no session is waiting for you', vim.log.levels.INFO)
end

local function new_board()
  local buf = scratch.create({ name = NAME, kind = 'board', buftype = 'nofile', bufhidden = 'wipe',
    filetype = 'acp_board', modifiable = false, lines = {}, reuse = true })
  local board = setmetatable({ buf = buf, rows = {}, past = {}, lines = { '' }, keys = {} }, Board)
  board:map_keys()
  api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    once = true,
    callback = function()
      board:stop()
      if M.board == board then
        M.board = nil
        pcall(require('acp_nvim.host').call.board, 'closed')
      end
    end,
  })
  api.nvim_create_autocmd('BufWinEnter', {
    buffer = buf,
    callback = function()
      board:draw()
      board:tick()
    end,
  })
  return board
end

local function show(buf)
  local win = vim.fn.bufwinid(buf)
  if win ~= -1 then
    return api.nvim_set_current_win(win)
  end
  require('acp_nvim.chat.layout').below(buf, 14)
  vim.wo.wrap, vim.wo.cursorline, vim.wo.number, vim.wo.relativenumber = false, true, false, false
end

-- From Python -----------------------------------------------------------------------------

--- Open the board (or go to it) with every open session's row.
---@param rows acp_nvim.BoardRow[]
function M.open(rows)
  require('acp_nvim.kit.highlights').setup()
  local board = M.board
  if not board or not api.nvim_buf_is_valid(board.buf) then
    board = new_board()
    M.board = board
  end
  board.rows = {}
  for _, row in ipairs(rows) do
    board.rows[row.key] = row
  end
  show(board.buf)
  board:draw()
  local first = board.keys[4] and 4 or nil
  if first and api.nvim_win_get_cursor(0)[1] < 4 then
    api.nvim_win_set_cursor(0, { first, 0 })
  end
  board:tick()
  return board.buf
end

--- Rows that changed, and the keys of sessions that are gone.
---@param rows acp_nvim.BoardRow[]
---@param removed string[]
function M.update(rows, removed)
  local board = M.board
  if not board then
    return
  end
  for _, key in ipairs(removed or {}) do
    board.rows[key] = nil
  end
  for _, row in ipairs(rows or {}) do
    board.rows[row.key] = row
  end
  if board:visible() then
    board:draw()
    board:tick()
  end
end

--- The past sessions of the workspace (read-only rows below the open ones).
---@param past acp_nvim.BoardRow[]
function M.set_past(past)
  local board = M.board
  if board then
    board.past = past or {}
    if board:visible() then
      board:draw()
    end
  end
end

-- :Ai next / :Ai prev --------------------------------------------------------------------

--- The session the cursor is in: its chat, a view of its question, or its row on the board.
local function anchor()
  if M.board and api.nvim_get_current_buf() == M.board.buf then
    local row, past = M.board:row_at_cursor()
    return row and not past and row.key or nil
  end
  return vim.b.acp_nvim_session
end

--- The keys of the sessions waiting for you, in the order they were made.
function M.waiting()
  local list = {}
  for key, s in pairs(require('acp_nvim.state').sessions) do
    if s.state == 'waiting' or (type(s.waiting) == 'table' and #s.waiting > 0) then
      list[#list + 1] = { key = key, order = s.order or 0 }
    end
  end
  table.sort(list, function(a, b)
    return a.order < b.order or (a.order == b.order and a.key < b.key)
  end)
  return vim.tbl_map(function(item)
    return item.key
  end, list)
end

--- Go to what session `key` waits on: its review, its permission prompt, its question; else its chat.
function M.land(key)
  for _, r in ipairs(require('acp_nvim.review').list()) do
    if r.session == key then
      require('acp_nvim.question.permission').prompt:close()
      return require('acp_nvim.review').show(r.id)
    end
  end
  local prompt = require('acp_nvim.question.pending').first('prompt', function(entry)
    return entry.q and entry.q.session == key
  end)
  if prompt then
    return require('acp_nvim.question.permission').show_prompt(prompt)
  end
  local question = require('acp_nvim.question')
  for _, id in ipairs(question.list()) do
    local entry = question.open_questions[id]
    if entry and entry.q and entry.q.session == key then
      return question.go(id)
    end
  end
  run_for(key, { 'open', key })
end

local function step_to(step)
  local list = M.waiting()
  if #list == 0 then
    return vim.notify('[acp.nvim] no session is waiting for you', vim.log.levels.INFO)
  end
  local here = anchor()
  local index = step > 0 and 1 or #list
  for i, key in ipairs(list) do
    if key == here then
      index = (i - 1 + step) % #list + 1
      break
    end
  end
  M.land(list[index])
end

--- :Ai next: go to the next session waiting for you (after the one the cursor is in).
function M.next()
  step_to(1)
end

--- :Ai prev: go to the previous session waiting for you.
function M.prev()
  step_to(-1)
end

return M
