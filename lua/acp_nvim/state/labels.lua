--- Words shown for the states Python sends (the statusline and the chat's details line).
local M = {}

local STATES = { waiting = 'waiting for you' }

--- The state as the user reads it ("waiting for you" rather than "waiting").
---@param state string|nil
function M.state(state)
  return STATES[state] or state or '?'
end

return M
