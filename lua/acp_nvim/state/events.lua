--- The User events (|acp_nvim-events|): what their data holds, and firing them.
local M = {}

-- Left out of the data: the agent's slash commands are kilobytes that every event converted
-- (0.16 ms an event, and twenty turns that end together fire twenty); acp_nvim.state keeps them.
local NOT_IN_DATA = { commands = true, command_info = true }

--- What an event about session `key` carries: its state `s` (but its slash commands), the
--- session key as `session`, and `extra`.
function M.data(key, s, extra)
  local data = { session = key }
  for field, value in pairs(s) do
    if not NOT_IN_DATA[field] then
      data[field] = value
    end
  end
  for field, value in pairs(extra or {}) do
    data[field] = value
  end
  return data
end

--- Fire User event `pattern` about session `key` in state `s`, with `extra` in its data.
function M.fire(pattern, key, s, extra)
  vim.api.nvim_exec_autocmds('User', { pattern = pattern, modeline = false, data = M.data(key, s, extra) })
end

return M
