--- The Python host: pynvim's own remote plugin host, one process per Neovim, started on the one
--- plugin path rplugin/python3/acp_nvim with jobstart(…, {rpc = true}), as Neovim's Python provider
--- starts it, but lazily and without the provider's wait for the host to answer (provider#Poll):
--- no manifest to source at startup, no :UpdateRemotePlugins. Calls are notifications on one
--- channel, so they arrive in the order they were made, also while the host still starts.
---
--- Lua calls Python one way: `require('acp_nvim.host').call.<name>(…)`, the entry points of
--- lua/acp_nvim/entry_points.lua (generated from python/acp_nvim/nvim/commands/entry_points.py). A test may
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

local function plugin_root()
  local source = debug.getinfo(1, 'S').source:sub(2)
  return vim.fn.fnamemodify(source, ':p:h:h:h')
end

--- The plugin path pynvim's host loads.
function M.plugin_path()
  return plugin_root() .. '/rplugin/python3/acp_nvim'
end

--- The Python interpreter and where it was found (acp_nvim.deps chooses: it owns the venv).
---@return string python, string source
function M.python()
  return require('acp_nvim.deps').host_python()
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

--- Send notification `method` with its arguments to the host (starting it if needed); never blocks.
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

local entries -- by name, from the generated table

--- The entry point `name` of lua/acp_nvim/entry_points.lua.
function M.entry(name)
  if not entries then
    entries = {}
    for _, entry in ipairs(require('acp_nvim.entry_points').list) do
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
--- sooner). Called once after the first UI attached (acp_nvim.idle); `prestart = false` in setup()
--- turns it off. Whether it started the host.
function M.prestart()
  local ok, config = pcall(function()
    return require('acp_nvim.options').config
  end)
  if not ok then
    vim.notify('[acp.nvim] ' .. tostring(config), vim.log.levels.ERROR)
    return
  end
  require('acp_nvim.highlights').setup()
  if config.prestart and not M.channel and vim.v.exiting == vim.NIL then
    pcall(M.call.warm)
    return true
  end
  return false
end

return M
