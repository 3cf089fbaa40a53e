--- Permission prompts for requests without a diff: a float listing every option the agent
--- offered. Requests queue; the first one is shown; `q` hides it without answering
--- (`:Ai permissions` shows it again).
local M = {}

local api = vim.api

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

local function lines_for(entry)
  local q = entry.q
  local lines = {
    ('%s wants to run a tool:'):format(q.session),
    '',
    ('  %s  (%s)'):format(q.title, q.kind),
  }
  if q.detail ~= '' then
    for _, l in ipairs(vim.split(q.detail, '\n', { plain = true })) do
      lines[#lines + 1] = '    ' .. l
    end
  end
  lines[#lines + 1] = ''
  for i, opt in ipairs(q.options) do
    local key = KIND_KEYS[opt.kind]
    lines[#lines + 1] = ('  [%d%s] %s'):format(i, key and ('/' .. key) or '', opt.name)
  end
  if #M.queue > 1 then
    lines[#lines + 1] = ''
    lines[#lines + 1] = ('  (%d more waiting)'):format(#M.queue - 1)
  end
  lines[#lines + 1] = '  q hides; :Ai permissions shows it again'
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

--- Show the first pending request (focusing the float).
function M.show()
  close_float()
  local entry = M.queue[1]
  if not entry then
    vim.notify('[acp.nvim] no permission request is pending', vim.log.levels.INFO)
    return
  end
  local lines = lines_for(entry)
  local buf = api.nvim_create_buf(false, true)
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = 'wipe'
  local width = 20
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l) + 2)
  end
  width = math.min(width, vim.o.columns - 4)
  M.win = api.nvim_open_win(buf, true, {
    relative = 'editor',
    row = math.floor((vim.o.lines - #lines) / 2),
    col = math.floor((vim.o.columns - width) / 2),
    width = width,
    height = #lines,
    style = 'minimal',
    border = 'rounded',
    title = ' acp.nvim · permission ',
    title_pos = 'center',
  })
  map_choices(buf, entry)
end

--- A new request from Python.
function M.ask(id, q)
  M.queue[#M.queue + 1] = { id = id, q = q }
  if #M.queue == 1 then
    M.show()
  end
end

local function remove(id)
  for i, entry in ipairs(M.queue) do
    if entry.id == id then
      table.remove(M.queue, i)
      return i
    end
  end
end

--- Answer request `id` with option `option_id` and show the next one.
function M.choose(id, option_id)
  local pos = remove(id)
  if not pos then
    return
  end
  vim.fn.AcpNvimAnswer(id, option_id)
  close_float()
  if M.queue[1] then
    M.show()
  end
end

--- The request was answered elsewhere (cancelled turn): drop it.
function M.dismiss(id)
  local pos = remove(id)
  if pos == 1 then
    close_float()
    if M.queue[1] then
      M.show()
    end
  end
end

return M
