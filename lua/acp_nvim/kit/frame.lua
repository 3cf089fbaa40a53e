--- The frame budget on Neovim's side (ARCHITECTURE.md, "The frame budget"): Neovim reads typed
--- keys only between two turns of its loop, and in one turn it runs every event queued, so no
--- piece of work of acp.nvim may hold a turn for more than a slice of a frame.
---
--- - `slices(step)`: work that can stop and go on: `step(deadline)` does what it can before the
---   deadline (`over(deadline)` says when) and returns true while work is left. Every such job
---   of acp.nvim shares one driver: one slice per turn of the loop, the jobs taking turns in it,
---   and the next slice is a timer away, so the loop reads input in between (a chain of
---   `vim.schedule` per job would run every job's slice in the same turn).
--- - `when_idle(fn)`: work that cannot be cut (loading a parser, compiling a query) waits until the
---   user has typed nothing for `IDLE_MS`; such jobs run one per idle moment, in order.
local M = {}

local uv = vim.uv or vim.loop

--- ms of work per slice: a quarter of a 60 Hz frame leaves room for Neovim's own work and a redraw.
M.SLICE_MS = 4
--- ms of a loop turn after which a slice waits for the next turn (other work of the turn came first).
M.TURN_MS = 8
--- ms without a typed key before work that cannot be cut may run.
M.IDLE_MS = 150
local POLL_MS = 50

--- A deadline `ms` (default `SLICE_MS`) from now, for `over`.
function M.deadline(ms)
  return uv.hrtime() + (ms or M.SLICE_MS) * 1e6
end

--- Whether `deadline` has passed.
function M.over(deadline)
  return uv.hrtime() >= deadline
end

---@type { step: fun(deadline: number): boolean?, done: fun()? }[]
local jobs = {}
local turn_began = uv.hrtime() -- when the loop last woke (a check handle runs right after its poll)
local check, timer
local queued = false

local function report(err)
  require('acp_nvim.kit.notify').notify('[acp.nvim] ' .. tostring(err), vim.log.levels.ERROR)
end

local drive

local function next_turn()
  if queued then
    return
  end
  queued = true
  timer:start(0, 0, function()
    vim.schedule(drive)
  end)
end

drive = function()
  queued = false
  local now = uv.hrtime()
  local deadline = math.min(now + M.SLICE_MS * 1e6, math.max(turn_began + M.TURN_MS * 1e6, now + 2e5))
  local ran = 0
  while #jobs > 0 and (ran == 0 or not M.over(deadline)) do
    local job = table.remove(jobs, 1)
    local ok, more = pcall(job.step, deadline)
    ran = ran + 1
    if not ok then
      report(more)
    elseif more then
      jobs[#jobs + 1] = job
    elseif job.done then
      local done_ok, err = pcall(job.done)
      if not done_ok then
        report(err)
      end
    end
  end
  if #jobs > 0 then
    next_turn()
  else
    check:stop()
  end
end

--- Run `step(deadline)` slice after slice until it returns a false value; `done()` after the last.
--- The first slice runs in the next turn of the loop. A step that fails ends the job (reported).
---@param step fun(deadline: number): boolean?
---@param done fun()?
function M.slices(step, done)
  if not timer then
    timer, check = uv.new_timer(), uv.new_check()
  end
  if not check:is_active() then
    check:start(function()
      turn_began = uv.hrtime()
    end)
  end
  jobs[#jobs + 1] = { step = step, done = done }
  next_turn()
end

--- Jobs sliced now (for tests).
function M.busy()
  return #jobs
end

local idle_jobs = {}
local idle_timer

local function last_key()
  local ok, guard = pcall(require, 'acp_nvim.kit.guard')
  return ok and guard.last or -math.huge
end

local function poll()
  if #idle_jobs == 0 then
    idle_timer:stop()
    return
  end
  if uv.hrtime() / 1e6 - last_key() < M.IDLE_MS then
    return
  end
  local job = table.remove(idle_jobs, 1)
  local ok, err = pcall(job)
  if not ok then
    report(err)
  end
end

--- Run `fn` once the user has not typed for `IDLE_MS` (after the jobs queued before it).
---@param fn fun()
function M.when_idle(fn)
  require('acp_nvim.kit.guard').start()
  idle_jobs[#idle_jobs + 1] = fn
  if not idle_timer then
    idle_timer = uv.new_timer()
  end
  if not idle_timer:is_active() then
    idle_timer:start(POLL_MS, POLL_MS, vim.schedule_wrap(poll))
  end
end

--- Jobs waiting for an idle moment (for tests and :checkhealth).
function M.waiting()
  return #idle_jobs
end

return M
