--- Session states pushed from Python: the statusline, completion and User events read them here.
local M = {}

--- A session's state as Python sends it (python/acp_nvim/nvim/app.py `describe`); only
--- `closed` when the session is gone.
---@class acp_nvim.SessionState
---@field closed boolean?        the session is gone (no other field is set)
---@field agent string
---@field state string           starting|idle|running|waiting|failed|closed|…
---@field mode string            '' when the agent has no modes
---@field modes string[]         mode ids (completion of :Ai mode)
---@field title string
---@field usage string
---@field queued integer         prompts waiting for the turn to end
---@field pending integer        questions waiting for the user
---@field commands string[]
---@field current boolean        the session :Ai commands go to
---@field policy string          the permission policy
---@field model string
---@field tokens string          '' when the agent reports no usage
---@field limits string          the usage meter ('' when the agent reports no limits)
---@field queue string[]         previews of the queued prompts
---@field command_info { name: string, description: string, hint: string }[] the agent's slash commands
---@field turns integer          turns ended so far
---@field stop_reason string?
---@field asked integer          permission questions shown so far
---@field started boolean        the agent's session exists
---@field recovery string        why the agent stopped or stopped answering ('' when it did not)
---@field subagents integer      tool calls that run a subagent and have not finished
---@field waiting string[]       what waits for you: review, prompt, question, conflict
---@field order integer          when the session was made (the board's and :Ai next's order)
---@field branch string          its worktree's branch ('' when none)
---@field failed string          why its last prompt or its agent failed ('' when nothing did)

---@type table<string, acp_nvim.SessionState>
M.sessions = {}
M.current_key_cache = nil
local status_text = {} ---@type table<string, string>
local waiting_count = 0 -- sessions waiting for you (the statusline shows those besides the current one)

--- The state as the user reads it ("waiting for you" rather than "waiting").
M.label = require('acp_nvim.state.labels').state

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

local function render(key, s)
  local parts = { key, M.label(s.state) }
  if (s.mode or '') ~= '' then
    parts[#parts + 1] = s.mode
  end
  if (s.queued or 0) > 0 then
    parts[#parts + 1] = s.queued .. ' queued'
  end
  if (s.subagents or 0) > 0 then
    parts[#parts + 1] = s.subagents .. (s.subagents == 1 and ' subagent' or ' subagents')
  end
  if (s.tokens or '') ~= '' then
    parts[#parts + 1] = s.tokens
  end
  if (s.limits or '') ~= '' then
    parts[#parts + 1] = s.limits
  end
  return table.concat(parts, ' · ')
end

local function count_waiting()
  local n = 0
  for _, s in pairs(M.sessions) do
    if s.state == 'waiting' then
      n = n + 1
    end
  end
  waiting_count = n
end

--- A new state for session `key` (from Python); fires the User events it implies.
function M.update(key, new)
  local old = M.sessions[key]
  if new.closed then
    M.sessions[key], status_text[key] = nil, nil
    if M.current_key_cache == key then
      M.current_key_cache = nil
    end
    count_waiting()
    return
  end
  M.sessions[key] = new
  status_text[key] = render(key, new)
  if new.current then
    M.current_key_cache = key
  elseif M.current_key_cache == key then
    M.current_key_cache = nil
  end
  count_waiting()
  for _, check in ipairs(EVENTS) do
    local pattern = check(old, new)
    if pattern then
      require('acp_nvim.state.events').fire(pattern, key, new)
    end
  end
  require('acp_nvim.state.notices').changed(key, old, new)
end

--- `changes` laid over the state kept for `key`, as a new table (the events compare old and new).
local function merged(key, changes)
  local s = {}
  for field, value in pairs(M.sessions[key] or {}) do
    s[field] = value
  end
  for field, value in pairs(changes) do
    s[field] = value
  end
  s.partial = nil
  return s
end

--- New states from Python: kept here (events fired), shown in each session's chat and statusline.
--- A state marked `partial` holds only the fields that changed (python/acp_nvim/nvim/chat/state_changes.py).
---@param states table<string, acp_nvim.SessionState|{ partial: true }>
function M.apply(states)
  local chat = require('acp_nvim.chat')
  local shown, waiting = M.status(), waiting_count
  for key, s in pairs(states) do
    if s.partial then
      s = merged(key, s)
    end
    M.update(key, s)
    chat.set_state(key, s)
  end
  -- redrawstatus! draws every window's statusline again; with many sessions streaming, states
  -- come often (tokens, the queue) and most change nothing a statusline shows
  if M.status() ~= shown or waiting_count ~= waiting then
    vim.cmd.redrawstatus({ bang = true })
  end
end

--- The Python host exited: every session it ran is gone (shown as failed; a prompt needs :Ai new).
function M.host_gone()
  local states = {}
  for key, s in pairs(M.sessions) do
    states[key] = vim.tbl_extend('force', s, { state = 'failed' })
  end
  if next(states) then
    M.apply(states)
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

--- How many sessions wait for you.
function M.waiting()
  return waiting_count
end

--- "demo/1 · running · code · 1.2k/200k tokens · 2 waiting" for the current session ('' when none),
--- with the count of the other sessions waiting for you. A table lookup: cheap enough for every redraw.
function M.status()
  local key = M.current_key()
  local text = key and status_text[key] or ''
  local current = key and M.sessions[key]
  local others = waiting_count - ((current and current.state == 'waiting') and 1 or 0)
  if others > 0 then
    text = text .. (text ~= '' and ' · ' or '') .. ('%d waiting'):format(others)
  end
  return text
end

table.insert(require('acp_nvim.host').on_gone, M.host_gone)

return M
