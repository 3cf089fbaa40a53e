--- The prompt of a chat: its own buffer (acp://prompt/<agent>/<n>, filetype acp_prompt), shown in a
--- small window under the chat's (acp_nvim.prompt.window). Streaming goes to the chat buffer only, so
--- the prompt's undo history holds only what the user typed. Here: sending, the history of sent
--- prompts, completion of slash commands and @file mentions, and the keys that act on transcript blocks.
local M = {}

local api = vim.api

--- Prompts sent from any chat, oldest first (shared, like a shell history).
M.history = {}
M.HISTORY_MAX = 200

---@type table<integer, acp_nvim.Chat> the chats attached, by buffer (for the omnifunc)
local chats = setmetatable({}, { __mode = 'v' })

--- The text typed in the prompt.
function M.text(chat)
  local lines = api.nvim_buf_get_lines(chat.prompt_buf, 0, -1, false)
  return vim.trim(table.concat(lines, '\n'))
end

--- Close the undo block the user's typing is in: what comes next is an undo step of its own.
local function break_undo(chat)
  api.nvim_buf_call(chat.prompt_buf, function()
    vim.cmd('let &l:undolevels = &l:undolevels')
  end)
end

--- Replace the prompt's text, as one undo step (`u` brings back what was there).
local function set_text(chat, text)
  break_undo(chat)
  api.nvim_buf_set_lines(chat.prompt_buf, 0, -1, false, vim.split(text, '\n', { plain = true }))
  chat:place_prompt()
end

--- Put the cursor at the end of the prompt in the windows that show it.
local function cursor_to_end(chat)
  local last = api.nvim_buf_line_count(chat.prompt_buf)
  local col = #(api.nvim_buf_get_lines(chat.prompt_buf, last - 1, last, false)[1] or '')
  for _, win in ipairs(vim.fn.win_findbuf(chat.prompt_buf)) do
    api.nvim_win_set_cursor(win, { last, col })
  end
end

--- Add `text` at the end of the prompt, on its last line (:Ai paste).
function M.append(chat, text)
  local last = api.nvim_buf_line_count(chat.prompt_buf)
  local current = api.nvim_buf_get_lines(chat.prompt_buf, last - 1, last, false)[1] or ''
  local joined = current:match('%S') and (current:gsub('%s*$', '') .. ' ' .. text) or text
  break_undo(chat)
  api.nvim_buf_set_lines(chat.prompt_buf, last - 1, last, false, { joined })
  cursor_to_end(chat)
end

--- The prompt window of `chat`, opened under its chat window (shown first) when it is not there.
function M.show(chat, focus)
  local win = chat:show(false)
  local prompt_win = require('acp_nvim.prompt.window').open_below(chat.prompt_buf, win, chat.label)
  if focus then
    api.nvim_set_current_win(prompt_win or win)
  end
  return prompt_win
end

local function remember(text)
  if M.history[#M.history] ~= text then
    M.history[#M.history + 1] = text
  end
  if #M.history > M.HISTORY_MAX then
    table.remove(M.history, 1)
  end
end

--- Send the prompt's text to the session and clear the prompt (one undo step: `u` brings it back).
function M.send(chat)
  local text = M.text(chat)
  if text == '' then
    vim.notify('[acp.nvim] the prompt is empty: type in the prompt window under the chat', vim.log.levels.WARN)
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

--- Put the prompt of turn `turn` in the prompt of session `key`'s chat, to be edited (the cursor goes
--- there): the next send rewinds to before that turn and sends it from there (emptying the prompt sends
--- normally again).
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
  M.show(chat, true)
  chat.resubmit = { turn = turn }
  chat.history_pos, chat.draft = nil, nil
  set_text(chat, text)
  cursor_to_end(chat)
end

--- Replace the prompt with an older (`step` = -1) or newer (+1) sent prompt.
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
  cursor_to_end(chat)
end

--- Whether the cursor is in `chat`'s prompt (its buffer is the current one).
local function in_prompt(chat)
  return api.nvim_get_current_buf() == chat.prompt_buf
end

-- Completion (omnifunc) -------------------------------------------------------------

local function command_items(chat, base)
  local items = {}
  for _, cmd in ipairs(chat.command_info or {}) do
    local name, desc, hint = cmd, '', ''
    if type(cmd) == 'table' then
      name, desc, hint = cmd.name, cmd.description or '', cmd.hint or ''
    end
    if vim.startswith('/' .. name, base) then -- the input hint first in the menu: what to type after it
      local menu = hint ~= '' and (hint .. ' · ' .. desc) or desc
      local info = hint ~= '' and (desc .. '\ninput: ' .. hint) or desc
      items[#items + 1] = { word = '/' .. name, menu = menu, info = info }
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

--- 'omnifunc' of prompt buffers: "/command" at the start of the prompt, "@path" anywhere in it.
function M.omnifunc(findstart, base)
  local chat = chats[api.nvim_get_current_buf()]
  if findstart == 1 then
    local row, col = unpack(api.nvim_win_get_cursor(0))
    if not chat then
      return -3
    end
    local before = api.nvim_get_current_line():sub(1, col)
    local start = before:find('[@/][^%s]*$')
    if not start then
      return -3
    end
    local token = before:sub(start, start)
    if token == '/' and (row ~= 1 or before:sub(1, start - 1):find('%S')) then
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

--- `keymaps.open` (<CR>) in the chat: follow a "→ path" line, fold a ▸/▾ line, or show the
--- block under the cursor.
function M.open(chat)
  local row = api.nvim_win_get_cursor(0)[1] - 1
  local line = api.nvim_get_current_line()
  local path, lnum = line:match('^%s*→ (.-):(%d+)$')
  path = path or line:match('^%s*→ (.+)$')
  if path then
    require('acp_nvim.chat.opens').jump(path, tonumber(lnum))
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

--- `keymaps.open`: in the prompt <CR> sends; in the chat it opens what is under the cursor.
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

--- The "not reviewed" warning block under the cursor (in the chat), or nil.
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

--- Put prompt block `id` in the prompt to run it again from before its turn.
function M.edit(chat, id)
  require('acp_nvim.host').call.chat('edit_turn', chat.key, { block = id })
end

M.in_prompt = in_prompt

--- Make the prompt buffer of a new chat (chat.prompt_buf): completion, the session it belongs to
--- (acp_nvim.chat.actions maps its keys). The user's 'undolevels' applies: it is a buffer to edit.
---@param chat acp_nvim.Chat
function M.attach(chat)
  local buf = require('acp_nvim.kit.scratch').create({ name = 'acp://prompt/' .. chat.key, kind = 'prompt',
    buftype = 'nofile', bufhidden = 'hide', filetype = 'acp_prompt', lines = { '' } })
  chat.prompt_buf = buf
  chats[chat.buf], chats[buf] = chat, chat
  vim.b[chat.buf].acp_nvim_session = chat.key
  vim.b[buf].acp_nvim_session = chat.key
  vim.bo[buf].omnifunc = "v:lua.require'acp_nvim.prompt'.omnifunc"
  api.nvim_create_autocmd('BufWipeout', {
    buffer = chat.buf,
    callback = function()
      vim.schedule(function()
        require('acp_nvim.kit.scratch').wipe(buf)
      end)
    end,
  })
  api.nvim_create_autocmd({ 'TextChanged', 'TextChangedI' }, {
    buffer = buf,
    callback = function()
      if chat.resubmit and M.text(chat) == '' then -- emptied: the next prompt is sent as usual
        chat.resubmit = nil
        chat:place_prompt()
      end
    end,
  })
end

return M
