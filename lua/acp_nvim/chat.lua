--- Chat buffers: the transcript of a session, streamed in, with a prompt area at the bottom.
---
--- Layout: a header line, then transcript blocks, then the prompt area. Each block starts at
--- an extmark and ends with one blank separator line; the prompt area starts at its own
--- extmark. Render operations (from Python, see python/acp_nvim/core/transcript.py):
---   { "new", id, kind, lines }   { "append", id, text }   { "set", id, lines }
local M = {}

local api = vim.api
local ns = api.nvim_create_namespace('acp_nvim.chat')
local ns_hl = api.nvim_create_namespace('acp_nvim.chat.hl')
local ns_blocks = api.nvim_create_namespace('acp_nvim.chat.blocks') -- extmark id = block id

---@class acp_nvim.Chat
---@field buf integer
---@field key string
---@field order integer[]        block ids in buffer order
---@field index table<integer, integer> block id -> position in order
---@field kinds table<integer, string>
---@field prompt integer         extmark id of the prompt area's first line

---@type table<string, acp_nvim.Chat>
M.chats = {}

local place_prompt

local KIND_HL = {
  user = 'AcpNvimUser',
  heading = 'AcpNvimAgent',
  thought = 'AcpNvimThought',
  notice = 'AcpNvimNotice',
  info = 'AcpNvimNotice',
  error = 'AcpNvimError',
  turn_end = 'AcpNvimTurnEnd',
  plan = 'AcpNvimPlan',
}

local function row_of(chat, id)
  return api.nvim_buf_get_extmark_by_id(chat.buf, ns_blocks, id, {})[1]
end

local function prompt_row(chat)
  return api.nvim_buf_get_extmark_by_id(chat.buf, ns, chat.prompt, {})[1]
end

--- First row of the block and the row just past its blank separator.
local function block_range(chat, id)
  local pos = chat.index[id]
  local start = row_of(chat, id)
  local next_id = chat.order[pos + 1]
  local stop = next_id and row_of(chat, next_id) or prompt_row(chat)
  return start, stop
end

local function highlight(chat, id)
  local group = KIND_HL[chat.kinds[id]]
  if not group then
    return
  end
  local start, stop = block_range(chat, id)
  local only_first = chat.kinds[id] == 'user' or chat.kinds[id] == 'plan' or chat.kinds[id] == 'heading'
  api.nvim_buf_set_extmark(chat.buf, ns_hl, start, 0, {
    id = id,
    end_row = only_first and start + 1 or math.max(start + 1, stop - 1),
    end_col = 0,
    hl_group = group,
    hl_eol = true,
    priority = 90,
  })
end

