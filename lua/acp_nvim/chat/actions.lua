--- The chat's actions (:help acp_nvim-plug): each is a `<Plug>(AcpNvim…)` mapping, defined in
--- plugin/acp_nvim.lua, and by default a key of the chat buffer (`keymaps.*`) that runs the same code.
--- No default key is a command Vim has in normal mode (:help acp_nvim-keys): `u`, `<C-r>`, `e`, `R`
--- typed in the chat from habit do what Vim does. A restart asks first.
local M = {}

local api = vim.api

local function prompt()
  return require('acp_nvim.prompt')
end

local function host()
  return require('acp_nvim.host')
end

--- One line that says why a key did nothing (no "Press ENTER", nothing kept in :messages).
local function say(text)
  api.nvim_echo({ { '[acp.nvim] ' .. text, 'WarningMsg' } }, false, {})
end

--- A failed prompt's offer (:help acp_nvim-failures) includes `action`, and the cursor is in the chat.
local function offered(chat, action)
  local failure = chat.failure
  return type(failure) == 'table' and type(failure.actions) == 'table' and vim.tbl_contains(failure.actions, action)
    and not prompt().in_prompt(chat)
end

local function failure_action(action, plug, desc)
  return {
    plug = plug,
    modes = { 'n' },
    desc = 'after a failed prompt: ' .. desc,
    chat = true,
    ready = function(chat)
      return offered(chat, action) or nil
    end,
    why_not = 'no failed prompt offers this here (:help acp_nvim-failures)',
    run = function(chat)
      if action == 'login' then
        vim.cmd('Ai login')
      else
        host().call.chat(action, chat.key)
      end
    end,
  }
end

