--- :checkhealth acp_nvim
local M = {}

local health = vim.health

local function check_python()
  local prog = vim.g.python3_host_prog or 'python3'
  if vim.fn.executable(prog) == 0 then
    health.error(('Python host %q is not executable'):format(prog), { 'set g:python3_host_prog' })
    return
  end
  local out = vim.fn.system({ prog, '-c', 'import acp, pynvim, pydantic; print(acp.__name__)' })
  if vim.v.shell_error ~= 0 then
    health.error(
      ('the Python host %s lacks the dependencies'):format(prog),
      { ('%s -m pip install "agent-client-protocol>=0.12,<0.13" pynvim pydantic'):format(prog) }
    )
  else
    health.ok(('Python host %s has agent-client-protocol, pynvim and pydantic'):format(prog))
    vim.fn.system({ prog, '-c', 'import orjson' })
    if vim.v.shell_error == 0 then
      health.ok('orjson found: large messages are encoded fast')
    else
      health.info(('optional: %s -m pip install orjson (large messages encode ~5x faster)'):format(prog))
    end
  end
end

local function check_rplugin()
  local ok, plugins = pcall(vim.fn['remote#host#PluginsForHost'], 'python3')
  local registered = ok
    and vim.iter(plugins):any(function(p)
      return p.path:match('acp_nvim_rplugin%.py$') ~= nil
    end)
  if registered then
    health.ok('remote plugin registered (acp_nvim_rplugin.py in the rplugin manifest)')
  else
    health.error('remote plugin not registered', { 'run :UpdateRemotePlugins and restart Neovim' })
  end
end

-- remote agents (issue 15): reached over WebSocket, which needs the websockets package
local function check_remote(name, agent)
  local prog = vim.g.python3_host_prog or 'python3'
  vim.fn.system({ prog, '-c', 'import websockets' })
  if vim.v.shell_error == 0 then
    health.ok(('agent %s: remote, %s (websockets found)'):format(name, agent.url))
  else
    health.error(('agent %s: remote (%s) but the Python host lacks websockets'):format(name, agent.url),
      { ('%s -m pip install "websockets>=12,<16"'):format(prog) })
  end
end

local function check_agents()
  local config = require('acp_nvim').config
  health.ok(('default agent: %s'):format(config.default_agent))
  for name, agent in pairs(config.agents) do
    if agent.url then -- remote agents (issue 15)
      check_remote(name, agent)
    elseif vim.fn.executable(agent.command) == 1 then
      health.ok(('agent %s: %s found'):format(name, agent.command))
    else
      health.warn(('agent %s: command %q not found on PATH'):format(name, agent.command))
    end
  end
end

function M.check()
  health.start('acp.nvim')
  if vim.fn.has('nvim-0.10') == 0 then
    health.error('Neovim 0.10 or newer is required')
  end
  check_python()
  check_rplugin()
  check_agents()
end

return M
