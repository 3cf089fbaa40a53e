-- Terminals the agent runs (ACP terminal/*): a pty job in a terminal buffer per terminal.
-- Output goes back to Python in batches (`host.call.terminal`), where core/terminal keeps the
-- bounded ring the agent reads; this module owns the buffers and the jobs.
local M = {}

local api = vim.api

--- Live and released terminals by id: { buf, job, pid, running, pending, timer }.
M.terminals = {}

local FLUSH_MS = 20
local FLUSH_BYTES = 256 * 1024

-- private helpers -------------------------------------------------------------------

local function send(event, id, data)
  require('acp_nvim.host').call.terminal(event, id, data)
end

local function flush(term)
  if term.timer then
    term.timer:stop()
    term.timer:close()
    term.timer = nil
  end
  if #term.pending > 0 then
    local data = table.concat(term.pending)
    term.pending = {}
    term.pending_bytes = 0
    send('output', term.id, data)
  end
end

local function on_output(term, data)
  -- data: lines split at NL; the first continues the last chunk, the last is the unfinished line
  local chunk = table.concat(data, '\n')
  if chunk == '' then
    return
  end
  term.pending[#term.pending + 1] = chunk
  term.pending_bytes = term.pending_bytes + #chunk
  if term.pending_bytes >= FLUSH_BYTES then
    flush(term)
  elseif not term.timer then
    term.timer = vim.uv.new_timer()
    term.timer:start(FLUSH_MS, 0, vim.schedule_wrap(function()
      flush(term)
    end))
  end
end

local function on_exit(term, code)
  flush(term)
  term.running = false
  send('exit', term.id, code)
end

local function env_table(pairs_list)
  local env = {}
  for _, pair in ipairs(pairs_list or {}) do
    env[pair[1]] = pair[2]
  end
  return next(env) and env or nil
end

local function run(term, spec)
  -- spec.argv: the command behind the check that spec.cwd is still the approved folder (core/terminal/place.py)
  local argv = spec.argv
  if not argv then
    argv = { spec.command }
    vim.list_extend(argv, spec.args or {})
  end
  if not spec.command:find('/', 1, true) and vim.fn.executable(spec.command) ~= 1 then
    return -1 -- what jobstart says of the bare command (the check would start and fail later)
  end
  return vim.fn.jobstart(argv, {
    term = true,
    cwd = spec.cwd,
    env = env_table(spec.env),
    on_stdout = function(_, data)
      on_output(term, data)
    end,
    on_exit = function(_, code)
      on_exit(term, code)
    end,
  })
end

-- public API ------------------------------------------------------------------------

--- Start `spec` ({ id, session, command, args, env = {{name, value}}, cwd, argv }) in a hidden
--- terminal buffer (`argv` is what runs: the command behind its folder check). Returns { pid, buf } or { error }.
function M.start(spec)
  local buf = api.nvim_create_buf(false, false)
  local term = { id = spec.id, buf = buf, pending = {}, pending_bytes = 0, running = true }
  M.terminals[spec.id] = term
  local ok, job = pcall(api.nvim_buf_call, buf, function()
    return run(term, spec)
  end)
  if not ok or job <= 0 then
    M.terminals[spec.id] = nil
    pcall(api.nvim_buf_delete, buf, { force = true })
    local reason = not ok and tostring(job) or (job == -1 and 'not executable' or 'invalid arguments')
    return { error = ('%s: %s'):format(spec.command, reason) }
  end
  term.job = job
  term.pid = vim.fn.jobpid(job)
  vim.bo[buf].bufhidden = 'hide'
  vim.b[buf].acp_nvim_terminal = spec.id
  pcall(api.nvim_buf_set_name, buf, ('acp://terminal/%s/%s'):format(spec.session, spec.id))
  return { pid = term.pid, buf = buf }
end

--- Stop the job of terminal `id` (SIGHUP/SIGTERM, then SIGKILL: Neovim's jobstop).
function M.kill(id)
  local term = M.terminals[id]
  if term and term.running then
    vim.fn.jobstop(term.job)
  end
end

--- Stop the job and forget it; the buffer goes unless a window shows it.
function M.release(id)
  local term = M.terminals[id]
  if not term then
    return
  end
  M.kill(id)
  term.released = true
  if api.nvim_buf_is_valid(term.buf) and #vim.fn.win_findbuf(term.buf) == 0 then
    pcall(api.nvim_buf_delete, term.buf, { force = true })
    M.terminals[id] = nil -- nothing left to show (its exit still reaches Python)
  end
end

--- Open terminal `id`'s buffer in a split below (the chat's <CR> on its tool call).
function M.show(id)
  local term = M.terminals[id]
  if not term or not api.nvim_buf_is_valid(term.buf) then
    vim.notify(('[acp.nvim] terminal %s was released: its buffer is gone'):format(id), vim.log.levels.WARN)
    return
  end
  local win = vim.fn.win_findbuf(term.buf)[1]
  if win then
    api.nvim_set_current_win(win)
    return
  end
  vim.cmd('botright split')
  api.nvim_win_set_buf(0, term.buf)
end

return M
