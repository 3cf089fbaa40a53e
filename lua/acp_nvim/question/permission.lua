--- Permission prompts for requests without a diff: a float with the tool's title, kind, command
--- or input and every option the agent offered. Requests queue in arrival order (the float's
--- title says "1/3"); `q` hides the prompt without answering; |:Ai-permissions| lists every pending
--- request, reviews included, and goes to the one picked.
---
--- Nothing is answered by accident (|acp_nvim-permission-keys|):
---   - the prompt enters its window only when the user is idle in normal mode; otherwise it shows
---     in the top-right corner and the cursor stays where they type (`:Ai permissions` or the chat's
---     `keymaps.permissions` key goes to it), and it enters by itself once they are idle (not with
---     `permissions.focus = 'never'`), its keys waiting `arm_ms` from then;
---   - its keys count only once it has been visible `permissions.arm_ms` with no key typed in the
---     `permissions.quiet_ms` before (acp_nvim.kit.guard); until then the last line says keys wait;
---   - an "always" answer shows the exact rule it stores and asks `y` first; an "always" option
---     that could store no rule no wider than the request is not offered (the prompt says why);
---   - the request is shown whole (Python escapes what does not print as itself), its long lines
---     cut into pieces that fit; no allow option is offered until every line has been on screen:
---     a request taller than the float must be scrolled through to its end (the winbar says so).
--- Text from the agent is shown with control characters made visible; option ids go back as sent.
---
--- The float is an acp_nvim.PermissionPrompt object (`M.prompt`, the only one: one float at a
--- time); the requests wait in acp_nvim.question.pending, with the reviews.
local M = {}

local api = vim.api
local float = require('acp_nvim.kit.float')
local oneline = require('acp_nvim.kit.oneline')
local guard = require('acp_nvim.kit.guard')
local options = require('acp_nvim.config.options')
local pending = require('acp_nvim.question.pending')
local review = require('acp_nvim.review')
local scratch = require('acp_nvim.kit.scratch')

---@class acp_nvim.PermissionEntry: acp_nvim.Pending
---@field q table                 the question (python/acp_nvim/nvim/editor.py `_question_table`)
---@field shown_at number?        when it was first put before the user (ms, acp_nvim.kit.guard)
---@field seen boolean?           every line has been on screen (allow is offered)
---@field seen_to integer?        the last line seen so far, from the top down

---@class acp_nvim.PermissionView
---@field entry acp_nvim.PermissionEntry
---@field confirm table?          the "always" option whose rule is being confirmed
---@field shown_at number
---@field note string?            said on the hint line instead of the hint

---@class acp_nvim.PermissionPrompt
---@field win integer?            the float
---@field buf integer?
---@field view acp_nvim.PermissionView? what the float shows
---@field stop_watch fun()?       stops redrawing the hint when the keys arm
local Prompt = {}
Prompt.__index = Prompt

---@return acp_nvim.PermissionPrompt
function Prompt.new()
  return setmetatable({}, Prompt)
end

--- The float (the registry of one).
M.prompt = Prompt.new()

local KIND_KEYS = { allow_once = 'a', allow_always = 'A', reject_once = 'r', reject_always = 'R' }
local ALWAYS = { allow_always = true, reject_always = true }
local NS = api.nvim_create_namespace('acp_nvim_permission')
local UNSEEN = ' ↓ scroll through the whole request (j, <C-d>, <C-f>): allow is not offered until you have seen it all'

--- `text` with control characters shown (a newline as ↵, others as ^X): one buffer line.
function M.clean(text)
  text = type(text) == 'string' and text or tostring(text or '')
  return (text:gsub('[%z\1-\31\127]', function(c)
    if c == '\n' then
      return '↵'
    elseif c == '\t' then
      return ' '
    elseif c == '\127' then
      return '^?'
    end
    return '^' .. string.char(c:byte() + 64)
  end))
end

--- The pending permission prompts, oldest first.
---@return acp_nvim.PermissionEntry[]
function M.pending()
  return pending.list('prompt')
end

local function find(id)
  return pending.find('prompt', id)
end

function Prompt:is_open()
  return self.win ~= nil and api.nvim_win_is_valid(self.win)
end

function Prompt:focused()
  return self:is_open() and api.nvim_get_current_win() == self.win
end


local function reach_hint()
  local key = (options.config.keymaps or {}).permissions
  local via = key and key ~= '' and (key .. ' in the chat or ') or ''
  return ('  %s:Ai permissions goes to this prompt (it does not take the keys you type)'):format(via)
