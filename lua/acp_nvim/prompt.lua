--- The prompt area of a chat buffer: sending, the history of sent prompts, completion of
--- slash commands and @file mentions, and the keys that act on transcript blocks.
local M = {}

local api = vim.api

--- Prompts sent from any chat, oldest first (shared, like a shell history).
M.history = {}
M.HISTORY_MAX = 200

---@type table<integer, acp_nvim.Chat> the chats attached, by buffer (for the omnifunc)
local chats = setmetatable({}, { __mode = 'v' })

local function prompt_row(chat)
  return chat:prompt_row()
end

--- The text typed in the prompt area.
function M.text(chat)
  local lines = api.nvim_buf_get_lines(chat.buf, prompt_row(chat), -1, false)
  return vim.trim(table.concat(lines, '\n'))
end

local function set_text(chat, text)
  local row = prompt_row(chat)
  api.nvim_buf_set_lines(chat.buf, row, -1, false, vim.split(text, '\n', { plain = true }))
  chat:place_prompt(row)
end

local function remember(text)
  if M.history[#M.history] ~= text then
    M.history[#M.history + 1] = text
  end
  if #M.history > M.HISTORY_MAX then
    table.remove(M.history, 1)
  end
end

--- Send the prompt area's text to the session and clear the area.
function M.send(chat)
  local text = M.text(chat)
  if text == '' then
    vim.notify('[acp.nvim] the prompt is empty: type below the separator line', vim.log.levels.WARN)
    return
  end
  remember(text)
  chat.history_pos, chat.draft = nil, nil
  local resubmit = chat.resubmit
  chat.resubmit = nil
  set_text(chat, '')
  if resubmit then -- an edited past prompt: rewind to before its turn, then send it (:help acp_nvim-rewind)
    require('acp_nvim.host').call.chat('resubmit', chat.key, { turn = resubmit.turn, text = text })
    return
  end
  require('acp_nvim.host').call.submit(chat.key, text)
end

--- Put the prompt of turn `turn` in the prompt area of session `key`'s chat, to be edited: the next
--- send rewinds to before that turn and sends it from there (emptying the area sends normally again).
function M.edit_turn(key, turn, text)
  local chat
  for _, attached in pairs(chats) do
    if attached.key == key then
      chat = attached
    end
  end
  if not chat or not api.nvim_buf_is_valid(chat.buf) then
    return
  end
  local win = chat:show(true)
  chat.resubmit = { turn = turn }
  chat.history_pos, chat.draft = nil, nil
  set_text(chat, text)
  local last = api.nvim_buf_line_count(chat.buf)
  api.nvim_win_set_cursor(win, { last, #(api.nvim_buf_get_lines(chat.buf, last - 1, last, false)[1] or '') })
end

--- Replace the prompt area with an older (`step` = -1) or newer (+1) sent prompt.
function M.browse(chat, step)
  local pos = (chat.history_pos or (#M.history + 1)) + step
  if pos < 1 or pos > #M.history + 1 then
    return
  end
  if not chat.history_pos then
    chat.draft = M.text(chat)
  end
  chat.history_pos = pos <= #M.history and pos or nil
  set_text(chat, M.history[pos] or chat.draft or '')
  local last = api.nvim_buf_line_count(chat.buf)
  if api.nvim_get_current_buf() == chat.buf then
    api.nvim_win_set_cursor(0, { last, #(api.nvim_buf_get_lines(chat.buf, last - 1, last, false)[1] or '') })
  end
end

local function in_prompt(chat)
  return api.nvim_win_get_cursor(0)[1] - 1 >= prompt_row(chat)
end

-- Completion (omnifunc) -------------------------------------------------------------

local function command_items(chat, base)
  local items = {}
  for _, cmd in ipairs(chat.command_info or {}) do
    local name, desc = cmd, ''
    if type(cmd) == 'table' then
      name, desc = cmd.name, cmd.description or ''
    end
    if vim.startswith('/' .. name, base) then
      items[#items + 1] = { word = '/' .. name, menu = desc, info = desc }
    end
  end
  return items
end

local function file_items(base)
  local items = {}
  for _, path in ipairs(vim.fn.getcompletion(base:sub(2), 'file')) do
    items[#items + 1] = { word = '@' .. path, menu = vim.fn.isdirectory(path) == 1 and 'dir' or 'file' }
  end
  return items
end

--- 'omnifunc' of chat buffers: "/command" at the start of the prompt, "@path" anywhere in it.
function M.omnifunc(findstart, base)
  local chat = chats[api.nvim_get_current_buf()]
  if findstart == 1 then
    local row, col = unpack(api.nvim_win_get_cursor(0))
    if not chat or row - 1 < prompt_row(chat) then
      return -3
    end
    local before = api.nvim_get_current_line():sub(1, col)
    local start = before:find('[@/][^%s]*$')
    if not start then
      return -3
    end
    local token = before:sub(start, start)
    if token == '/' and (row - 1 ~= prompt_row(chat) or before:sub(1, start - 1):find('%S')) then
      return -3 -- slash commands only at the very start of the prompt
    end
    return start - 1
  end
  if vim.startswith(base, '/') then
    return chat and command_items(chat, base) or {}
  end
  return file_items(base)
end

-- Keys -----------------------------------------------------------------------------

--- `keymaps.open` (<CR>) outside the prompt area: follow a "→ path" line, fold a ▸/▾ line, or show the
--- block under the cursor.
function M.open(chat)
  local row = api.nvim_win_get_cursor(0)[1] - 1
  local line = api.nvim_get_current_line()
  local path, lnum = line:match('^%s*→ (.-):(%d+)$')
  path = path or line:match('^%s*→ (.+)$')
  if path then
    require('acp_nvim.views').jump(path, tonumber(lnum))
    return
  end
  local id = chat:block_at(row)
  if id then
    -- a ▸ line (a subagent's calls, a compaction's summary) unfolds, a ▾ line folds back;
    -- `▸ terminal {id}` is a tool call's terminal, which <CR> opens
    local fold = (line:find('^%s*▸ ') or line:find('^%s*▾ ')) and not line:find('^%s*▸ terminal ')
    require('acp_nvim.host').call.chat(fold and 'fold' or 'open', chat.key, id)
  end
end

--- `keymaps.open` in the chat: in the prompt area <CR> sends; elsewhere it opens what is under the cursor.
function M.open_or_send(chat)
  if in_prompt(chat) then
    M.send(chat)
  else
    M.open(chat)
  end
end

function M.locations(chat)
  local id = chat:block_at(api.nvim_win_get_cursor(0)[1] - 1)
  require('acp_nvim.host').call.chat('locations', chat.key, id or 0)
end

--- The "not reviewed" warning block under the cursor (outside the prompt area), or nil.
function M.warning_at_cursor(chat)
  local id = not in_prompt(chat) and chat:block_at(api.nvim_win_get_cursor(0)[1] - 1)
  return id and chat.kinds[id] == 'error' and id or nil
end

--- Revert the file a "not reviewed" warning names (block `id`).
function M.revert(chat, id)
  require('acp_nvim.host').call.chat('revert', chat.key, id)
end

--- The prompt block whose heading (a "## You" line) is under the cursor, or nil.
function M.prompt_at_cursor(chat)
  local row = api.nvim_win_get_cursor(0)[1] - 1
  local id = not in_prompt(chat) and chat:block_at(row)
  return id and chat.kinds[id] == 'user' and chat:block_range(id) == row and id or nil
end

--- Put prompt block `id` in the prompt area to run it again from before its turn.
function M.edit(chat, id)
  require('acp_nvim.host').call.chat('edit_turn', chat.key, { block = id })
end

M.in_prompt = in_prompt

--- Set up a new chat buffer: completion, the session it belongs to (acp_nvim.chat_actions maps its keys).
---@param chat acp_nvim.Chat
function M.attach(chat)
  chats[chat.buf] = chat
  vim.b[chat.buf].acp_nvim_session = chat.key
  vim.bo[chat.buf].omnifunc = "v:lua.require'acp_nvim.prompt'.omnifunc"
  api.nvim_create_autocmd({ 'TextChanged', 'TextChangedI' }, {
    buffer = chat.buf,
    callback = function()
      if chat.resubmit and M.text(chat) == '' then -- emptied: the next prompt is sent as usual
        chat.resubmit = nil
        chat:place_prompt()
      end
    end,
  })
end

return M
