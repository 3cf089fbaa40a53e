--- Session states pushed from Python: the statusline, completion and User events read them here.
local M = {}

---@type table<string, table>
M.sessions = {}

local EVENTS = {
  -- transition checks: (old state, new state) -> User event pattern
  function(old, new)
    return old == nil and new.state ~= nil and 'AcpNvimSessionStart' or nil
  end,
  function(old, new)
    return old and (old.state == 'running' or old.state == 'waiting') and new.state == 'idle' and 'AcpNvimTurnEnd'
      or nil
  end,
  function(old, new)
    return (new.pending or 0) > ((old and old.pending) or 0) and 'AcpNvimPermissionRequest' or nil
  end,
}

local function fire(pattern, key, data)
  vim.api.nvim_exec_autocmds('User', { pattern = pattern, modeline = false, data = vim.tbl_extend('force', { session = key }, data) })
end

function M.update(key, new)
  local old = M.sessions[key]
  if new.closed then
    M.sessions[key] = nil
    return
  end
  M.sessions[key] = new
  for _, check in ipairs(EVENTS) do
    local pattern = check(old, new)
    if pattern then
      fire(pattern, key, new)
    end
  end
end

function M.current()
  for _, s in pairs(M.sessions) do
    if s.current then
      return s
    end
  end
end

function M.current_key()
  for key, s in pairs(M.sessions) do
    if s.current then
      return key
    end
  end
end

local LABELS = { waiting = 'waiting for you' }

function M.status()
  local key = M.current_key()
  if not key then
    return ''
  end
  local s = M.sessions[key]
  local parts = { key, LABELS[s.state] or s.state }
  if s.mode ~= '' then
    parts[#parts + 1] = s.mode
  end
  if (s.queued or 0) > 0 then
    parts[#parts + 1] = s.queued .. ' queued'
  end
  if s.usage ~= '' then
    parts[#parts + 1] = s.usage
  end
  return table.concat(parts, ' · ')
end

return M