end

-- -- lines -----------------------------------------------------------------------------

local function option_line(i, opt, q)
  local key = KIND_KEYS[opt.kind]
  local keys = ('[%d%s]'):format(i, key and ('/' .. key) or '')
  local line = ('  %-7s %s  (%s)'):format(keys, M.clean(opt.name), M.clean(opt.kind))
  if ALWAYS[opt.kind] then
    line = line .. (q.rules[opt.kind] and '  · shows the rule first' or '  · not offered')
  end
  return line
end

--- `text` cut into pieces of at most `width` display cells (a long line is never hidden past the edge).
function M.pieces(text, width)
  if api.nvim_strwidth(text) <= width then
    return { text }
  end
  local out, piece, used = {}, {}, 0
  for _, char in ipairs(vim.fn.split(text, '\\zs')) do
    local cells = api.nvim_strwidth(char)
    if used + cells > width and #piece > 0 then
      out[#out + 1] = table.concat(piece)
      piece, used = {}, 0
    end
    piece[#piece + 1] = char
    used = used + cells
  end
  out[#out + 1] = table.concat(piece)
  return out
end

local function add_wrapped(lines, text, indent)
  for i, piece in ipairs(M.pieces(M.clean(text), math.max(20, vim.o.columns - 8 - #indent))) do
    lines[#lines + 1] = (i == 1 and indent or (indent:sub(1, -3) .. '↪ ')) .. piece
  end
end

local function prompt_lines(entry)
  local q = entry.q
  local lines = { ('%s asks permission:'):format(M.clean(q.session)), '' }
  add_wrapped(lines, q.title, '  ')
  lines[#lines + 1] = '  kind: ' .. M.clean(q.kind)
  if q.detail ~= '' then
    lines[#lines + 1] = ''
    for _, l in ipairs(vim.split(q.detail, '\n', { plain = true })) do
      add_wrapped(lines, l, '    ')
    end
  end
  lines[#lines + 1] = ''
  local disabled = {}
  for i, opt in ipairs(q.options) do
    lines[#lines + 1] = option_line(i, opt, q)
    if ALWAYS[opt.kind] and not q.rules[opt.kind] then
      disabled[#disabled + 1] = #lines
    end
  end
  if #disabled > 0 then
    lines[#lines + 1] = '  "always" is not offered: ' .. M.clean(q.no_rule ~= '' and q.no_rule or 'no rule fits')
    disabled[#disabled + 1] = #lines
  end
  lines[#lines + 1] = ''
  local others = pending.count() - 1
  if others > 0 then
    lines[#lines + 1] = ('  %d more request%s waiting: :Ai permissions lists them'):format(others, others > 1 and 's' or '')
  end
  return lines, disabled
end

local function confirm_lines(entry, opt)
  local verdict = opt.kind == 'allow_always' and 'allow' or 'reject'
  local lines = { ('%s asks permission:'):format(M.clean(entry.q.session)), '' }
  add_wrapped(lines, entry.q.title, '  ')
  vim.list_extend(lines, { '', '  Remember this answer? This rule will be stored:', '' })
  add_wrapped(lines, entry.q.rules[opt.kind], '    ')
  vim.list_extend(lines, { '',
    '  It answers matching requests from now on without asking (:Ai rules lists and removes rules).',
    '  This request is answered "once" as well.', '',
    ('  y  remember and %s      n / <Esc>  back to the request'):format(verdict), '',
  })
  return lines, {}
end

function Prompt:hint_line()
  local view = self.view
  if not self:focused() then
    return reach_hint(), 'AcpNvimPromptHint'
  elseif view.note then
    return '  ' .. view.note, 'AcpNvimPromptLocked'
  elseif not guard.armed(view.shown_at) then
    return '  keys wait a moment: the prompt just appeared, or you were typing', 'AcpNvimPromptLocked'
  elseif view.confirm then
    return '  y stores the rule', 'AcpNvimPromptHint'
  elseif not view.entry.seen then
    return UNSEEN, 'AcpNvimPromptLocked'
  end
  return '  q hides this prompt (still pending); :Ai permissions shows it again', 'AcpNvimPromptHint'
end

-- -- the float -----------------------------------------------------------------------------

function Prompt:title()
  local _, index = find(self.view.entry.id)
  return (' acp.nvim · permission %d/%d '):format(index or 1, pending.count('prompt'))
end

--- Put the hint line (the last line) in place and colour it.
function Prompt:draw_hint()
  local buf = self.buf
  if not (buf and api.nvim_buf_is_valid(buf) and self.view) then
    return
  end
  local text, group = self:hint_line()
  local count = api.nvim_buf_line_count(buf)
  local bo = vim.bo[buf]
  bo.modifiable = true
  api.nvim_buf_set_lines(buf, count - 1, count, false, { text })
  bo.modifiable, bo.modified = false, false
  api.nvim_buf_clear_namespace(buf, NS, count - 1, count)
  api.nvim_buf_set_extmark(buf, NS, count - 1, 0, { line_hl_group = group })
end

--- Record how far the request has been on screen (every line from the top down to `seen_to`);
--- once that reaches the last line, allow options are offered.
function Prompt:check_seen()
  local view = self.view
  if not (view and self:is_open() and self.buf and api.nvim_buf_is_valid(self.buf)) then
    return
  end
  local entry = view.entry
  if view.confirm or entry.seen then
    return
  end
  local top, bottom = vim.fn.line('w0', self.win), vim.fn.line('w$', self.win)
  if top <= (entry.seen_to or 0) + 1 then
    entry.seen_to = math.max(entry.seen_to or 0, bottom)
  end
  if entry.seen_to >= api.nvim_buf_line_count(self.buf) then
    entry.seen = true
  end
  vim.wo[self.win].winbar = entry.seen and '' or UNSEEN
  self:draw_hint()
end

function Prompt:draw()
  local view = self.view
  local lines, disabled
  if view.confirm then
    lines, disabled = confirm_lines(view.entry, view.confirm)
  else
    lines, disabled = prompt_lines(view.entry)
  end
  lines[#lines + 1] = '' -- the hint line
  scratch.fill(self.buf, lines)
  api.nvim_buf_clear_namespace(self.buf, NS, 0, -1)
  for _, row in ipairs(disabled) do
    api.nvim_buf_set_extmark(self.buf, NS, row - 1, 0, { line_hl_group = 'AcpNvimPromptDisabled' })
  end
  self:draw_hint()
  float.fit(self.win, self:title(), not self:focused())
  self:check_seen()
end

function Prompt:close()
  if self.stop_watch then
    self.stop_watch()
    self.stop_watch = nil
  end
  if self:is_open() then
    api.nvim_win_close(self.win, true)
  end
  self.win, self.buf, self.view = nil, nil, nil
end

function Prompt:note(text)
  self.view.note = text
  self:draw_hint()
end

function Prompt:map_keys(buf)
  local function map(lhs, action)
    vim.keymap.set('n', lhs, function()
      self:press(action)
    end, { buffer = buf, nowait = true, desc = 'acp.nvim permission prompt' })
  end
  for i = 1, 9 do
    map(tostring(i), { index = i })
  end
  for kind, key in pairs(KIND_KEYS) do
    map(key, { kind = kind })
  end
  map('y', { confirm = true })
  map('n', { back = true })
  vim.keymap.set('n', 'q', function() self:hide() end, { buffer = buf, nowait = true, desc = 'acp.nvim: hide' })
  vim.keymap.set('n', '<Esc>', function() self:hide() end, { buffer = buf, nowait = true, desc = 'acp.nvim: hide' })
end

function Prompt:open_float(enter)
  require('acp_nvim.kit.highlights').setup()
  local buf = scratch.create({ kind = 'permission', buftype = 'nofile', bufhidden = 'wipe', lines = { '' },
    modifiable = false })
  self:map_keys(buf)
  self.buf = buf
  local config = float.config(buf, ' acp.nvim · permission ', not enter)
  self.win = api.nvim_open_win(buf, enter, config)
  vim.wo[self.win].wrap = false
  api.nvim_create_autocmd({ 'WinScrolled', 'CursorMoved' }, { buffer = buf, callback = function()
    self:check_seen()
  end })
  api.nvim_create_autocmd({ 'WinEnter', 'WinLeave' }, { buffer = buf, callback = function()
    vim.schedule(function()
      if self.view and self:is_open() then
        self:draw()
      end
    end)
  end })
  self.stop_watch = guard.watch(function() return self.view and self.view.shown_at end, function()
    self:draw_hint()
  end)
end

--- Show `entry` in the float (opened when needed; `enter` moves the cursor into it).
function Prompt:display(entry, enter)
  if not self:is_open() then
    self:close()
    self:open_float(enter)
  elseif enter and not self:focused() then
    api.nvim_set_current_win(self.win)
  end
  entry.shown_at = entry.shown_at or guard.now()
  self.view = { entry = entry, shown_at = entry.shown_at }
  vim.b[self.buf].acp_nvim_session = entry.q.session -- :Ai commands and notices know whose it is
  self:draw()
end

-- -- keys ----------------------------------------------------------------------------------

local function option_for(view, action)
  local opts = view.entry.q.options
  if action.index then
    return opts[action.index]
  end
  for _, opt in ipairs(opts) do
    if opt.kind == action.kind then
      return opt
    end
  end
end

function Prompt:confirm(opt)
  self.view = { entry = self.view.entry, confirm = opt, shown_at = guard.now() }
  self:draw()
end

function Prompt:back()
  self.view = { entry = self.view.entry, shown_at = guard.now() }
  self:draw()
end

--- A key of the float: `action` is { index = n } | { kind = k } | { confirm = true } | { back = true }.
function Prompt:press(action)
  local view = self.view
  if not view then
    return
  end
  local counts, wait = guard.press(view.shown_at)
  if not counts then
    return self:note(('keys wait %.1f s more: the prompt just appeared, or you were typing'):format(wait / 1000))
  end
  if view.confirm then
    if action.confirm then
      return M.choose(view.entry.id, view.confirm.id)
    elseif action.back then
      return self:back()
    end
    return self:note('y stores the rule and answers; n goes back')
  end
  local opt = option_for(view, action)
  if not opt then
    return
  elseif opt.kind:sub(1, 5) == 'allow' and not view.entry.seen then
    self:check_seen()
    if not view.entry.seen then
      return self:note('allow is not offered until the whole request has been on screen: scroll through it to the end')
    end
  end
  if ALWAYS[opt.kind] and not view.entry.q.rules[opt.kind] then
    return self:note('"always" is not offered: ' .. M.clean(view.entry.q.no_rule))
  elseif ALWAYS[opt.kind] then
    return self:confirm(opt)
  end
  M.choose(view.entry.id, opt.id)
end

--- `q`/<Esc>: hide the prompt (still pending); on the confirmation, go back to the request.
function Prompt:hide()
  if self.view and self.view.confirm then
    return self:back()
  end
  self:close()
end

--- `q`/<Esc> of the float.
function M.hide()
  M.prompt:hide()
end

-- -- public ----------------------------------------------------------------------------------

--- Go to prompt `entry` (the first queued one by default): the user asked for it.
function M.show_prompt(entry)
  entry = entry or pending.first('prompt')
  if not entry then
    return
  end
  vim.cmd('stopinsert')
  M.prompt:display(entry, true)
end

local function pending_items()
  local items = {}
  for _, entry in ipairs(M.pending()) do
    items[#items + 1] = { label = ('[%s] %s (%s)'):format(M.clean(entry.q.kind), M.clean(entry.q.title),
      M.clean(entry.q.session)), prompt = entry }
  end
  for _, r in ipairs(review.list()) do
    local files = r.files > 1 and (' · %d files'):format(r.files) or ''
    local label = ('[review%s] %s (%s)%s'):format(r.state == 'open' and ', open' or '', M.clean(r.title),
      M.clean(r.session), files)
    items[#items + 1] = { label = label, review = r.id }
  end
  return items
end

local function open_item(item)
  if item.prompt then
    M.show_prompt(item.prompt)
  else
    M.prompt:close()
    review.show(item.review)
  end
end

local function show_list(items)
  local lines = {}
  for i, item in ipairs(items) do
    lines[#lines + 1] = ('  %d. %s'):format(i, item.label)
  end
  vim.list_extend(lines, { '', '  number or <CR> opens one · q closes' })
  M.prompt:close()
  local buf = scratch.create({ kind = 'permission', buftype = 'nofile', bufhidden = 'wipe', lines = lines,
    modifiable = false })
  local win = float.centered(buf, (' acp.nvim · %d pending requests '):format(#items))
  local function close()
    if api.nvim_win_is_valid(win) then
      api.nvim_win_close(win, true)
    end
  end
  local function pick(item)
    close()
    open_item(item)
  end
  for i, item in ipairs(items) do
    vim.keymap.set('n', tostring(i), function() pick(item) end, { buffer = buf, nowait = true })
  end
  vim.keymap.set('n', '<CR>', function()
    local item = items[api.nvim_win_get_cursor(0)[1]]
    if item then
      pick(item)
    end
  end, { buffer = buf, nowait = true })
  vim.keymap.set('n', 'q', close, { buffer = buf, nowait = true })
  vim.keymap.set('n', '<Esc>', close, { buffer = buf, nowait = true })
end

--- :Ai permissions: go to the only pending request, or list them all to pick from.
function M.show()
  local items = pending_items()
  if #items == 0 then
    vim.notify('[acp.nvim] no permission request is pending', vim.log.levels.INFO)
  elseif #items == 1 then
    open_item(items[1])
  else
    show_list(items)
  end
end

local function normalise(q)
  q.options = type(q.options) == 'table' and q.options or {}
  q.rules = type(q.rules) == 'table' and q.rules or {}
  q.no_rule = type(q.no_rule) == 'string' and q.no_rule or ''
  q.detail = type(q.detail) == 'string' and q.detail or ''
  return q
end

local function ask(id, q)
  guard.start()
  local prompt = M.prompt
  pending.add('prompt', { id = id, q = normalise(q) })
  if prompt.view and prompt:is_open() then
    return prompt:draw() -- a prompt is up: the new one waits (the title and "more waiting" line count it)
  end
  local enter = guard.may_focus()
  prompt:display(pending.first('prompt'), enter)
  if not enter then
    local focus = (options.config.permissions or {}).focus
    vim.notify(oneline.fit(('[acp.nvim] %s asks: '):format(M.clean(q.session)), M.clean(q.title),
      focus == 'never' and ' (:Ai permissions)' or ' (comes when you pause)'), vim.log.levels.INFO)
    guard.when_idle(function()
      return prompt:enter_when_idle()
    end)
  end
end

--- The user is idle: the prompt shown beside them takes the cursor, its keys waiting
--- `permissions.arm_ms` from now. Not when it was hidden (`q`), answered, or is entered already.
function Prompt:enter_when_idle()
  if not (self.view and self:is_open()) or self:focused() or self.view.confirm then
    return false
  end
  local entry = self.view.entry
  if not find(entry.id) then
    return false
  end
  entry.shown_at = guard.now() -- it only now comes before the keys the user types
  self:display(entry, true)
  return true
end

--- A new request from Python: shown at once, beside the user when they are typing (or queued
--- behind the prompt that is up). A request that cannot be shown is answered with nothing
--- (``cancelled``), never left waiting.
function M.ask(id, q)
  local ok, err = pcall(ask, id, q)
  if ok then
    return
  end
  local entry = find(id)
  if entry then
    pending.remove(entry)
  end
  pcall(Prompt.close, M.prompt)
  require('acp_nvim.kit.notify').notify(('[acp.nvim] cannot show a permission request (%s): answered cancelled'):format(M.clean(err)),
    vim.log.levels.ERROR)
  require('acp_nvim.host').call.answer(id, vim.NIL)
  local first = pending.first('prompt')
  if first then
    pcall(Prompt.display, M.prompt, first, false)
  end
end

--- Show the next pending prompt in the float that is up (keeping where the cursor is), or close it.
function Prompt:next()
  local first = pending.first('prompt')
  if first and self:is_open() then
    first.shown_at = nil -- a new request in the same place: its keys wait again
    self:display(first, false)
  else
    self:close()
  end
end

--- Answer request `id` with option `option_id` and show the next one.
function M.choose(id, option_id)
  local entry = find(id)
  if not entry then
    return
  end
  pending.remove(entry)
  require('acp_nvim.host').call.answer(id, option_id)
  local prompt = M.prompt
  if prompt.view and prompt.view.entry.id == id then
    prompt:next()
  elseif prompt.view then
    prompt:draw()
  end
end

--- The request was answered elsewhere (cancelled turn): drop it.
function M.dismiss(id)
  local entry = find(id)
  if not entry then
    return
  end
  pending.remove(entry)
  local prompt = M.prompt
  if prompt.view and prompt.view.entry.id == id then
    prompt:next()
  elseif prompt.view and prompt:is_open() then
    prompt:draw()
  end
end

--- Whether the prompt that is up has been seen whole (its allow options are offered).
function M.seen()
  return M.prompt.view ~= nil and M.prompt.view.entry.seen == true
end

--- Whether the prompt that is up would take a key pressed now (for tests and the harness).
function M.armed()
  local prompt = M.prompt
  return prompt.view ~= nil and prompt:focused() and guard.armed(prompt.view.shown_at)
end

return M
