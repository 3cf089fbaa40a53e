--- The agent's questions (ACP elicitation, |acp_nvim-questions|): a form, or a link to open.
---
--- A form is a scratch buffer `acp://question/<agent>/<n>` opened in the chat's window column
--- (below the chat), never taking the cursor while the user types (acp_nvim.kit.guard; it takes it
--- once they are idle, unless `permissions.focus = 'never'`). It has the
--- agent's message, then one line per field, `<title>: <value>`; the user edits the value part
--- like any text. Type, choices, default and a required mark are virtual text at the end of the
--- line; `<CR>` on a choice line picks with vim.ui.select (a multi-select toggles one choice per
--- pick). `<C-s>` submits: Python checks the values and marks each field that does not validate
--- on its line with the reason, or closes the form. `q` declines; `:Ai cancel` cancels the turn
--- and with it the question. A link (url mode) shows the URL and its host; `y` opens it with
--- vim.ui.open, `n` or `q` declines. |:Ai-questions| lists the open questions and opens one.
local M = {}

local api = vim.api
local guard = require('acp_nvim.kit.guard')
local oneline = require('acp_nvim.kit.oneline')
local scratch = require('acp_nvim.kit.scratch')

local NS = api.nvim_create_namespace('acp_nvim_question')
local NS_FIELDS = api.nvim_create_namespace('acp_nvim_question_fields')
local NS_PROBLEMS = api.nvim_create_namespace('acp_nvim_question_problems')

---@class acp_nvim.Question one open question: its form buffer, its field marks, its window in the chat column
---@field id integer the ticket it answers
---@field q table what Python sent
---@field buf integer
---@field marks table<string, integer> the extmark of each field's line, by field key
---@field shown_at number when it was put before the user (ms, acp_nvim.kit.guard)
---@field sent boolean|nil
local Question = {}
Question.__index = Question

---@type table<integer, acp_nvim.Question> open questions by ticket id
M.open_questions = {}
---@type integer[] ticket ids in arrival order
M.order = {}

local function clean(text)
  return require('acp_nvim.question.permission').clean(text)
end

local function notify(text, level)
  require('acp_nvim.kit.notify').notify('[acp.nvim] ' .. text, level or vim.log.levels.INFO)
end

local function reach_hint()
  local focus = (require('acp_nvim.config.options').config.permissions or {}).focus
  return focus == 'never' and ':Ai questions' or 'comes when you pause'
end

local function forget(id)
  M.open_questions[id] = nil
  for i, other in ipairs(M.order) do
    if other == id then
      table.remove(M.order, i)
      break
    end
  end
end

function Question:close()
  forget(self.id)
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    if #api.nvim_list_wins() > 1 then
      pcall(api.nvim_win_close, win, true)
    end
  end
  scratch.wipe(self.buf)
end

function Question:answer(value)
  require('acp_nvim.host').call.answer(self.id, value)
end

-- -- lines ---------------------------------------------------------------------------------

local function prefix(field)
  return clean(field.title) .. ': '
end

local function scope_line(q)
  if q.scope == 'tool call' then
    return ('  for the tool call: %s'):format(clean(q.tool))
  end
  return ('  for the %s'):format(clean(q.scope))
end

