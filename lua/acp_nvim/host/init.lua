--- The Python host: pynvim's own remote plugin host, one process per Neovim, started on the one
--- plugin path rplugin/python3/acp_nvim with jobstart(…, {rpc = true}), as Neovim's Python provider
--- starts it, but lazily and without the provider's wait for the host to answer (provider#Poll):
--- no manifest to source at startup, no :UpdateRemotePlugins. Calls are notifications on one
--- channel, so they arrive in the order they were made, also while the host still starts.
---
--- Lua calls Python one way: `require('acp_nvim.host').call.<name>(…)`, the entry points of
--- lua/acp_nvim/host/entry_points.lua (generated from python/acp_nvim/nvim/commands/entry_points.py). A test may
--- put its own function in `call` to record what Lua sends.
local M = {}

---@type fun()[] called when the host exits (acp_nvim.state forgets its sessions)
M.on_gone = {}

--- Lines of the host's stderr kept for messages and :checkhealth.
local STDERR_LINES = 30

-- pynvim's start_host() loads the plugin paths it is given; the checkout's rplugin folder goes
-- first on sys.path so that `acp_nvim` is this checkout's plugin, whatever else is installed
local BOOT = table.concat({
  'import os, sys',
  'sys.path[:] = [p for p in sys.path if p not in ("", ".")]', -- never import from the cwd
  'sys.path.insert(0, os.path.dirname(sys.argv[1]))',
  'import pynvim',
  'pynvim.start_host()',
}, '; ')

---@type integer|nil the host's channel while it runs
M.channel = nil
---@type string[] the last lines the host wrote on stderr
M.stderr = {}
---@type integer|nil the last host's exit code
M.exit_code = nil
---@type table|nil how the running (or last) host was started: python, source, plugin, argv
M.started = nil
--- The host was told to start warm agents: editor exit must reach it (acp_nvim.shutdown).
M.warming = false
local exiting = false

--- lua/acp_nvim/host/init.lua is four levels below the plugin's root.
local function plugin_root()
  local source = debug.getinfo(1, 'S').source:sub(2)
  return vim.fn.fnamemodify(source, ':p:h:h:h:h')
end

--- The plugin path pynvim's host loads.
function M.plugin_path()
  return plugin_root() .. '/rplugin/python3/acp_nvim'
end

--- The Python interpreter and where it was found (acp_nvim.host.deps chooses: it owns the venv).
---@return string python, string source
function M.python()
  return require('acp_nvim.host.deps').host_python()
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

--- The one line said when the host's Python lacks acp.nvim's packages (|acp_nvim-first-start|).
M.MISSING = "acp.nvim's Python packages are missing: run :Ai deps"

--- Where a host's exit and its last stderr lines (a Python traceback) are written.
function M.log_file()
  return vim.fn.stdpath('log') .. '/acp_nvim_host.log'
end

