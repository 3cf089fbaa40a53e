--- The single entry point Python calls to apply a batch of render operations and states.
local M = {}

local spent = 0 -- ms the flushes took since Python last asked (took())

---@param ops table<string, acp_nvim.RenderOp[]> render operations per session key
---@param states table<string, acp_nvim.SessionState> new session states per key
function M.flush(ops, states)
  local began = vim.uv.hrtime()
  local chat = require('acp_nvim.chat')
  for key, list in pairs(ops) do
    chat.apply(key, list)
  end
  if next(states) then
    require('acp_nvim.state').apply(states)
  end
  spent = spent + (vim.uv.hrtime() - began) / 1e6
end

--- The ms the flushes took since the last call: Python sizes the next ones by it (the render
--- queue's barrier, answered once the flushes before it are applied).
function M.took()
  local ms = spent
  spent = 0
  return ms
end

--- A picker for a question from Python; the answer (0-based index, or nil) goes back by id.
function M.select(id, prompt, items, notes)
  local about = {} -- an item's description, beside it (a mode's, an option's, a value's)
  for i, item in ipairs(items) do
    about[item] = notes and notes[i] ~= nil and notes[i] ~= '' and (item .. ' — ' .. notes[i]) or nil
  end
  local format = next(about) and function(item) return about[item] or item end or nil
  vim.ui.select(items, { prompt = prompt, format_item = format }, function(_, index)
    require('acp_nvim.host').call.answer(id, index and tostring(index - 1) or vim.NIL)
  end)
end

return M
