--- The frame budget on Neovim's side (ARCHITECTURE.md, "The frame budget"): Neovim reads typed
--- keys only between two events, so no piece of work of acp.nvim may hold its loop for more
--- than a slice of a frame.
---
--- - `slices(step)`: work that can stop and go on: `step(deadline)` does what it can before the
---   deadline (`over(deadline)` says when) and returns true while work is left; the next slice runs
---   from `vim.schedule`, after the keys typed meanwhile.
--- - `when_idle(fn)`: work that cannot be cut (loading a parser, compiling a query) waits until the
---   user has typed nothing for `IDLE_MS`; such jobs run one per idle moment, in order.
local M = {}

local uv = vim.uv or vim.loop

--- ms of work per slice: a quarter of a 60 Hz frame leaves room for Neovim's own work and a redraw.
M.SLICE_MS = 4
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

--- Run `step(deadline)` slice after slice until it returns a false value; `done()` after the last.
--- The first slice runs now. A step that fails ends the work (the error is reported once).
---@param step fun(deadline: number): boolean?
---@param done fun()?
function M.slices(step, done)
  local function run()
    local ok, more = pcall(step, M.deadline())
    if not ok then
      vim.notify('[acp.nvim] ' .. tostring(more), vim.log.levels.ERROR)
      return
    end
    if more then
      vim.schedule(run)
    elseif done then
      done()
    end
  end
  run()
end

local jobs = {}
local timer

local function last_key()
  local ok, guard = pcall(require, 'acp_nvim.guard')
  return ok and guard.last or -math.huge
end

local function poll()
  if #jobs == 0 then
    timer:stop()
    return
  end
  if uv.hrtime() / 1e6 - last_key() < M.IDLE_MS then
    return
  end
  local job = table.remove(jobs, 1)
  local ok, err = pcall(job)
  if not ok then
    vim.notify('[acp.nvim] ' .. tostring(err), vim.log.levels.ERROR)
  end
end

--- Run `fn` once the user has not typed for `IDLE_MS` (after the jobs queued before it).
---@param fn fun()
function M.when_idle(fn)
  require('acp_nvim.guard').start()
  jobs[#jobs + 1] = fn
  if not timer then
    timer = uv.new_timer()
  end
  if not timer:is_active() then
    timer:start(POLL_MS, POLL_MS, vim.schedule_wrap(poll))
  end
end

--- Jobs waiting for an idle moment (for tests and :checkhealth).
function M.waiting()
  return #jobs
end

return M