local function header(q)
  local lines = { ('%s asks (question %d):'):format(clean(q.session), q.number), '' }
  for _, line in ipairs(vim.split(q.message or '', '\n', { plain = true })) do
    lines[#lines + 1] = '  ' .. clean(line)
  end
  lines[#lines + 1] = scope_line(q)
  lines[#lines + 1] = ''
  return lines
end

local function form_lines(q)
  local lines = header(q)
  local first = #lines
  for _, field in ipairs(q.fields) do
    lines[#lines + 1] = prefix(field) .. clean(field.value)
  end
  vim.list_extend(lines, { '', '  <C-s> submits · <CR> on a choice picks · q declines · :Ai cancel cancels' })
  return lines, first
end

local function url_lines(q)
  local lines = header(q)
  vim.list_extend(lines, {
    '  It asks you to open this link:', '', '    ' .. clean(q.url), '',
    '  host: ' .. clean(q.host ~= '' and q.host or '(none)'), '',
    '  y opens it in your browser · n or q declines',
  })
  return lines
end

local function field_hint(field)
  local parts = {}
  if field.required then
    parts[#parts + 1] = '* required'
  end
  parts[#parts + 1] = clean(field.hint)
  if field.value ~= '' then
    parts[#parts + 1] = 'default: ' .. clean(field.value)
  end
  if field.description ~= '' then
    parts[#parts + 1] = clean(field.description)
  end
  return '  ' .. table.concat(parts, ' · ')
end

function Question:draw_fields(first)
  self.marks = {}
  for i, field in ipairs(self.q.fields) do
    self.marks[field.key] = api.nvim_buf_set_extmark(self.buf, NS_FIELDS, first + i - 1, 0, {
      virt_text = { { field_hint(field), field.required and 'AcpNvimPromptLocked' or 'AcpNvimPromptHint' } },
      virt_text_pos = 'eol', right_gravity = false })
  end
end

-- -- reading the form back --------------------------------------------------------------------

function Question:row_of(field)
  local mark = self.marks[field.key]
  local pos = mark and api.nvim_buf_get_extmark_by_id(self.buf, NS_FIELDS, mark, {})
  return pos and pos[1]
end

function Question:value_of(field)
  local row = self:row_of(field)
  if not row then
    return ''
  end
  local line = api.nvim_buf_get_lines(self.buf, row, row + 1, false)[1] or ''
  local pre = prefix(field)
  if line:sub(1, #pre) == pre then
    return line:sub(#pre + 1)
  end
  local colon = line:find(': ', 1, true)
  return colon and line:sub(colon + 2) or line
end

function Question:set_value(field, value)
  local row = self:row_of(field)
  if not row then
    return
  end
  -- only the text of the line changes (set_lines would move the next field's mark onto this line)
  local line = api.nvim_buf_get_lines(self.buf, row, row + 1, false)[1] or ''
  local pre = prefix(field)
  local start = line:sub(1, #pre) == pre and #pre or 0
  api.nvim_buf_set_text(self.buf, row, start, row, #line, { start == 0 and (pre .. value) or value })
end

function Question:field_at_cursor()
  local row = api.nvim_win_get_cursor(0)[1] - 1
  for _, field in ipairs(self.q.fields) do
    if self:row_of(field) == row then
      return field
    end
  end
end

-- -- keys ------------------------------------------------------------------------------------

function Question:armed_by_time()
  local arm = (require('acp_nvim.config.options').config.permissions or {}).arm_ms or 500
  return guard.now() - self.shown_at >= arm
end

function Question:submit()
  if not self:armed_by_time() then
    return notify('keys wait a moment: the question just appeared')
  end
  local values = {}
  for _, field in ipairs(self.q.fields) do
    values[field.key] = self:value_of(field)
  end
  api.nvim_buf_clear_namespace(self.buf, NS_PROBLEMS, 0, -1)
  self.sent = true
  self:answer({ action = 'accept', values = values })
end

function Question:decline()
  local counts, wait = guard.press(self.shown_at)
  if not counts then
    return notify(('keys wait %.1f s more: the question just appeared, or you were typing'):format(wait / 1000))
  end
  self:close()
  self:answer({ action = 'decline' })
end

function Question:open_link()
  local counts, wait = guard.press(self.shown_at)
  if not counts then
    return notify(('keys wait %.1f s more: the question just appeared, or you were typing'):format(wait / 1000))
  end
  local ok, err = pcall(vim.ui.open, self.q.url)
  self:close()
  if not ok then
    notify('cannot open the link: ' .. tostring(err), vim.log.levels.ERROR)
    return self:answer({ action = 'decline' })
  end
  self:answer({ action = 'accept' })
end

local function picked_list(text)
  local list = {}
  for part in (text .. ','):gmatch('([^,]*),') do
    part = vim.trim(part)
    if part ~= '' then
      list[#list + 1] = part
    end
  end
  return list
end

function Question:pick()
  local field = self:field_at_cursor()
  if not field or #field.choices == 0 then
    return
  end
  if field.kind ~= 'multi' then
    return vim.ui.select(field.choices, { prompt = clean(field.title) }, function(choice)
      if choice and M.open_questions[self.id] then
        self:set_value(field, choice)
      end
    end)
  end
  local picked = picked_list(self:value_of(field))
  local items = {}
  for _, choice in ipairs(field.choices) do
    items[#items + 1] = (vim.tbl_contains(picked, choice) and '[x] ' or '[ ] ') .. choice
  end
  vim.ui.select(items, { prompt = clean(field.title) .. ' (picks toggle)' }, function(_, index)
    if not (index and M.open_questions[self.id]) then
      return
    end
    local choice = field.choices[index]
    local now = picked_list(self:value_of(field))
    if vim.tbl_contains(now, choice) then
      now = vim.tbl_filter(function(c) return c ~= choice end, now)
    else
      now[#now + 1] = choice
    end
    self:set_value(field, table.concat(now, ', '))
  end)
end

function Question:map_keys()
  local buf = self.buf
  local function map(modes, lhs, fn, desc)
    vim.keymap.set(modes, lhs, function() fn(self) end, { buffer = buf, nowait = true, desc = 'acp.nvim: ' .. desc })
  end
  if self.q.url ~= '' then
    map('n', 'y', Question.open_link, 'open the link')
    map('n', 'n', Question.decline, 'decline')
  else
    map({ 'n', 'i' }, '<C-s>', function(e)
      vim.cmd('stopinsert')
      e:submit()
    end, 'submit the answer')
    map('n', '<CR>', Question.pick, 'pick a choice')
  end
  map('n', 'q', Question.decline, 'decline the question')
end

-- -- windows ---------------------------------------------------------------------------------

local function chat_window(session)
  local chat = require('acp_nvim.chat').chats[session]
  local win = chat and api.nvim_buf_is_valid(chat.buf) and vim.fn.bufwinid(chat.buf) or -1
  return win ~= -1 and win or nil
end

--- Rows for a form of `count` lines: the whole form (its key hint is its last line), capped by the
--- screen so that the window it splits and the command line keep a few rows.
function M.window_height(count)
  local room = vim.o.lines - vim.o.cmdheight - (vim.o.laststatus > 0 and 2 or 1) - 4
  return math.max(1, math.min(count, room))
end

function Question:show_window(enter)
  local existing = vim.fn.bufwinid(self.buf)
  if existing ~= -1 then
    if enter then
      api.nvim_set_current_win(existing)
    end
    return existing
  end
  local height = M.window_height(api.nvim_buf_line_count(self.buf))
  local chat = chat_window(self.q.session)
  if chat and api.nvim_win_get_height(chat) - 2 < height then
    chat = nil -- the chat window (its prompt window below it) has no room: the tab's bottom has
  end
  local config = { split = 'below', win = chat or -1, height = height }
  local win = api.nvim_open_win(self.buf, enter, config)
  vim.wo[win].wrap = false
  vim.wo[win].winfixheight = true
  return win
end

local function open(id, q)
  guard.start()
  require('acp_nvim.kit.highlights').setup()
  q.fields = type(q.fields) == 'table' and q.fields or {}
  q.url = type(q.url) == 'string' and q.url or ''
  local lines, first
  if q.url ~= '' then
    lines = url_lines(q)
  else
    lines, first = form_lines(q)
  end
  local name = ('acp://question/%s/%d'):format(q.agent, q.number)
  local buf = scratch.create({ name = name, kind = 'question', buftype = 'nofile', bufhidden = 'hide',
    lines = lines, modifiable = q.url == '' })
  vim.b[buf].acp_nvim_session = q.session -- :Ai commands and notices know whose it is
  local entry = setmetatable({ id = id, q = q, buf = buf, marks = {}, shown_at = guard.now() }, Question)
  M.open_questions[id] = entry
  M.order[#M.order + 1] = id
  if first then
    entry:draw_fields(first)
  end
  api.nvim_buf_set_extmark(buf, NS, 0, 0, { line_hl_group = 'AcpNvimHeader' })
  entry:map_keys()
  local enter = guard.may_focus()
  entry:show_window(enter)
  local function to_first_field()
    if first and #q.fields > 0 then
      api.nvim_win_set_cursor(0, { first + 1, #prefix(q.fields[1]) })
    end
  end
  if enter then
    to_first_field()
  else
    vim.notify(oneline.fit(('[acp.nvim] %s asks: '):format(clean(q.session)), clean(q.message),
      ' (' .. reach_hint() .. ')'), vim.log.levels.INFO)
    -- once the user is idle the form takes the cursor (where it is shown; one they closed stays
    -- closed), its keys waiting `permissions.arm_ms` from then
    guard.when_idle(function()
      local win = M.open_questions[id] == entry and api.nvim_buf_is_valid(buf) and vim.fn.bufwinid(buf) or -1
      if win == -1 or win == api.nvim_get_current_win() then
        return false
      end
      entry.shown_at = guard.now()
      api.nvim_set_current_win(win)
      to_first_field()
      return true
    end)
  end
end

-- -- public ----------------------------------------------------------------------------------

--- A question from Python (``show_question``); one that cannot be shown is answered cancel.
function M.open(id, q)
  local ok, err = pcall(open, id, q)
  if ok then
    return
  end
  local entry = M.open_questions[id]
  if entry then
    entry:close()
  end
  notify(('cannot show a question (%s): answered cancel'):format(clean(err)), vim.log.levels.ERROR)
  require('acp_nvim.host').call.answer(id, { action = 'cancel' })
end

--- The answer did not validate: each field's reason on its line (key → reason).
function M.mark(id, problems)
  local entry = M.open_questions[id]
  if not (entry and api.nvim_buf_is_valid(entry.buf)) then
    return
  end
  entry.sent = false
  api.nvim_buf_clear_namespace(entry.buf, NS_PROBLEMS, 0, -1)
  local count = 0
  for _, field in ipairs(entry.q.fields) do
    local reason = problems[field.key]
    local row = reason and entry:row_of(field)
    if row then
      count = count + 1
      api.nvim_buf_set_extmark(entry.buf, NS_PROBLEMS, row, 0, { line_hl_group = 'AcpNvimPromptDisabled',
        virt_text = { { '  ✗ ' .. clean(reason), 'AcpNvimError' } }, virt_text_pos = 'eol' })
    end
  end
  notify(('question %d: %d answer%s to fix, marked on %s line%s'):format(entry.q.number, count,
    count == 1 and '' or 's', count == 1 and 'its' or 'their', count == 1 and '' or 's'), vim.log.levels.WARN)
end

--- The question was answered or closed elsewhere (accepted, the turn cancelled, the agent withdrew it).
function M.dismiss(id, reason)
  local entry = M.open_questions[id]
  if not entry then
    return
  end
  entry:close()
  if reason and reason ~= '' then
    notify(('question %d closed: %s'):format(entry.q.number, clean(reason)), vim.log.levels.WARN)
  elseif not entry.sent then
    notify(('question %d closed (the turn was cancelled or the session ended)'):format(entry.q.number))
  end
end

--- Go to question `id`: the user asked for it.
function M.go(id)
  local entry = M.open_questions[id]
  if entry then
    vim.cmd('stopinsert')
    entry.shown_at = math.min(entry.shown_at, guard.now())
    entry:show_window(true)
  end
end

--- :Ai questions: go to the only open question, or pick one.
function M.show()
  if #M.order == 0 then
    return notify('no question is open')
  elseif #M.order == 1 then
    return M.go(M.order[1])
  end
  local items = {}
  for _, id in ipairs(M.order) do
    local q = M.open_questions[id].q
    items[#items + 1] = ('%s · %s%s'):format(clean(q.session), clean(q.message),
      q.url ~= '' and (' (link to ' .. clean(q.host) .. ')') or '')
  end
  local ids = vim.deepcopy(M.order)
  vim.ui.select(items, { prompt = 'open questions' }, function(_, index)
    if index then
      M.go(ids[index])
    end
  end)
end

--- Whether the question in the current window would take a key pressed now (tests and the harness).
function M.armed()
  local buf = api.nvim_get_current_buf()
  for _, entry in pairs(M.open_questions) do
    if entry.buf == buf then
      return guard.armed(entry.shown_at)
    end
  end
  return false
end

--- Ids of the open questions, in arrival order (tests, statusline).
function M.list()
  return vim.deepcopy(M.order)
end

return M
