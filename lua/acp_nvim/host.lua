--- The Python host: one process per Neovim, started with jobstart() and spoken to over its
--- stdio (msgpack-RPC), not a remote plugin. Starting it never blocks Neovim (no :UpdateRemotePlugins,
--- no manifest to source at startup, no wait for the host to answer): calls are notifications on
--- one channel, so they arrive in the order they were made, also while the host still starts.
---
--- The functions Lua code calls (AcpNvimCommand, AcpNvimAnswer, …) are defined the first time one
--- is called (|FuncUndefined|), so they cost nothing at startup and a test may define its own.
local M = {}

--- Notifications by the Vim function that sends them.
M.functions = {
  AcpNvimCommand = 'command',
  AcpNvimSubmit = 'submit',
  AcpNvimAnswer = 'answer',
  AcpNvimReviewDone = 'review_done',
  AcpNvimChat = 'chat',
  AcpNvimToolDone = 'tool_done',
}

--- Lines of the host's stderr kept for messages and :checkhealth.
local STDERR_LINES = 30

local BOOT = table.concat({
  'import sys',
  'sys.path[:] = [p for p in sys.path if p not in ("", ".")]', -- never import from the cwd
  'sys.path.insert(0, sys.argv[1])',
  'from acp_nvim.host import main',
  'main()',
}, '; ')

---@type integer|nil the host's channel while it runs
M.channel = nil
---@type string[] the last lines the host wrote on stderr
M.stderr = {}
---@type integer|nil the last host's exit code
M.exit_code = nil
local exiting = false

local function plugin_root()
  local source = debug.getinfo(1, 'S').source:sub(2)
  return vim.fn.fnamemodify(source, ':p:h:h:h')
end

--- The Python interpreter: g:python3_host_prog, as for Neovim's own Python provider.
function M.python()
  local prog = vim.g.python3_host_prog
  if type(prog) == 'string' and prog ~= '' then
    return vim.fn.expand(prog)
  end
  return 'python3'
end

local function keep_stderr(_, data)
  for _, line in ipairs(data or {}) do
    if line ~= '' then
      M.stderr[#M.stderr + 1] = line
    end
  end
  while #M.stderr > STDERR_LINES do
    table.remove(M.stderr, 1)
  end
end

local function on_exit(_, code)
  M.channel, M.exit_code = nil, code
  if exiting or vim.v.exiting ~= vim.NIL then
    return
  end
  local tail = table.concat(vim.list_slice(M.stderr, math.max(1, #M.stderr - 4)), '\n')
  vim.notify(
    ('[acp.nvim] the Python host exited (code %d)%s\nIts sessions are gone; the next :Ai starts a new host. See :checkhealth acp_nvim'):format(
      code,
      tail ~= '' and (':\n' .. tail) or ''
    ),
    vim.log.levels.ERROR
  )
  require('acp_nvim.state').host_gone()
end

--- The host's channel, starting the host when it does not run (never waits for it).
---@return integer
function M.start()
  if M.channel then
    return M.channel
  end
  M.stderr = {}
  local python = M.python()
  local ok, chan = pcall(vim.fn.jobstart, { python, '-c', BOOT, plugin_root() .. '/python' }, {
    rpc = true,
    on_stderr = keep_stderr,
    on_exit = on_exit,
  })
  if not ok or chan <= 0 then
    error(
      ('acp.nvim: cannot start the Python host %q (%s): set g:python3_host_prog, see :checkhealth acp_nvim'):format(
        python,
        ok and 'not executable' or tostring(chan)
      ),
      0
    )
  end
  M.channel = chan
  return chan
end

--- Send `method` with its arguments to the host (starting it if needed); never blocks.
function M.notify(method, ...)
  local chan = M.start()
  local ok, err = pcall(vim.rpcnotify, chan, method, ...)
  if not ok then
    M.channel = nil
    error(('acp.nvim: the Python host is gone (%s); try again'):format(err), 0)
  end
end

--- Ask the host and wait for its answer: only for editor exit (nothing else may block Neovim).
function M.request(method, ...)
  if not M.channel then
    return nil
  end
  return vim.rpcrequest(M.channel, method, ...)
end

--- Editor exit: let the host end every agent, then forget it.
function M.shutdown()
  exiting = true
  if M.channel then
    pcall(M.request, 'shutdown')
  end
end

--- Start the host and have it load the protocol while Neovim is idle (the first :Ai is then ready
--- sooner). Called once after the first UI attached; `prestart = false` in setup() turns it off.
function M.prestart()
  local ok, config = pcall(function()
    return require('acp_nvim').config
  end)
  if not ok then
    vim.notify('[acp.nvim] ' .. tostring(config), vim.log.levels.ERROR)
    return
  end
  require('acp_nvim.highlights').setup()
  if config.prestart and not M.channel and vim.v.exiting == vim.NIL then
    pcall(M.notify, 'warm')
  end
end

--- Define the Vim functions of `M.functions` (FuncUndefined); a function defined already (a test's
--- recorder) is kept.
function M.define_functions()
  for name, method in pairs(M.functions) do
    if vim.fn.exists('*' .. name) == 0 then
      vim.cmd(([[
function! %s(...) abort
  call luaeval('require("acp_nvim.host").notify(_A[1], unpack(_A[2], 1, _A[3]))', ['%s', a:000, a:0])
endfunction]]):format(name, method))
    end
  end
end

return M
