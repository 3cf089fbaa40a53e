--- Session states pushed from Python: the statusline, completion and User events read them here.
local M = {}

---@type table<string, table>
M.sessions = {}
M.current_key_cache = nil
local status_text = {} ---@type table<string, string>

local LABELS = { waiting = 'waiting for you' }

--- The state as the user reads it ("waiting for you" rather than "waiting").
function M.label(state)
  return LABELS[state] or state or '?'
end

-- Events fire on counters, not on state pairs: a turn that ends while a queued prompt starts
-- at once never shows 'idle' here, but its turn counter still moves.
local EVENTS = {
  function(old, new)
    local was = old and (old.started or old.started == nil and old.state ~= 'starting')
    local is = new.started or (new.started == nil and new.state ~= 'starting')
    return is and not was and 'AcpNvimSessionStart' or nil
  end,
  function(old, new)
    return (new.turns or 0) > ((old and old.turns) or 0) and 'AcpNvimTurnEnd' or nil
  end,
  function(old, new)
    local key = new.asked and 'asked' or 'pending'
    return (new[key] or 0) > ((old and old[key]) or 0) and 'AcpNvimPermissionRequest' or nil
  end,
}

local function fire(pattern, key, data)
  vim.api.nvim_exec_autocmds('User', {
    pattern = pattern,
    modeline = false,
    data = vim.tbl_extend('force', { session = key }, data),
  })
end

local function render(key, s)
  local parts = { key, M.label(s.state) }
  if (s.mode or '') ~= '' then
    parts[#parts + 1] = s.mode
  end
  if (s.queued or 0) > 0 then
    parts[#parts + 1] = s.queued .. ' queued'
  end
  if (s.tokens or '') ~= '' then
    parts[#parts + 1] = s.tokens
  end
  return table.concat(parts, ' · ')
end

--- A new state for session `key` (from Python); fires the User events it implies.
function M.update(key, new)
  local old = M.sessions[key]
  if new.closed then
    M.sessions[key], status_text[key] = nil, nil
    if M.current_key_cache == key then
      M.current_key_cache = nil
    end
    return
  end
  M.sessions[key] = new
  status_text[key] = render(key, new)
  if new.current then
    M.current_key_cache = key
  elseif M.current_key_cache == key then
    M.current_key_cache = nil
  end
  for _, check in ipairs(EVENTS) do
    local pattern = check(old, new)
    if pattern then
      fire(pattern, key, new)
    end
  end
end

--- The Python host exited: every session it ran is gone (shown as failed; a prompt needs :Ai new).
function M.host_gone()
  local states = {}
  for key, s in pairs(M.sessions) do
    states[key] = vim.tbl_extend('force', s, { state = 'failed' })
  end
  if next(states) then
    require('acp_nvim.ui').flush({}, states)
  end
end

function M.current_key()
  local key = M.current_key_cache
  if key and M.sessions[key] and M.sessions[key].current then
    return key
  end
  for k, s in pairs(M.sessions) do
    if s.current then
      M.current_key_cache = k
      return k
    end
  end
end

function M.current()
  local key = M.current_key()
  return key and M.sessions[key] or nil
end

--- "demo/1 · running · code · 1.2k/200k tokens" for the current session ('' when none).
--- A table lookup: cheap enough for every redraw.
function M.status()
  local key = M.current_key()
  return key and status_text[key] or ''
end

return M
