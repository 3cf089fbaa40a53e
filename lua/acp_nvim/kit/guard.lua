--- Keys that answer a question (a permission prompt, a review's verdict keys) count only when the
--- user meant them: the question has been visible for `permissions.arm_ms`, and no key was typed
--- in the `permissions.quiet_ms` before the one that answers. A question never enters its window
--- while the user types (`busy()`): it is shown beside them, `:Ai permissions` goes to it, and it
--- enters its window by itself once they are idle (`when_idle()`; not with `permissions.focus = 'never'`).
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
  local config = require('acp_nvim.config.options').config.permissions or {}
  return config.arm_ms or 500, config.quiet_ms or 300, config.focus or 'idle'
end

---@type (fun(): boolean)[] questions waiting to take the cursor once the user is idle (M.when_idle)
local offers = {}
local timer -- one-shot: fires when the typing window (`quiet_ms`) of the last key ends

local function wake_in(ms)
  timer = timer or uv.new_timer()
  timer:stop()
  timer:start(math.max(0, math.ceil(ms)) + 1, 0, vim.schedule_wrap(function()
    M.recheck()
  end))
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
      if #offers > 0 then -- a question waits: look again when this key's typing window ends
        local _, quiet = settings()
        wake_in(quiet)
      end
    end
  end, ns)
  vim.api.nvim_create_autocmd('ModeChanged', {
    group = vim.api.nvim_create_augroup('acp_nvim_typing', { clear = true }),
    desc = 'acp.nvim: a question waiting for the user to be idle looks again',
    callback = function()
      if #offers > 0 then
        M.recheck()
      end
    end,
  })
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

--- Once the user is idle (not `busy()`), give a question the cursor: `take()` moves it there and
--- returns true, or returns false when its question is gone or already in front of the user. With
--- `permissions.focus = 'never'` nothing is kept. The first `take` that moves the cursor ends the
--- round: the questions behind it stay reachable (:Ai permissions) and never pull the cursor away
--- from the one the user now reads.
---
--- Event-driven, nothing runs while nothing waits: a one-shot timer at the end of the typing window
--- of the last key (`quiet_ms`), re-armed by each key typed meanwhile; a mode other than normal
--- (insert, the command line, visual, a hit-enter prompt) waits for its ModeChanged back.
function M.when_idle(take)
  local _, _, focus = settings()
  if focus == 'never' then
    return
  end
  M.start()
  offers[#offers + 1] = take
  M.recheck()
end

--- Whether questions wait for the user to be idle (tests, :checkhealth).
function M.waiting()
  return #offers
end

--- Give the waiting questions the cursor if the user is idle now; else look again when they may be.
function M.recheck()
  if #offers == 0 then
    return
  end
  if M.busy() then
    local mode = vim.api.nvim_get_mode()
    if NORMAL[mode.mode] and not mode.blocking then
      local _, quiet = settings()
      wake_in(M.last + quiet - M.now())
    end
    return
  end
  local round = offers
  offers = {}
  for _, take in ipairs(round) do
    local ok, took = pcall(take)
    if ok and took then
      return
    end
  end
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
