--- Keys that answer a question (a permission prompt, a review's verdict keys) count only when the
--- user meant them: the question has been visible for `permissions.arm_ms`, and no key was typed
--- in the `permissions.quiet_ms` before the one that answers. A question never enters its window
--- while the user types (`busy()`): it is shown beside them, and `:Ai permissions` goes to it.
--- Typing is watched by one `vim.on_key` callback (`start()`), which records two times and nothing
--- else: the keys themselves are never looked at.
local M = {}

local uv = vim.uv or vim.loop

--- Times (ms, monotonic) of the last key the user typed and of the one before it.
M.last = -math.huge
M.before = -math.huge

local ns
local NORMAL = { n = true, nt = true }
--- True from a typed key's `on_key` event until the event loop next runs scheduled work. A key's
--- mapping runs in the same input cycle as its event, before that: while this is set, the last key
--- recorded is the one being answered. (A clock window for this once failed on a loaded machine,
--- where the two can be further apart than any window is wide.)
local own_key = false
local function settle_own_key()
  own_key = false
end

function M.now()
  return uv.hrtime() / 1e6
end

local function settings()
  local config = require('acp_nvim.options').config.permissions or {}
  return config.arm_ms or 500, config.quiet_ms or 300, config.focus or 'idle'
end

--- Watch typing (idempotent). Only typed keys count, not keys a plugin feeds.
function M.start()
  if ns then
    return
  end
  ns = vim.api.nvim_create_namespace('acp_nvim_typing')
  vim.on_key(function(_, typed)
    if typed == nil or typed ~= '' then
      M.before, M.last = M.last, M.now()
      if not own_key then
        own_key = true
        vim.schedule(settle_own_key)
      end
    end
  end, ns)
end

--- Whether the user is typing: not in normal mode, or a key came within `quiet_ms`.
function M.busy()
  local mode = vim.api.nvim_get_mode()
  if mode.blocking or not NORMAL[mode.mode] then
    return true
  end
  local _, quiet = settings()
  return M.now() - M.last < quiet
end

--- Whether a question may enter its window now (`permissions.focus`, and the user is not typing).
function M.may_focus()
  local _, _, focus = settings()
  return focus ~= 'never' and not M.busy()
end

--- For a key pressed now on a question shown at `shown_at` (ms): does it count? If not, the ms
--- until one would (at least).
---@return boolean counts, number wait_ms
function M.press(shown_at)
  local arm, quiet = settings()
  local now = M.now()
  local own = own_key -- this key's own event is the last one recorded
  local press = own and M.last or now
  local before = own and M.before or M.last
  local wait = math.max(shown_at + arm - press, before + quiet - press)
  return wait <= 0, math.max(wait, 0)
end

--- Whether a key pressed now (after a pause) would count for a question shown at `shown_at`.
function M.armed(shown_at)
  local arm, quiet = settings()
  local now = M.now()
  return now - shown_at >= arm and now - M.last >= quiet
end

--- Call `on_change(armed)` whenever `armed(shown_at())` flips, until the returned stop function is
--- called (a 100 ms timer; `shown_at()` returning nil stops it too).
function M.watch(shown_at, on_change)
  local timer = uv.new_timer()
  local state
  local function stop()
    if timer and not timer:is_closing() then
      timer:stop()
      timer:close()
    end
  end
  timer:start(0, 100, vim.schedule_wrap(function()
    local since = shown_at()
    if not since then
      return stop()
    end
    local armed = M.armed(since)
    if armed ~= state then
      state = armed
      on_change(armed)
    end
  end))
  return stop
end

return M
