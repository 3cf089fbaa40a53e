--- The chat's keys for the next prompt and a failed one (:help acp_nvim-steering, acp_nvim-failures):
--- keymaps.steer switches the next prompt between steered and queued; after a failed prompt,
--- keymaps.retry / login / new_session / wait act on it, in the chat while a failure is
--- offered. The keys themselves are acp_nvim.chat.actions'.
local M = {}


--- Take the session's failure offer and steering choice; true when the chat's end mark must change.
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

--- The virtual lines above the chat's end mark for them: an edited past prompt, the failure offer, and the next
--- prompt's way when switched.
function M.lines(chat)
  local lines = {}
  if chat.resubmit then
    local key = require('acp_nvim.config.options').config.keymaps.send
    lines[#lines + 1] = { { ('  ↺ the prompt of turn %d, to edit · %s rewinds to before turn %d and sends it '
      .. '(:Ai rewind undo takes the rewind back) · empty the prompt to send normally'):format(chat.resubmit.turn,
      key, chat.resubmit.turn), 'AcpNvimQueue' } }
  end
  if (chat.failure_line or '') ~= '' then
    lines[#lines + 1] = { { '  ⚠ prompt failed · ' .. chat.failure_line, 'AcpNvimError' } }
  end
  if (chat.steer_note or '') ~= '' then
    local key = require('acp_nvim.config.options').config.keymaps.steer
    local way = chat.steer_note == 'steer' and 'steered into the running turn' or 'queued'
    lines[#lines + 1] = { { ('  ↪ the next prompt during a turn is %s (%s switches)'):format(way, key), 'AcpNvimQueue' } }
  end
  return lines
end

return M
