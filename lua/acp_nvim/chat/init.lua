--- Chat buffers: the transcript of a session, streamed in; the prompt is a buffer of its own in a
--- window under the chat's (acp_nvim.prompt, acp_nvim.prompt.window).
---
--- Layout: a header line (with the session's details as a virtual line below it), then
--- transcript blocks, then one empty last line. Each block starts at an extmark and ends with
--- one blank separator line; the last line carries the end mark (`prompt`, where the prompt area
--- was), with the queued prompts, the restart offer and the turn's keys as virtual lines above it. Render operations come from
--- Python (python/acp_nvim/core/render_ops.py) as maps with named fields, declared below.
---
--- Each chat is an acp_nvim.Chat object that owns its buffer and block state; the module keeps
--- only the registry of chats by session key.
local M = {}

local api = vim.api
local chat_folds = require('acp_nvim.chat.folds')
local fit = require('acp_nvim.kit.fit')
local labels = require('acp_nvim.state.labels')
local markdown = require('acp_nvim.chat.markdown')
local options = require('acp_nvim.config.options')
local prompt = require('acp_nvim.prompt')
local turn_keys = require('acp_nvim.chat.turn_keys')
local parked = require('acp_nvim.kit.parked')
local scratch = require('acp_nvim.kit.scratch')
local ns = api.nvim_create_namespace('acp_nvim.chat')
local ns_hl = api.nvim_create_namespace('acp_nvim.chat.hl') -- extmark id = block id
local ns_blocks = api.nvim_create_namespace('acp_nvim.chat.blocks') -- extmark id = block id
local ns_clip = api.nvim_create_namespace('acp_nvim.chat.clip') -- extmark id = block id
local ns_lines = api.nvim_create_namespace('acp_nvim.chat.lines') -- per-line marks (plan progress)
local ns_gap = api.nvim_create_namespace('acp_nvim.chat.gap') -- extmark id = the block below the gap
local ns_header = api.nvim_create_namespace('acp_nvim.chat.header') -- the header as it fits the window

---@class acp_nvim.RenderOp.New
---@field op 'new'
---@field id integer             block id
---@field kind string            user|heading|agent|thought|tool|plan|notice|info|error|turn_end|agent_notice|compaction|…
---@field lines string[]
---@field meta { status: string?, severity: string? }|nil

---@class acp_nvim.RenderOp.Append
---@field op 'append'
---@field id integer
---@field text string            extends the block's last line (may hold newlines)

---@class acp_nvim.RenderOp.Set
---@field op 'set'
---@field id integer
---@field lines string[]
---@field meta { status: string?, severity: string? }|nil

---@class acp_nvim.RenderOp.Clip
---@field op 'clip'
---@field id integer
---@field marker string          shown below the block: it is cut in the view

---@class acp_nvim.RenderOp.Insert
---@field op 'insert'
---@field id integer
---@field kind string
---@field lines string[]
---@field meta { status: string? }|nil
---@field before integer         drawn above this block (an older block of a long transcript)

---@class acp_nvim.RenderOp.Gap
---@field op 'gap'
---@field id integer             the first block drawn below the gap
---@field after integer|vim.NIL  the last block drawn above it (nil: the gap is at the top)
---@field count integer          blocks not drawn there (0: the gap is closed)

---@alias acp_nvim.RenderOp acp_nvim.RenderOp.New|acp_nvim.RenderOp.Append|acp_nvim.RenderOp.Set|acp_nvim.RenderOp.Clip|acp_nvim.RenderOp.Insert|acp_nvim.RenderOp.Gap

---@class acp_nvim.Chat
---@field buf integer
---@field key string
---@field index table<integer, true> the blocks drawn, by id
---@field nxt table<integer, integer> block id -> the id of the block drawn below it
---@field prv table<integer, integer> block id -> the id of the block drawn above it
---@field last integer?          the block drawn last (just above the end mark)
---@field gaps table<integer, { after: integer?, count: integer, pending: boolean? }> blocks not drawn, by the block below them
---@field kinds table<integer, string>
---@field sizes table<integer, integer> bytes shown per block
---@field clipped table<integer, boolean>
---@field prompt integer         extmark id of the end mark: the empty last line, below the last block
---@field prompt_buf integer     the prompt's buffer (acp_nvim.prompt)
---@field label string           the prompt window's winbar: its keys
---@field queue string[]         queued prompts, shown above the separator
---@field md table?              markdown highlighting state (markdown.lua)
---@field header integer?        extmark id of the details line
---@field details string?        the session's details, shown below the header
---@field fitted_width integer?  the text width the header and separator are fitted to (kit/fit.lua)
---@field recovery string?       why the agent stopped (the restart offer), '' when it did not
---@field history_pos integer?   position in the prompt history while browsing it (prompt/init.lua)
---@field draft string?          the prompt typed before browsing the history (prompt/init.lua)
---@field command_info { name: string, description: string, hint: string }[]? the agent's slash commands (completion)
---@field resubmit { turn: integer }? the prompt holds turn's prompt, edited: sending rewinds first (prompt/init.lua)
---@field folds table<integer, { first: integer, last: integer }>? turns a rewind took back, by marker (folds.lua)
local Chat = {}
Chat.__index = Chat
M.Chat = Chat

---@type table<string, acp_nvim.Chat> the registry: chats by session key
M.chats = {}

-- Whole-block highlight per kind; kinds not listed highlight only their first line.
local BLOCK_HL = { notice = 'AcpNvimNotice', info = 'AcpNvimNotice', error = 'AcpNvimError',
  turn_end = 'AcpNvimTurnEnd' }
local FIRST_LINE_HL = { user = 'AcpNvimUser', heading = 'AcpNvimAgent', plan = 'AcpNvimPlan',
  compaction = 'AcpNvimCompaction' }
local TOOL_HL = { completed = 'AcpNvimToolDone', failed = 'AcpNvimToolFailed' }
-- The agent's notices (ACP `notice`), whole block, by severity (another word reads as info).
local NOTICE_HL = { info = 'AcpNvimNotice', warning = 'AcpNvimWarning', error = 'AcpNvimError' }

local function row_of(chat, id)
  return api.nvim_buf_get_extmark_by_id(chat.buf, ns_blocks, id, {})[1]
end

--- The row (0-based) of the end mark: the empty last line, below the last block.
function Chat:prompt_row()
  return api.nvim_buf_get_extmark_by_id(self.buf, ns, self.prompt, {})[1]
end

local function prompt_row(chat)
  return chat:prompt_row()
end

--- First row of block `id` and the row just past its blank separator.
function Chat:block_range(id)
  local next_id = self.nxt[id]
  return row_of(self, id), next_id and row_of(self, next_id) or self:prompt_row()
end

local function block_range(chat, id)
  return chat:block_range(id)
end

local function last_line_len(chat, row)
  return #(api.nvim_buf_get_lines(chat.buf, row, row + 1, false)[1] or '')
end

local function mark(chat, id, start, stop, group, grow)
  api.nvim_buf_set_extmark(chat.buf, ns_hl, start, 0, {
    id = id,
    end_row = stop,
    end_col = grow and last_line_len(chat, stop) or 0,
    end_right_gravity = grow or nil,
    hl_group = group,
    hl_eol = true,
    priority = 90,
  })
end

local function plan_marks(chat, start, lines)
  for i, line in ipairs(lines) do
    if line:find('^%- %[x%]') then
      api.nvim_buf_set_extmark(chat.buf, ns_lines, start + i - 1, 0, {
        end_row = start + i,
        hl_group = 'AcpNvimPlanDone',
        priority = 91,
      })
    end
    if line:find('^%- %[.%] !') then -- a high-priority entry's mark (plan_view.py)
      local high = { end_col = 7, hl_group = 'AcpNvimPlanHigh', priority = 92 }
      api.nvim_buf_set_extmark(chat.buf, ns_lines, start + i - 1, 6, high)
    end
  end
end

local function highlight(chat, id, lines, meta)
  local kind = chat.kinds[id]
  local start, stop = block_range(chat, id)
  if kind == 'plan' then
    api.nvim_buf_clear_namespace(chat.buf, ns_lines, start, stop)
    plan_marks(chat, start, lines)
  end
  if kind == 'thought' then
    mark(chat, id, start, stop - 2, 'AcpNvimThought', true) -- grows with appended text
  elseif kind == 'agent_notice' then
    mark(chat, id, start, math.max(start + 1, stop - 1), NOTICE_HL[meta and meta.severity] or 'AcpNvimNotice')
  elseif BLOCK_HL[kind] then
    mark(chat, id, start, math.max(start + 1, stop - 1), BLOCK_HL[kind])
  elseif kind == 'tool' then
    mark(chat, id, start, start + 1, TOOL_HL[meta and meta.status] or 'AcpNvimTool')
  elseif FIRST_LINE_HL[kind] then
    mark(chat, id, start, start + 1, FIRST_LINE_HL[kind])
  end
end

local function nil_if_null(value)
  return value ~= vim.NIL and value or nil
end

local function byte_size(lines)
  local size = #lines - 1
  for _, line in ipairs(lines) do
    size = size + #line
  end
  return size
end

---@param op acp_nvim.RenderOp.New
local function op_new(chat, op)
  local id, kind, lines = op.id, op.kind, op.lines
  local row = prompt_row(chat)
  local with_blank = vim.list_extend(vim.list_slice(lines), { '' })
  api.nvim_buf_set_lines(chat.buf, row, row, false, with_blank)
  chat:place_prompt(row + #with_blank)
  api.nvim_buf_set_extmark(chat.buf, ns_blocks, row, 0, { id = id, right_gravity = false })
  if chat.last then
    chat.nxt[chat.last], chat.prv[id] = id, chat.last
  end
  chat.last, chat.index[id] = id, true
  chat.kinds[id] = kind
  chat.sizes[id] = byte_size(lines)
  highlight(chat, id, lines, nil_if_null(op.meta))
  markdown.on_new(chat, id, kind)
  chat_folds.on_new(chat, id, nil_if_null(op.meta))
  require('acp_nvim.chat.media').on_new(chat, id, nil_if_null(op.meta))
end

---@param op acp_nvim.RenderOp.Append
local function op_append(chat, op)
  local id, text = op.id, op.text
  if not chat.index[id] then
    return
  end
  local _, stop = block_range(chat, id)
  local row = stop - 2
  local col = last_line_len(chat, row)
  api.nvim_buf_set_text(chat.buf, row, col, row, col, vim.split(text, '\n', { plain = true }))
  chat.sizes[id] = chat.sizes[id] + #text
  markdown.on_append(chat, id)
end

---@param op acp_nvim.RenderOp.Set
local function op_set(chat, op)
  local id, lines = op.id, op.lines
  if not chat.index[id] then
    return
  end
  local start, stop = block_range(chat, id)
  api.nvim_buf_set_lines(chat.buf, start, stop - 1, false, lines)
  api.nvim_buf_set_extmark(chat.buf, ns_blocks, start, 0, { id = id, right_gravity = false })
  chat.sizes[id] = byte_size(lines)
  highlight(chat, id, lines, nil_if_null(op.meta))
end

---@param op acp_nvim.RenderOp.Clip
local function op_clip(chat, op)
  local id = op.id
  if not chat.index[id] then
    return
  end
  local _, stop = block_range(chat, id)
  local keys = options.config.keymaps
  chat.clipped[id] = true
  api.nvim_buf_set_extmark(chat.buf, ns_clip, stop - 2, 0, {
    id = id,
    virt_lines = { { { ('%s · %s shows all'):format(op.marker, keys.open), 'AcpNvimClip' } } },
  })
end

---@param op acp_nvim.RenderOp.Insert
local function op_insert(chat, op)
  local id, before = op.id, op.before
  if chat.index[id] or not chat.index[before] then
    return
  end
  local row = row_of(chat, before)
  local with_blank = vim.list_extend(vim.list_slice(op.lines), { '' })
  api.nvim_buf_set_lines(chat.buf, row, row, false, with_blank)
  api.nvim_buf_set_extmark(chat.buf, ns_blocks, row, 0, { id = id, right_gravity = false })
  api.nvim_buf_set_extmark(chat.buf, ns_blocks, row + #with_blank, 0, { id = before, right_gravity = false })
  local gap = chat.gaps[before]
  if gap then -- the marker stays right above `before`
    api.nvim_buf_set_extmark(chat.buf, ns_gap, row + #with_blank, 0, { id = before, virt_lines = gap.virt,
      virt_lines_above = true, right_gravity = false })
  end
  local above = chat.prv[before]
  if above then
    chat.nxt[above], chat.prv[id] = id, above
  end
  chat.nxt[id], chat.prv[before], chat.index[id] = before, id, true
  chat.kinds[id] = op.kind
  chat.sizes[id] = byte_size(op.lines)
  highlight(chat, id, op.lines, nil_if_null(op.meta))
  markdown.on_old(chat, id, op.kind)
end

local function thousands(n)
  local text = tostring(n)
  while true do
    local done
    text, done = text:gsub('^(%d+)(%d%d%d)', '%1,%2')
    if done == 0 then
      return text
    end
  end
end

local function gap_virt(count)
  return { { { ('  ↑ %s earlier block%s, drawn as you scroll up to them'):format(thousands(count),
    count == 1 and '' or 's'), 'AcpNvimInfo' } } }
end

---@param op acp_nvim.RenderOp.Gap
local function op_gap(chat, op)
  local id = op.id
  if op.count <= 0 or not chat.index[id] then
    chat.gaps[id] = nil
    pcall(api.nvim_buf_del_extmark, chat.buf, ns_gap, id)
    return
  end
  local gap = { after = nil_if_null(op.after), count = op.count, virt = gap_virt(op.count) }
  chat.gaps[id] = gap
  api.nvim_buf_set_extmark(chat.buf, ns_gap, row_of(chat, id), 0, { id = id, virt_lines = gap.virt,
    virt_lines_above = true, right_gravity = false })
end

local OPS = { new = op_new, append = op_append, set = op_set, clip = op_clip, insert = op_insert, gap = op_gap }

--- Operations in one flush from which parking a following window's cursor pays: it costs about
--- two view updates and a dozen API calls per window, where each operation costs one view update
--- (40 chats streaming a chunk per flush each fell seconds behind when every flush parked).
local PARK_MIN_OPS = 4

--- Apply render operations in order. Most append to the last line of the last block or add lines
--- after it, so when there are several, the cursors of windows that follow the chat's end are
--- parked above that line meanwhile (kit/parked.lua).
---@param ops acp_nvim.RenderOp[]
function Chat:apply(ops)
  local function apply_all()
    for _, op in ipairs(ops) do
      OPS[op.op](self, op)
    end
  end
  if #ops >= PARK_MIN_OPS then
    parked.edit(self.buf, math.max(self:prompt_row() - 1, 1), apply_all) -- 1-based: the last block's last line
  else
    apply_all()
  end
  markdown.sync(self)
  if next(self.gaps) then
    self:fill_gaps()
  end
end

--- Rows above and below the visible part of a window within which a gap is drawn.
local GAP_MARGIN = 2

--- Ask for the blocks of every gap that is in sight (or within GAP_MARGIN screens of it) in a
--- window of this chat: the newest page of them, drawn as the user scrolls up to them.
function Chat:fill_gaps()
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    local top, bottom = vim.fn.line('w0', win) - 1, vim.fn.line('w$', win)
    local height = api.nvim_win_get_height(win)
    for before, gap in pairs(self.gaps) do
      if not gap.pending then
        local row = row_of(self, before)
        if row >= top - GAP_MARGIN * height and row <= bottom + GAP_MARGIN * height then
          gap.pending = true
          require('acp_nvim.host').call.chat('page', self.key, { before = before, after = gap.after or vim.NIL })
        end
      end
    end
  end
end

--- Apply render operations to the chat of `key` (ignored when its buffer is gone).
---@param ops acp_nvim.RenderOp[]
function M.apply(key, ops)
  local chat = M.chats[key]
  if chat and api.nvim_buf_is_valid(chat.buf) then
    chat:apply(ops)
  end
end

--- The ids of the blocks drawn, top to bottom (a gap's blocks are not drawn).
---@return integer[]
function Chat:ids()
  local ids, id = {}, self.last
  while id do
    ids[#ids + 1] = id
    id = self.prv[id]
  end
  for i = 1, math.floor(#ids / 2) do
    ids[i], ids[#ids + 1 - i] = ids[#ids + 1 - i], ids[i]
  end
  return ids
end

--- The id of the block at `row` (0-based), or nil in the header or on the last line.
---
--- Neovim walks every mark between a reverse search's two ends, however small its limit: from
--- row 1M to row 0 that took 10 ms. So it looks back in widening spans, each cheap.
function Chat:block_at(row)
  if row >= self:prompt_row() then
    return nil
  end
  local span = 256
  while true do
    local stop = math.max(row - span, 0)
    local found = api.nvim_buf_get_extmarks(self.buf, ns_blocks, { row, 0 }, { stop, 0 }, { limit = 1 })[1]
    if found or stop == 0 then
      return found and found[1] or nil
    end
    span = span * 8
  end
end

--- The ids of the blocks drawn in rows [top, bottom) (0-based), the one that begins above `top`
--- and reaches into them included: what a window shows, found without looking at the others.
function Chat:blocks_between(top, bottom)
  local ids = {}
  local above = self:block_at(math.max(top, 0))
  if above then
    ids[1] = above
  end
  local marks = api.nvim_buf_get_extmarks(self.buf, ns_blocks, { math.max(top, 0), 0 }, { math.max(bottom, 0), 0 }, {})
  for _, mark in ipairs(marks) do
    if mark[1] ~= above then
      ids[#ids + 1] = mark[1]
    end
  end
  return ids
end

--- The chat whose buffer is `buf` (the current buffer by default).
function M.of_buffer(buf)
  buf = buf or api.nvim_get_current_buf()
  for _, chat in pairs(M.chats) do
    if chat.buf == buf then
      return chat
    end
  end
end

-- The end mark and the prompt ---------------------------------------------------------

local function queue_lines(chat)
  local lines = {}
  for i, text in ipairs(chat.queue) do
    lines[#lines + 1] = { { ('  ⏳ queued %d: %s'):format(i, text), 'AcpNvimQueue' } }
  end
  if #lines > 0 then
    lines[#lines + 1] = { { '  (:Ai queue edit changes them, :Ai queue clear drops them)', 'AcpNvimQueue' } }
  end
  return lines
end

--- The chat line that offers the restart key when the agent stopped or stopped answering.
local function recovery_line(chat)
  if (chat.recovery or '') == '' then
    return nil
  end
  local key = options.config.keymaps.restart
  local how = key ~= '' and (key .. ' restarts the agent (after asking) and reopens this session · :Ai restart')
    or ':Ai restart'
  return { { ('  ⚠ %s · %s'):format(chat.recovery, how), 'AcpNvimError' } }
end

--- (Re)place the end mark (at `row`, or where it is): queued prompts, the restart offer and the
--- turn's keys as virtual lines above it, right above the prompt window.
function Chat:place_prompt(row)
  local virt = queue_lines(self)
  virt[#virt + 1] = recovery_line(self)
  vim.list_extend(virt, turn_keys.lines(self))
  self.prompt = api.nvim_buf_set_extmark(self.buf, ns, row or self:prompt_row(), 0, {
    id = self.prompt,
    virt_lines = virt,
    virt_lines_above = true,
    right_gravity = false,
  })
end

local SEPARATOR = '── prompt · %s or <CR> sends · %s cancels · %s/%s history · <C-x><C-o> completes / and @ · u undoes ──'

--- A new chat buffer for session `key`, registered, with its prompt buffer (keys and completion).
---@return acp_nvim.Chat
function Chat.new(key)
  local buf = scratch.create({ name = 'acp://chat/' .. key, kind = 'chat', buftype = 'nofile', bufhidden = 'hide',
    undolevels = -1, -- streamed output must not become undo steps the user could undo
    filetype = 'acp_chat', lines = { '# acp.nvim · ' .. key, '' } })
  api.nvim_buf_set_extmark(buf, ns, 0, 0, { line_hl_group = 'AcpNvimHeader' })
  local keys = options.config.keymaps
  local chat = setmetatable({ buf = buf, key = key, index = {}, nxt = {}, prv = {}, gaps = {}, kinds = {},
    sizes = {}, clipped = {},
    queue = {}, label = SEPARATOR:format(keys.send, keys.cancel, keys.history_prev, keys.history_next) }, Chat)
  chat:place_prompt(1)
  M.chats[key] = chat
  markdown.attach(chat)
  prompt.attach(chat)
  require('acp_nvim.chat.actions').attach(chat)
  require('acp_nvim.chat.media').attach(chat)
  api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    callback = function()
      M.chats[key] = nil
    end,
  })
  M.watch_scrolling()
  M.watch_resizes()
  return chat
end

--- Draw the older blocks of a long chat as the user scrolls up to them, and highlight what comes
--- into sight (one autocommand for all).
function M.watch_scrolling()
  require('acp_nvim.kit.scrolled').watch('acp_nvim.chat.scroll', function(win)
    local chat = M.of_buffer(api.nvim_win_get_buf(win))
    if chat and next(chat.gaps) then
      chat:fill_gaps()
    end
    if chat then
      markdown.scrolled(chat)
    end
  end)
end

--- Show the chat in the tab's chat column (|acp_nvim-layout|) with its prompt window below it
--- (|acp_nvim-prompt|); `focus` moves the cursor to the chat window.
function Chat:show(focus)
  local win = require('acp_nvim.chat.layout').show_chat(self.buf, focus)
  require('acp_nvim.prompt.window').open_below(self.prompt_buf, win, self:fitted_label())
  self:fit()
  return win
end

--- The prompt window's label, shortened at a word boundary to the chat's width.
function Chat:fitted_label()
  return self.fitted_width and fit.text(self.label, self.fitted_width) or self.label
end

--- The text width of the narrowest window showing the chat (nil when none shows it).
function Chat:text_width()
  local width
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    local info = vim.fn.getwininfo(win)[1]
    local cells = info and (info.width - info.textoff)
    if cells and (not width or cells < width) then
      width = cells
    end
  end
  return width
end

--- Fit the header and the prompt separator to the windows showing the chat (after a resize).
function Chat:fit()
  local width = self:text_width()
  if width == self.fitted_width then
    return
  end
  self.fitted_width = width
  self:draw_header()
  self:place_prompt()
  require('acp_nvim.prompt.window').relabel(self.prompt_buf, self:fitted_label())
end

--- Fit the chats' header and separator to their windows again after a resize (one autocommand
--- group for all).
function M.watch_resizes()
  local group = api.nvim_create_augroup('acp_nvim.chat.fit', { clear = true })
  api.nvim_create_autocmd({ 'WinResized', 'VimResized', 'BufWinEnter' }, {
    group = group,
    callback = function(args)
      for _, chat in pairs(M.chats) do
        if api.nvim_buf_is_valid(chat.buf) and (args.event ~= 'BufWinEnter' or args.buf == chat.buf) then
          chat:fit()
        end
      end
    end,
  })
end

--- Show the chat of `key` (creating its buffer, replaying `replay` ops into a new one).
function M.open(key, focus, replay)
  local chat = M.chats[key]
  if not chat or not api.nvim_buf_is_valid(chat.buf) then
    chat = Chat.new(key)
    chat:apply(replay or {})
  end
  chat:show(focus)
  if next(chat.gaps) then
    chat:fill_gaps()
  end
  return chat.buf
end

-- Session state: header, details line, queue --------------------------------------

local function details(key, s)
  local parts = { ('%s · %s'):format(s.agent or key, labels.state(s.state)) }
  if (s.mode or '') ~= '' then
    parts[#parts + 1] = 'mode ' .. s.mode
  end
  if (s.model or '') ~= '' then
    parts[#parts + 1] = 'model ' .. s.model
  end
  if (s.tokens or '') ~= '' then
    parts[#parts + 1] = s.tokens
  end
  local commands = type(s.command_info) == 'table' and #s.command_info or 0
  if commands > 0 then
    parts[#parts + 1] = ('%d commands (/ completes)'):format(commands)
  end
  return table.concat(parts, ' · ')
end

local function same_list(a, b)
  if #a ~= #b then
    return false
  end
  for i = 1, #a do
    if a[i] ~= b[i] then
      return false
    end
  end
  return true
end

--- The header line as it fits the chat's windows: the line itself stays whole (it is the buffer's
--- text), hidden behind its shortened form when it is wider than the narrowest window.
function Chat:draw_header()
  api.nvim_buf_clear_namespace(self.buf, ns_header, 0, 1)
  local header = api.nvim_buf_get_lines(self.buf, 0, 1, false)[1] or ''
  local width = self.fitted_width
  if width and api.nvim_strwidth(header) > width then
    api.nvim_buf_set_extmark(self.buf, ns_header, 0, 0, { end_col = #header, conceal = '',
      virt_text = { { fit.text(header, width), 'AcpNvimHeader' } }, virt_text_pos = 'inline' })
  end
  if self.details then
    self.header = api.nvim_buf_set_extmark(self.buf, ns, 0, 0, {
      id = self.header,
      virt_lines = { { { self.details, 'AcpNvimInfo' } } },
    })
  end
end

--- Reflect the session's title, details and queue in the buffer.
---@param s acp_nvim.SessionState
function Chat:set_state(s)
  local chat, key = self, self.key
  chat.session = s -- what the restart question names (acp_nvim.chat.actions)
  local title = (s.title or '') ~= '' and (' · ' .. s.title) or ''
  local header = ('# acp.nvim · %s%s'):format(key, title)
  if api.nvim_buf_get_lines(chat.buf, 0, 1, false)[1] ~= header then
    api.nvim_buf_set_lines(chat.buf, 0, 1, false, { header })
  end
  chat.details = details(key, s)
  vim.b[chat.buf].acp_nvim_state_label = labels.state(s.state) -- the window's statusline (layout.lua)
  chat:draw_header()
  local queue = type(s.queue) == 'table' and s.queue or {}
  local recovery = type(s.recovery) == 'string' and s.recovery or ''
  local offer = turn_keys.update(chat, s)
  if offer or not same_list(queue, chat.queue) or recovery ~= (chat.recovery or '') then
    chat.queue = queue
    chat.recovery = recovery
    chat:place_prompt()
  end
end

--- Reflect the state of session `key` in its chat (ignored without one; once closed, only its
--- commands are forgotten).
---@param s acp_nvim.SessionState
function M.set_state(key, s)
  local chat = M.chats[key]
  if chat then
    chat.command_info = not s.closed and type(s.command_info) == 'table' and s.command_info or nil
  end
  if chat and api.nvim_buf_is_valid(chat.buf) and not s.closed then
    chat:set_state(s)
  end
end

M.set_title = M.set_state -- the skeleton's name

return M