local function log_exit(code)
  pcall(function()
    local lines = { ('%s the Python host exited with code %d (%s); its last lines on stderr:'):format(
      os.date('%Y-%m-%d %H:%M:%S'), code, M.started and M.started.python or '?') }
    for _, line in ipairs(M.stderr) do
      lines[#lines + 1] = '  ' .. line
    end
    vim.fn.mkdir(vim.fn.fnamemodify(M.log_file(), ':h'), 'p')
    vim.fn.writefile(lines, M.log_file(), 'a')
  end)
end

--- Whether the host's stderr says a package is missing (it died importing pynvim or the SDK).
local function missing_module()
  for _, line in ipairs(M.stderr) do
    if line:find('ModuleNotFoundError', 1, true) or line:find('No module named', 1, true) then
      return true
    end
  end
  return false
end

local function on_exit(_, code)
  M.channel, M.exit_code = nil, code
  if exiting or vim.v.exiting ~= vim.NIL then
    return
  end
  -- one line that fits the command line (no hit-enter prompt); the traceback goes to the log file
  -- and :checkhealth, never to a message
  log_exit(code)
  if missing_module() then
    if M.started then
      M.packages[M.started.python] = false
    end
    vim.notify(M.MISSING, vim.log.levels.WARN)
  else
    require('acp_nvim.kit.notify').notify(('[acp.nvim] the Python host exited (code %d): :checkhealth acp_nvim'):format(code),
      vim.log.levels.ERROR)
  end
  for _, gone in ipairs(M.on_gone) do
    gone()
  end
end

--- The host's channel, starting the host when it does not run (never waits for it).
---@return integer
function M.start()
  if M.channel then
    return M.channel
  end
  M.stderr = {}
  local python, source = M.python()
  local argv = { python, '-c', BOOT, M.plugin_path() }
  local ok, chan = pcall(vim.fn.jobstart, argv, { rpc = true, on_stderr = keep_stderr, on_exit = on_exit })
  if not ok or chan <= 0 then
    error(
      ('acp.nvim: cannot start the Python host %q (from %s: %s): run :Ai deps, or set g:acp_nvim_python; see :checkhealth acp_nvim'):format(
        python,
        source,
        ok and 'not executable' or tostring(chan)
      ),
      0
    )
  end
  M.channel, M.exit_code = chan, nil
  M.started = { python = python, source = source, plugin = M.plugin_path(), argv = argv }
  return chan
end

-- Whether an interpreter has acp.nvim's packages is checked before a host is started on it
-- (|acp_nvim-first-start|): one short Python process run with vim.system, its answer awaited
-- without blocking (calls made meanwhile wait in order). Not a stamp file of :Ai deps: the host
-- may run any interpreter (g:acp_nvim_python, setup({ python }), python3 on PATH), and a stamp
-- says nothing of a venv broken or upgraded since. A module is only found, not imported (~40 ms).
local CHECK = table.concat({
  'import importlib.util, sys',
  'sys.path[:] = [p for p in sys.path if p not in ("", ".")]', -- as the host: never the cwd
  'sys.exit(0 if all(importlib.util.find_spec(n) for n in ("pynvim", "acp", "pydantic", "mcp")) else 3)',
}, '; ')

---@type table<string, boolean> per interpreter: whether it has the packages (once checked)
M.packages = {}
---@type table<string, fun(ok: boolean)[]> the checks under way, and who waits for each
local checking = {}
---@type table[] calls made while the interpreter is checked: { method, args }, in order
local queued = {}
local told = false

--- Say M.MISSING (the prestart: once per Neovim; a command's answer: each time).
local function say_missing(once)
  if once and told then
    return
  end
  told = true
  vim.notify(M.MISSING, vim.log.levels.WARN)
end

--- Check whether `python` has acp.nvim's packages without waiting; `done(ok)` runs on the main loop.
function M.check(python, done)
  if checking[python] then
    table.insert(checking[python], done)
    return
  end
  checking[python] = { done }
  local function finish(ok)
    M.packages[python] = ok
    local waiting = checking[python] or {}
    checking[python] = nil
    for _, fn in ipairs(waiting) do
      fn(ok)
    end
  end
  local ok = pcall(vim.system, { python, '-c', CHECK }, { text = true }, function(result)
    vim.schedule(function()
      finish(result.code == 0)
    end)
  end)
  if not ok then -- not executable: no host can start on it either
    vim.schedule(function()
      finish(false)
    end)
  end
end

local function send(method, args)
  local chan = M.start()
  local ok, err = pcall(vim.rpcnotify, chan, method, unpack(args, 1, args.n))
  if not ok then
    M.channel = nil
    error(('acp.nvim: the Python host is gone (%s); try again'):format(err), 0)
  end
end

local function flush(ok)
  local calls = queued
  queued = {}
  if exiting or vim.v.exiting ~= vim.NIL then
    return -- no host is started for an editor that quits
  elseif not ok then
    return #calls > 0 and say_missing(false)
  end
  for _, call in ipairs(calls) do
    local sent, err = pcall(send, call[1], call[2])
    if not sent then
      return require('acp_nvim.kit.notify').notify('[acp.nvim] ' .. tostring(err):gsub('\n.*', ''), vim.log.levels.ERROR)
    end
  end
end

--- Send notification `method` with its arguments to the host (starting it if needed); never
--- blocks. The first call on an interpreter not known to have the packages waits for their check
--- (M.check); without them the call is dropped and M.MISSING said, and no host starts.
function M.notify(method, ...)
  local args = { n = select('#', ...), ... }
  if M.channel then
    return send(method, args)
  end
  local python = M.python()
  if M.packages[python] == true then
    return send(method, args)
  end
  queued[#queued + 1] = { method, args }
  M.check(python, flush) -- checked again after a "missing": the user may have installed them since
end

--- Ask the host and wait for its answer: only for editor exit (nothing else may block Neovim).
function M.request(method, ...)
  if not M.channel then
    return nil
  end
  return vim.rpcrequest(M.channel, method, ...)
end

local entries -- by name, from the generated table

--- The entry point `name` of lua/acp_nvim/host/entry_points.lua.
function M.entry(name)
  if not entries then
    entries = {}
    for _, entry in ipairs(require('acp_nvim.host.entry_points').list) do
      entries[entry.name] = entry
    end
  end
  return entries[name]
end

--- `call.<name>(…)`: the entry point `name` of the Python host, sent with these arguments.
M.call = setmetatable({}, {
  __index = function(call, name)
    local entry = M.entry(name)
    if not entry then
      error(('acp.nvim: no entry point %q into the Python host'):format(tostring(name)), 2)
    end
    local send = entry.sync and M.request or M.notify
    local fn = function(...)
      return send(entry.method, ...)
    end
    rawset(call, name, fn)
    return fn
  end,
})

--- Editor exit: let the host end every agent, then forget it.
function M.shutdown()
  exiting = true
  if M.channel then
    pcall(M.call.shutdown)
  end
end

--- Start the host and have it load the protocol while Neovim is idle (the first :Ai is then ready
--- sooner), then run `after`. Called once after the first UI attached (acp_nvim.host.idle);
--- `prestart = false` in setup() turns it off. Without acp.nvim's Python packages no host starts:
--- M.MISSING is said once per Neovim. Whether it went on to start the host.
function M.prestart(after)
  local ok, config = pcall(function()
    return require('acp_nvim.config.options').config
  end)
  if not ok then
    require('acp_nvim.kit.notify').notify('[acp.nvim] ' .. tostring(config), vim.log.levels.ERROR)
    return
  end
  require('acp_nvim.kit.highlights').setup()
  if config.prestart and not M.channel and vim.v.exiting == vim.NIL then
    M.check(M.python(), function(ready)
      if not ready then
        return say_missing(true)
      elseif vim.v.exiting == vim.NIL then
        pcall(M.call.warm)
        if after then
          after()
        end
      end
    end)
    return true
  end
  return false
end

return M