local function op_new(chat, id, kind, lines)
  local row = prompt_row(chat)
  local with_blank = vim.list_extend(vim.list_slice(lines), { '' })
  api.nvim_buf_set_lines(chat.buf, row, row, false, with_blank)
  api.nvim_buf_set_extmark(chat.buf, ns_blocks, row, 0, { id = id, right_gravity = false })
  chat.order[#chat.order + 1] = id
  chat.index[id] = #chat.order
  chat.kinds[id] = kind
  highlight(chat, id)
end

local function op_append(chat, id, text)
  if not chat.index[id] then
    return
  end
  local _, stop = block_range(chat, id)
  local row = stop - 2
  local line = api.nvim_buf_get_lines(chat.buf, row, row + 1, false)[1] or ''
  api.nvim_buf_set_text(chat.buf, row, #line, row, #line, vim.split(text, '\n', { plain = true }))
  if chat.kinds[id] == 'thought' then
    highlight(chat, id)
  end
end

local function op_set(chat, id, lines)
  if not chat.index[id] then
    return
  end
  local start, stop = block_range(chat, id)
  api.nvim_buf_set_lines(chat.buf, start, stop - 1, false, lines)
  api.nvim_buf_set_extmark(chat.buf, ns_blocks, start, 0, { id = id, right_gravity = false })
  highlight(chat, id)
end

local OPS = { new = op_new, append = op_append, set = op_set }

--- Apply render operations to the chat of `key` (ignored when its buffer is gone).
function M.apply(key, ops)
  local chat = M.chats[key]
  if not chat or not api.nvim_buf_is_valid(chat.buf) then
    return
  end
  for _, op in ipairs(ops) do
    OPS[op[1]](chat, op[2], op[3], op[4])
  end
end

--- The text typed in the prompt area.
function M.prompt_text(key)
  local chat = M.chats[key]
  local lines = api.nvim_buf_get_lines(chat.buf, prompt_row(chat), -1, false)
  return vim.trim(table.concat(lines, '\n'))
end

--- Send the prompt area's text to the session and clear the area.
function M.send(key)
  local text = M.prompt_text(key)
  if text == '' then
    vim.notify('[acp.nvim] the prompt is empty: type below the separator line', vim.log.levels.WARN)
    return
  end
  local chat = M.chats[key]
  local row = prompt_row(chat)
  api.nvim_buf_set_lines(chat.buf, row, -1, false, { '' })
  place_prompt(chat, row)
  vim.fn.AcpNvimSubmit(key, text)
end

local function in_prompt(chat)
  return api.nvim_win_get_cursor(0)[1] - 1 >= prompt_row(chat)
end

local function set_keymaps(chat)
  local keys = require('acp_nvim').config.keymaps
  local function map(modes, lhs, rhs, desc)
    vim.keymap.set(modes, lhs, rhs, { buffer = chat.buf, desc = 'acp.nvim: ' .. desc, nowait = true })
  end
  map({ 'n', 'i' }, keys.send, function()
    M.send(chat.key)
  end, 'send the prompt')
  map('n', '<CR>', function()
    if in_prompt(chat) then
      M.send(chat.key)
    else
      vim.cmd('normal! \r')
    end
  end, 'send the prompt (in the prompt area)')
  map('n', keys.cancel, function()
    vim.cmd('Ai cancel')
  end, 'cancel the running turn')
end

--- (Re)place the prompt area's mark; it carries the separator as a virtual line above it.
place_prompt = function(chat, row, label)
  chat.label = label or chat.label
  chat.prompt = api.nvim_buf_set_extmark(chat.buf, ns, row, 0, {
    id = chat.prompt,
    virt_lines = { { { chat.label, 'AcpNvimPromptSeparator' } } },
    virt_lines_above = true,
  })
end

local SEPARATOR = '── prompt · %s or <CR> sends · %s cancels ──'

local function create(key)
  local buf = api.nvim_create_buf(false, true)
  api.nvim_buf_set_name(buf, 'acp://chat/' .. key)
  local bo = vim.bo[buf]
  bo.buftype = 'nofile'
  bo.bufhidden = 'hide'
  bo.swapfile = false
  bo.undolevels = -1 -- streamed output must not become undo steps the user could undo
  bo.filetype = 'acp_chat'
  pcall(vim.treesitter.start, buf, 'markdown')
  api.nvim_buf_set_lines(buf, 0, -1, false, { '# acp.nvim · ' .. key, '' })
  api.nvim_buf_set_extmark(buf, ns, 0, 0, { line_hl_group = 'AcpNvimHeader' })
  local keys = require('acp_nvim').config.keymaps
  local chat = { buf = buf, key = key, order = {}, index = {}, kinds = {} }
  place_prompt(chat, 1, SEPARATOR:format(keys.send, keys.cancel))
  M.chats[key] = chat
  set_keymaps(chat)
  api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    callback = function()
      M.chats[key] = nil
    end,
  })
  return chat
end

local function split_cmd()
  local chat_cfg = require('acp_nvim').config.chat
  local function size(value, total)
    return value > 1 and math.floor(value) or math.floor(total * value)
  end
  if chat_cfg.position == 'current' then
    return nil
  elseif chat_cfg.position == 'bottom' then
    return ('botright %dsplit'):format(size(chat_cfg.height, vim.o.lines))
  end
  local side = chat_cfg.position == 'left' and 'topleft' or 'botright'
  return ('%s %dvsplit'):format(side, size(chat_cfg.width, vim.o.columns))
end

local function show(chat, focus)
  local win = vim.fn.bufwinid(chat.buf)
  if win == -1 then
    local previous = api.nvim_get_current_win()
    local cmd = split_cmd()
    if cmd then
      vim.cmd(cmd)
    end
    win = api.nvim_get_current_win()
    api.nvim_win_set_buf(win, chat.buf)
    vim.wo[win].wrap = true
    vim.wo[win].linebreak = true
    vim.wo[win].conceallevel = 2
    api.nvim_win_set_cursor(win, { api.nvim_buf_line_count(chat.buf), 0 })
    if not focus then
      api.nvim_set_current_win(previous)
    end
  elseif focus then
    api.nvim_set_current_win(win)
  end
  return win
end

--- Show the chat of `key` (creating its buffer, replaying `replay` ops into a new one).
function M.open(key, focus, replay)
  local chat = M.chats[key]
  if not chat or not api.nvim_buf_is_valid(chat.buf) then
    chat = create(key)
    M.apply(key, replay or {})
  end
  show(chat, focus)
  return chat.buf
end

--- Reflect the session's title and state in the buffer-local winbar-free header.
function M.set_title(key, s)
  local chat = M.chats[key]
  if not chat or not api.nvim_buf_is_valid(chat.buf) or s.closed then
    return
  end
  local title = s.title ~= '' and (' · ' .. s.title) or ''
  api.nvim_buf_set_lines(chat.buf, 0, 1, false, { ('# acp.nvim · %s%s'):format(key, title) })
end

return M