--- Each action, by its `keymaps` name (send_cr, which has no option, is <CR> in the prompt).
---   plug:    the <Plug>(AcpNvim…) name
---   chat:    acts on the chat of the current buffer (its <Plug> says so elsewhere)
---   ready:   (chat) → a truthy value when there is something to act on (given to run), else nil
---   run:     (chat, ready's value)
M.actions = {
  send = { plug = 'Send', modes = { 'n', 'i' }, desc = 'send the prompt', chat = true, run = function(chat)
    prompt().send(chat)
  end },
  send_cr = { modes = { 'n' }, desc = 'send the prompt (in the prompt)', chat = true, run = function(chat)
    if prompt().in_prompt(chat) then
      prompt().send(chat)
    else
      vim.cmd('normal! ' .. vim.v.count1 .. '\r')
    end
  end },
  open = { plug = 'Open', modes = { 'n' }, chat = true,
    desc = 'open the block under the cursor, unfold a ▸ line (in the prompt: send)',
    run = function(chat)
      if not require('acp_nvim.chat.media').open_here(chat) then
        prompt().open_or_send(chat)
      end
    end },
  cancel = { plug = 'Cancel', modes = { 'n' }, desc = 'cancel the running turn (:Ai cancel)', run = function(chat)
    if chat then
      api.nvim_buf_call(chat.buf, function()
        vim.cmd('Ai cancel')
      end)
    else
      vim.cmd('Ai cancel')
    end
  end },
  history_prev = { plug = 'HistoryPrev', modes = { 'n', 'i' }, desc = 'previous sent prompt', chat = true,
    run = function(chat)
      prompt().browse(chat, -1)
    end },
  history_next = { plug = 'HistoryNext', modes = { 'n', 'i' }, desc = 'next sent prompt', chat = true,
    run = function(chat)
      prompt().browse(chat, 1)
    end },
  locations = { plug = 'Locations', modes = { 'n' }, desc = 'tool call locations to the quickfix list', chat = true,
    run = function(chat)
      prompt().locations(chat)
    end },
  permissions = { plug = 'Permissions', modes = { 'n', 'i' },
    desc = 'go to the pending permission prompt or review (:Ai permissions)', run = function()
      require('acp_nvim.question.permission').show()
    end },
  restart = { plug = 'Restart', modes = { 'n' }, chat = true,
    desc = 'restart the agent and reopen this session, after asking (:Ai restart)', run = function(chat)
      M.restart(chat)
    end },
  steer = { plug = 'Steer', modes = { 'n', 'i' }, desc = 'the next prompt during a turn: steer or queue', chat = true,
    run = function(chat)
      host().call.chat('steer', chat.key)
    end },
  retry = failure_action('retry', 'Retry', 'send it again'),
  login = failure_action('login', 'Login', ':Ai login'),
  new_session = failure_action('new_session', 'NewSession', 'a new session that gets the prompt'),
  wait = failure_action('wait', 'Wait', 'retry when the usage limit resets'),
  next_waiting = { plug = 'NextWaiting', modes = { 'n' }, desc = 'the next session waiting for you (:Ai next)',
    run = function()
      vim.cmd('Ai next')
    end },
  prev_waiting = { plug = 'PrevWaiting', modes = { 'n' }, desc = 'the previous session waiting for you (:Ai prev)',
    run = function()
      vim.cmd('Ai prev')
    end },
  edit_prompt = { plug = 'EditPrompt', modes = { 'n' }, chat = true,
    desc = 'on a "## You" line: edit the prompt and run it again from before its turn',
    ready = function(chat)
      return prompt().prompt_at_cursor(chat)
    end,
    why_not = 'the cursor is not on a "## You" line',
    run = function(chat, id)
      prompt().edit(chat, id)
    end },
  revert = { plug = 'Revert', modes = { 'n' }, chat = true, desc = 'on a "not reviewed" warning: revert the file',
    ready = function(chat)
      return prompt().warning_at_cursor(chat)
    end,
    why_not = 'the cursor is not on a "not reviewed" warning',
    run = function(chat, id)
      prompt().revert(chat, id)
    end },
}

---@type table<integer, acp_nvim.Chat> the chats whose keys are mapped, by buffer
local chats = setmetatable({}, { __mode = 'v' })

local function chat_here()
  return chats[api.nvim_get_current_buf()]
end

--- Run action `name` as its <Plug> mapping does: on the chat of the current buffer.
function M.plug(name)
  local action = M.actions[name]
  local chat = chat_here()
  if action.chat and not chat then
    return say(('<Plug>(AcpNvim%s) works in a chat buffer (:Ai opens one)'):format(action.plug))
  end
  local value = true
  if action.ready then
    value = action.ready(chat)
    if not value then
      return say(action.why_not)
    end
  end
  action.run(chat, value)
end

--- Whether `lhs` starts with a leader (or is a <Plug>): typed when nothing is there to act on, the
--- keys after the leader would run Vim's commands (`\r` would replace a character).
local function own_key(lhs)
  local head = lhs:lower()
  return vim.startswith(head, '<leader>') or vim.startswith(head, '<localleader>') or vim.startswith(head, '<plug>')
end

--- Map `lhs` in `chat`'s buffer (or `buf`: its prompt's) to action `name` ('' maps nothing). An action that may have nothing to
--- act on (a failure's keys, edit_prompt, revert) lets a key Vim uses itself do what Vim does then,
--- with its count; a leader key says why it did nothing instead.
function M.map(chat, name, lhs, buf)
  if (lhs or '') == '' then
    return
  end
  local action = M.actions[name]
  local opts = { buffer = buf or chat.buf, nowait = true, desc = 'acp.nvim: ' .. action.desc }
  if name == 'open' and lhs ~= '<CR>' then
    vim.keymap.set('n', lhs, function()
      if prompt().in_prompt(chat) then
        vim.cmd('normal! ' .. vim.keycode(lhs))
      elseif not require('acp_nvim.chat.media').open_here(chat) then
        prompt().open(chat)
      end
    end, opts)
    return
  end
  if not action.ready then
    vim.keymap.set(action.modes, lhs, function()
      action.run(chat, true)
    end, opts)
    return
  end
  opts.expr = true
  vim.keymap.set(action.modes, lhs, function()
    local value = action.ready(chat)
    if value then
      vim.schedule(function() -- an expression mapping may not change buffers
        action.run(chat, value)
      end)
      return ''
    end
    if own_key(lhs) then
      vim.schedule(function()
        say(action.why_not)
      end)
      return ''
    end
    return lhs -- the count typed before it still applies
  end, opts)
end

--- Map `chat`'s keys (keymaps.*) in its buffer and in its prompt's.
function M.attach(chat)
  chats[chat.buf] = chat
  local keys = require('acp_nvim.config.options').config.keymaps
  for _, name in ipairs({ 'send', 'open', 'cancel', 'locations', 'permissions', 'restart', 'steer', 'retry', 'login',
    'new_session', 'wait', 'edit_prompt', 'revert' }) do
    M.map(chat, name, keys[name])
  end
  local buf = chat.prompt_buf
  chats[buf] = chat
  for _, name in ipairs({ 'send', 'cancel', 'history_prev', 'history_next', 'permissions', 'restart', 'steer' }) do
    M.map(chat, name, keys[name], buf)
  end
  M.map(chat, 'send_cr', '<CR>', buf)
end

--- Ask before restarting the agent of session `key` (`agent`; `running`: a turn is under way): a restart
--- ends the process, and with it a running turn. `on_yes` runs when the answer is to restart.
function M.confirm_restart(key, agent, running, on_yes)
  local ends = running and 'Its running turn is cancelled and its agent process is ended'
    or 'Its agent process is ended'
  local question = ('Restart %s (session %s)? %s; the session reopens in a new process.'):format(agent, key, ends)
  vim.ui.select({ 'Restart ' .. agent, 'Do not restart' }, { prompt = question, kind = 'acp_nvim.restart' },
    function(_, index)
      if index == 1 then
        on_yes()
      end
    end)
end

--- The restart key: ask, then :Ai restart from `chat`.
function M.restart(chat)
  local s = chat.session or {}
  local agent = type(s.agent) == 'string' and s.agent ~= '' and s.agent or chat.key
  M.confirm_restart(chat.key, agent, s.state == 'running', function()
    if api.nvim_buf_is_valid(chat.buf) then
      api.nvim_buf_call(chat.buf, function()
        vim.cmd('Ai restart')
      end)
    end
  end)
end

return M
