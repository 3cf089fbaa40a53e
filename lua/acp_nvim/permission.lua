--- Permission prompts for requests without a diff: a float with the tool's title, kind, command
--- or input and every option the agent offered. Requests queue visibly (the float's title says
--- "1/3"); `q` hides the prompt without answering; |:Ai-permissions| lists every pending request,
--- reviews included, and shows the one picked.
local M = {}

local api = vim.api
local float = require('acp_nvim.kit.float')
local scratch = require('acp_nvim.kit.scratch')

---@type { id: integer, q: table }[]
M.queue = {}
M.win = nil

local KIND_KEYS = { allow_once = 'a', allow_always = 'A', reject_once = 'r', reject_always = 'R' }

local function close_float()
  if M.win and api.nvim_win_is_valid(M.win) then
    api.nvim_win_close(M.win, true)
  end
  M.win = nil
end

local function find(id)
  for i, entry in ipairs(M.queue) do
    if entry.id == id then
      return entry, i
    end
  end
end

local function total_pending()
  return #M.queue + #require('acp_nvim.review').list()
end

local function option_line(i, opt)
  local key = KIND_KEYS[opt.kind]
  local keys = ('[%d%s]'):format(i, key and ('/' .. key) or '')
  return ('  %-7s %s  (%s)'):format(keys, opt.name, opt.kind)
end

local function lines_for(entry)
  local q = entry.q
  local lines = { ('%s asks permission:'):format(q.session), '', '  ' .. q.title, '  kind: ' .. q.kind }
  if q.detail ~= '' then
    lines[#lines + 1] = ''
    for _, l in ipairs(vim.split(q.detail, '\n', { plain = true })) do
      lines[#lines + 1] = '    ' .. l
    end
  end
  lines[#lines + 1] = ''
  for i, opt in ipairs(q.options) do
    lines[#lines + 1] = option_line(i, opt)
  end
  lines[#lines + 1] = ''
  local others = total_pending() - 1
  if others > 0 then
    lines[#lines + 1] = ('  %d more request%s waiting: :Ai permissions lists them'):format(others, others > 1 and 's' or '')
  end
  lines[#lines + 1] = '  q hides this prompt (still pending); :Ai permissions shows it again'
  return lines
end

local function map_choices(buf, entry)
  local function choose(opt)
    return function()
      M.choose(entry.id, opt.id)
    end
  end
  for i, opt in ipairs(entry.q.options) do
    vim.keymap.set('n', tostring(i), choose(opt), { buffer = buf, nowait = true })
    local key = KIND_KEYS[opt.kind]
    if key then
      vim.keymap.set('n', key, choose(opt), { buffer = buf, nowait = true })
    end
  end
  vim.keymap.set('n', 'q', close_float, { buffer = buf, nowait = true })
  vim.keymap.set('n', '<Esc>', close_float, { buffer = buf, nowait = true })
end

local function open_float(lines, title)
  local buf = scratch.create({ kind = 'permission', buftype = 'nofile', bufhidden = 'wipe', lines = lines,
    modifiable = false })
  vim.cmd('stopinsert')
  M.win = float.centered(buf, title)
  return buf
end

--- Show prompt `entry` (the first queued one by default), focusing the float.
function M.show_prompt(entry)
  close_float()
  entry = entry or M.queue[1]
  if not entry then
    return
  end
  local _, index = find(entry.id)
  local title = (' acp.nvim · permission %d/%d '):format(index, #M.queue)
  map_choices(open_float(lines_for(entry), title), entry)
end

local function pending_items()
  local items = {}
  for _, entry in ipairs(M.queue) do
    items[#items + 1] = { label = ('[%s] %s (%s)'):format(entry.q.kind, entry.q.title, entry.q.session), prompt = entry }
  end
  for _, r in ipairs(require('acp_nvim.review').list()) do
    local files = r.files > 1 and (' · %d files'):format(r.files) or ''
    local label = ('[review%s] %s (%s)%s'):format(r.state == 'open' and ', open' or '', r.title, r.session, files)
    items[#items + 1] = { label = label, review = r.id }
  end
  return items
end

local function open_item(item)
  close_float()
  if item.prompt then
    M.show_prompt(item.prompt)
  else
    require('acp_nvim.review').show(item.review)
  end
end

--- :Ai permissions: the only pending request, or a list of them all to pick from.
function M.show()
  local items = pending_items()
  if #items == 0 then
    vim.notify('[acp.nvim] no permission request is pending', vim.log.levels.INFO)
    return
  elseif #items == 1 then
    return open_item(items[1])
  end
  local lines = {}
  for i, item in ipairs(items) do
    lines[#lines + 1] = ('  %d. %s'):format(i, item.label)
  end
  vim.list_extend(lines, { '', '  number or <CR> opens one · q closes' })
  close_float()
  local buf = open_float(lines, (' acp.nvim · %d pending requests '):format(#items))
  for i, item in ipairs(items) do
    vim.keymap.set('n', tostring(i), function() open_item(item) end, { buffer = buf, nowait = true })
  end
  vim.keymap.set('n', '<CR>', function()
    local item = items[api.nvim_win_get_cursor(0)[1]]
    if item then
      open_item(item)
    end
  end, { buffer = buf, nowait = true })
  vim.keymap.set('n', 'q', close_float, { buffer = buf, nowait = true })
  vim.keymap.set('n', '<Esc>', close_float, { buffer = buf, nowait = true })
end

--- A new request from Python: shown at once unless a prompt is already up (then it queues).
function M.ask(id, q)
  M.queue[#M.queue + 1] = { id = id, q = q }
  if #M.queue == 1 then
    M.show_prompt()
  elseif M.win and api.nvim_win_is_valid(M.win) then
    M.show_prompt(M.queue[1]) -- refresh the "more waiting" line and the 1/N title
  end
end

--- Answer request `id` with option `option_id` and show the next one.
function M.choose(id, option_id)
  local _, pos = find(id)
  if not pos then
    return
  end
  table.remove(M.queue, pos)
  vim.fn.AcpNvimAnswer(id, option_id)
  close_float()
  if M.queue[1] then
    M.show_prompt()
  end
end

--- The request was answered elsewhere (cancelled turn): drop it.
function M.dismiss(id)
  local _, pos = find(id)
  if not pos then
    return
  end
  table.remove(M.queue, pos)
  close_float()
  if M.queue[1] then
    M.show_prompt()
  end
end

return M
