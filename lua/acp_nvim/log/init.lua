--- Log buffers (acp://log/<agent>/<n>): a view of one session's log ring, kept by Python.
---
--- One line per entry ("HH:MM:SS.mmm LVL → summary"), the full message indented under it
--- and folded (fold expression: indented lines fold). Python sends entries in batches
--- with the ring's oldest kept sequence number; older entries are cut from the top,
--- so the buffer never outgrows the ring. Windows whose cursor is on the last line
--- follow new entries; others stay where they are.
---
--- The frame budget: a new buffer shows the ring's newest page; a virtual line above the first
--- says how many older entries the ring has, and scrolling up to it asks Python for the next page
--- (lines added at the top cost Neovim time in proportion to the buffer: its folds move).
local M = {}

local api = vim.api
local scratch = require('acp_nvim.kit.scratch')
local ns_older = api.nvim_create_namespace('acp_nvim.log.older')

---@class acp_nvim.LogView
---@field buf integer
---@field seqs table<integer, integer>  entry sequence numbers, index head..tail
---@field sizes table<integer, integer> lines per entry, same index
---@field head integer
---@field tail integer
---@field lines integer                 buffer lines holding entries (0: one empty line)
---@field older integer                 entries of the ring older than the first one shown
---@field asked boolean?                older entries were asked for and have not come yet
local LogView = {}
LogView.__index = LogView

---@type table<string, acp_nvim.LogView>
M.views = {}

-- Later rules win where several match at the same column.
local SYNTAX = [[
syntax clear
syntax match AcpNvimLogOut /^\S\+ \u\{3} → .*$/ contains=AcpNvimLogTime
syntax match AcpNvimLogIn /^\S\+ \u\{3} ← .*$/ contains=AcpNvimLogTime
syntax match AcpNvimLogLocal /^\S\+ \u\{3} · .*$/ contains=AcpNvimLogTime
syntax match AcpNvimLogStderr /^\S\+ \u\{3} . stderr: .*$/ contains=AcpNvimLogTime
syntax match AcpNvimLogLifecycle /^\S\+ \u\{3} . lifecycle: .*$/ contains=AcpNvimLogTime
syntax match AcpNvimLogWarn /^\S\+ WRN .*$/ contains=AcpNvimLogTime
syntax match AcpNvimLogError /^\S\+ ERR .*$/ contains=AcpNvimLogTime
syntax match AcpNvimLogTime /^\d\d:\d\d:\d\d\.\d\d\d/ contained
]]

--- Fold text: how much JSON a closed entry hides.
function M.foldtext()
  local count = vim.v.foldend - vim.v.foldstart + 1
  return ('  ⋯ %d line%s'):format(count, count == 1 and '' or 's')
end

local function set_window_options(win)
  local wo = vim.wo[win][0]
  wo.foldmethod = 'expr'
  wo.foldexpr = "getline(v:lnum)[0]==' '"
  wo.foldtext = "v:lua.require'acp_nvim.log'.foldtext()"
  wo.foldminlines = 0
  wo.foldlevel = 0
  wo.foldenable = true
  wo.wrap = false
  wo.number = false
  wo.relativenumber = false
end

local function create(key)
  require('acp_nvim.kit.highlights').setup()
  local buf = scratch.create({ name = 'acp://log/' .. key, kind = 'log', buftype = 'nofile', bufhidden = 'hide',
    undolevels = -1, modifiable = false, filetype = 'acp_log' })
  api.nvim_buf_call(buf, function()
    vim.cmd(SYNTAX)
  end)
  local view = setmetatable({ buf = buf, key = key, seqs = {}, sizes = {}, head = 1, tail = 0, lines = 0, older = 0 },
    LogView)
  M.views[key] = view
  M.watch_scrolling()
  api.nvim_create_autocmd('BufWinEnter', {
    buffer = buf,
    callback = function()
      set_window_options(api.nvim_get_current_win())
    end,
  })
  api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    callback = function()
      M.views[key] = nil
    end,
  })
  return view
end

--- Whether `win` follows the tail: its cursor is on the last line, or in a closed fold that ends there.
function LogView:following(win)
  if self.lines == 0 then
    return true
  end
  local row = api.nvim_win_get_cursor(win)[1]
  if row >= self.lines then
    return true
  end
  return api.nvim_win_call(win, function()
    return vim.fn.foldclosedend(row)
  end) >= self.lines
end

--- Delete every line, folds first: Neovim deletes the folds of deleted lines one at a time, each
--- moving the rest of the window's fold list, so emptying a log of 20,000 folded entries took
--- 270 ms; without its folds it takes 5 (the expression folds the new lines again).
function LogView:clear()
  local methods = {}
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    methods[win] = vim.wo[win].foldmethod
    vim.wo[win].foldmethod = 'manual'
    api.nvim_win_call(win, function()
      vim.cmd('normal! zE')
    end)
  end
  api.nvim_buf_set_lines(self.buf, 0, -1, false, {})
  for win, method in pairs(methods) do
    vim.wo[win].foldmethod = method
  end
end

--- Remove entries older than `first_seq` from the top. Each call removes about as many as the
--- batch adds (Python bounds both), so the cost of the folds moved stays small.
function LogView:trim(first_seq)
  local drop = 0
  local i = self.head
  while i <= self.tail and self.seqs[i] < first_seq do
    drop = drop + self.sizes[i]
    i = i + 1
  end
  if i == self.head then
    return
  end
  for j = self.head, i - 1 do
    self.seqs[j], self.sizes[j] = nil, nil
  end
  self.head = i
  if i > self.tail then
    self:clear()
    self.head, self.tail = 1, 0
  else
    api.nvim_buf_set_lines(self.buf, 0, drop, false, {})
  end
  self.lines = self.lines - drop
