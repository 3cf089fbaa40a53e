--- The chat's keys for the next prompt and a failed one (:help acp_nvim-steering, acp_nvim-failures):
--- keymaps.steer switches the next prompt between steered and queued; after a failed prompt,
--- keymaps.retry / login / new_session / wait act on it. Those four are plain normal-mode keys
--- (R, L, N, W): they act only outside the prompt area while a failure is offered, and do what
--- they always do otherwise.
local M = {}

local api = vim.api

local ACTIONS = { retry = 'retry', login = 'login', new_session = 'new_session', wait = 'wait' }

local function offered(chat, action)
  local failure = chat.failure
  if type(failure) ~= 'table' or type(failure.actions) ~= 'table' then
    return false
  end
  return vim.tbl_contains(failure.actions, action)
end

local function in_prompt(chat)
  return api.nvim_win_get_cursor(0)[1] - 1 >= chat:prompt_row()
end

local function run(chat, action)
  if action == 'login' then
    vim.cmd('Ai login')
  else
    require('acp_nvim.host').call.chat(action, chat.key)
  end
end

local function action_key(chat, action, lhs)
  vim.keymap.set('n', lhs, function()
    if offered(chat, action) and not in_prompt(chat) then
      vim.schedule(function()
        run(chat, action)
      end)
      return ''
    end
    return lhs -- the count typed before it still applies
  end, { buffer = chat.buf, expr = true, nowait = true, desc = 'acp.nvim: after a failed prompt: ' .. action })
end

--- Map the keys in `chat`'s buffer.
function M.attach(chat)
  local keys = require('acp_nvim.options').config.keymaps
  if (keys.steer or '') ~= '' then
    vim.keymap.set({ 'n', 'i' }, keys.steer, function()
      require('acp_nvim.host').call.chat('steer', chat.key)
    end, { buffer = chat.buf, nowait = true, desc = 'acp.nvim: the next prompt during a turn: steer or queue' })
  end
  for action in pairs(ACTIONS) do
    if (keys[action] or '') ~= '' then
      action_key(chat, action, keys[action])
    end
  end
end

--- Take the session's failure offer and steering choice; true when the prompt area must change.
function M.update(chat, s)
  local failure = type(s.failure) == 'table' and s.failure or nil
  local line = failure and (failure.title .. ' · ' .. (failure.line or '') .. (failure.waiting and ' · waiting' or '')) or ''
  local steer = s.steer_flipped == true and s.steer or ''
  if line == (chat.failure_line or '') and steer == (chat.steer_note or '') then
    chat.failure = failure
    return false
  end
  chat.failure, chat.failure_line, chat.steer_note = failure, line, steer
  return true
end

--- The prompt area's virtual lines for them: an edited past prompt, the failure offer, and the next
--- prompt's way when switched.
function M.lines(chat)
  local lines = {}
  if chat.resubmit then
    local key = require('acp_nvim.options').config.keymaps.send
    lines[#lines + 1] = { { ('  ↺ the prompt of turn %d, to edit · %s rewinds to before turn %d and sends it '
      .. '(:Ai rewind undo takes the rewind back) · empty the prompt to send normally'):format(chat.resubmit.turn,
      key, chat.resubmit.turn), 'AcpNvimQueue' } }
  end
  if (chat.failure_line or '') ~= '' then
    lines[#lines + 1] = { { '  ⚠ prompt failed · ' .. chat.failure_line, 'AcpNvimError' } }
  end
  if (chat.steer_note or '') ~= '' then
    local key = require('acp_nvim.options').config.keymaps.steer
    local way = chat.steer_note == 'steer' and 'steered into the running turn' or 'queued'
    lines[#lines + 1] = { { ('  ↪ the next prompt during a turn is %s (%s switches)'):format(way, key), 'AcpNvimQueue' } }
  end
  return lines
end

return M