end

--- Append items ({seq, header, body}) newer than the last one shown.
function LogView:add(items)
  local lines = {}
  local last = self.seqs[self.tail] or 0
  for _, item in ipairs(items) do
    local seq, header, body = item[1], item[2], item[3]
    if seq > last then
      lines[#lines + 1] = header
      vim.list_extend(lines, body)
      self.tail = self.tail + 1
      self.seqs[self.tail], self.sizes[self.tail] = seq, 1 + #body
      last = seq
    end
  end
  if #lines == 0 then
    return
  end
  local start = self.lines == 0 and 0 or -1
  api.nvim_buf_set_lines(self.buf, start, -1, false, lines)
  self.lines = self.lines + #lines
end

function LogView:update(first_seq, items)
  local followers = {}
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    if self:following(win) then
      followers[#followers + 1] = win
    end
  end
  vim.bo[self.buf].modifiable = true
  self:trim(first_seq)
  self:add(items)
  vim.bo[self.buf].modifiable = false
  for _, win in ipairs(followers) do
    api.nvim_win_set_cursor(win, { math.max(self.lines, 1), 0 })
  end
end

--- Draw items ({seq, header, body}) older than the oldest one shown above it (the ring's older
--- entries, a page at a time after a new buffer showed its newest).
function LogView:add_older(items)
  local lines, kept = {}, {}
  local oldest = self.seqs[self.head]
  for _, item in ipairs(items) do
    if not oldest or item[1] < oldest then
      kept[#kept + 1] = item
      lines[#lines + 1] = item[2]
      vim.list_extend(lines, item[3])
    end
  end
  if #lines == 0 then
    return
  end
  api.nvim_buf_set_lines(self.buf, 0, self.lines == 0 and -1 or 0, false, lines)
  self.head = self.head - #kept
  for i, item in ipairs(kept) do
    self.seqs[self.head + i - 1], self.sizes[self.head + i - 1] = item[1], 1 + #item[3]
  end
  if self.tail < self.head then
    self.tail = self.head + #kept - 1
  end
  self.lines = self.lines + #lines
end

--- The virtual line above the first entry: how many older ones the ring has.
function LogView:mark_older(older)
  self.older = (older and older ~= vim.NIL) and older or 0
  api.nvim_buf_clear_namespace(self.buf, ns_older, 0, -1)
  if self.older > 0 then
    api.nvim_buf_set_extmark(self.buf, ns_older, 0, 0, { virt_lines_above = true, virt_lines = { { {
      ('↑ %d older entr%s in the ring: scroll up to show them'):format(self.older, self.older == 1 and 'y' or 'ies'),
      'AcpNvimInfo' } } } })
  end
end

--- Ask Python for older entries when a window of the log shows its first lines.
function LogView:want_older()
  if self.older <= 0 or self.asked then
    return
  end
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    if vim.fn.line('w0', win) <= api.nvim_win_get_height(win) then
      self.asked = true
      require('acp_nvim.host').call.log_page(self.key)
      return
    end
  end
end

--- One autocommand for every log window: scrolling up to the first line asks for older entries.
function M.watch_scrolling()
  require('acp_nvim.kit.scrolled').watch('acp_nvim.log.scroll', function(win)
    for _, view in pairs(M.views) do
      if view.buf == api.nvim_win_get_buf(win) then
        view:want_older()
      end
    end
  end)
end

--- Apply a batch of older entries from Python; false when the buffer is gone.
---@param key string session key
---@param first_seq integer oldest sequence number still in the ring
---@param items table[] { seq, header, body_lines }, oldest first, all older than what is shown
---@param older integer? entries of the ring still older than these
function M.prepend(key, first_seq, items, older)
  local view = M.views[key]
  if not view or not api.nvim_buf_is_valid(view.buf) then
    return false
  end
  vim.bo[view.buf].modifiable = true
  view:trim(first_seq)
  view:add_older(items)
  vim.bo[view.buf].modifiable = false
  view.asked = false
  view:mark_older(older)
  return true
end

--- Apply a batch from Python; false when the buffer is gone (Python then stops sending).
---@param key string session key
---@param first_seq integer oldest sequence number still in the ring
---@param items table[] { seq, header, body_lines }
---@param older integer? entries of the ring older than the first one the buffer will show
function M.append(key, first_seq, items, older)
  local view = M.views[key]
  if not view or not api.nvim_buf_is_valid(view.buf) then
    return false
  end
  view:update(first_seq, items)
  if older ~= nil and older ~= view.older then
    view:mark_older(older)
  end
  return true
end

function LogView:show(focus)
  local win = vim.fn.bufwinid(self.buf)
  if win == -1 then
    local previous = api.nvim_get_current_win()
    win = require('acp_nvim.chat.layout').below(self.buf, math.max(5, math.floor(vim.o.lines * 0.35)))
    set_window_options(win)
    api.nvim_win_set_cursor(win, { math.max(self.lines, 1), 0 })
    if not focus then
      api.nvim_set_current_win(previous)
    end
  elseif focus then
    api.nvim_set_current_win(win)
  end
end

--- Show the log of `key`; a new buffer is filled with `items`. Returns false, showing nothing,
--- when the buffer does not exist and `items` is nil (Python then sends the ring's entries).
---@param key string
---@param items table[]|nil the ring's newest entries, oldest first (used only for a new buffer)
---@param focus boolean
---@param older integer? entries of the ring older than those
function M.open(key, items, focus, older)
  local view = M.views[key]
  if not view or not api.nvim_buf_is_valid(view.buf) then
    if items == nil or items == vim.NIL then
      return false
    end
    view = create(key)
    view:update(0, items)
    view:mark_older(older)
  end
  view:show(focus)
  return true
end

return M
