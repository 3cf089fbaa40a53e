--- Telling the Python host when Neovim is idle: it starts warm agents (|acp_nvim-warm|) only then.
---
--- Idle is the first moment after startup (the prestart, acp_nvim.host) and, when the host asks for
--- it (a warm agent was taken and is to be replaced), the next CursorHold: you stopped typing for
--- 'updatetime'. Nothing runs while nothing is asked for.
local M = {}

local group = vim.api.nvim_create_augroup('acp_nvim.host.idle', { clear = true })
--- Whether the host waits to be told (one CursorHold answers it).
M.asked = false
---@type table<string, 'starting'|'ready'> the agents kept warm and not taken yet (the board shows them)
M.warm = {}

--- Whether the configuration keeps any agent warm (warm = 'default', or an agent's warm = true).
function M.wanted(config)
  if config.warm == 'default' then
    return true
  end
  for _, agent in pairs(config.agents or {}) do
    if type(agent) == 'table' and agent.warm == true then
      return true
    end
  end
  return false
end

--- Tell the host now, with the configuration and the working directory the warm agents start in.
function M.tell()
  local config = require('acp_nvim.presets.registry').with_installed(require('acp_nvim.config.options').config)
  require('acp_nvim.host').warming = true -- editor exit must reach the host then (acp_nvim.shutdown)
  require('acp_nvim.host').call.idle(config, vim.fn.getcwd())
end

--- The first idle moment after the first UI attached (plugin/acp_nvim.lua): the host starts and loads
--- the protocol (acp_nvim.host.prestart), and the warm agents start.
function M.prestart()
  require('acp_nvim.host').prestart(function()
    if M.wanted(require('acp_nvim.config.options').config) then
      pcall(M.tell)
    end
  end)
end

--- The warm agents as the host has them now.
function M.set_warm(status)
  M.warm = type(status) == 'table' and status or {}
  local board = package.loaded['acp_nvim.board'] -- its header names them
  if board and board.board and board.board:visible() then
    board.board:draw()
  end
end

--- "demo (ready), claude (starting)" ('' when no agent is warm).
function M.describe()
  local names = vim.tbl_keys(M.warm)
  table.sort(names)
  return table.concat(vim.tbl_map(function(name)
    return ('%s (%s)'):format(name, M.warm[name])
  end, names), ', ')
end

--- The host asks to be told at the next idle moment.
function M.want()
  if M.asked then
    return
  end
  M.asked = true
  vim.api.nvim_create_autocmd({ 'CursorHold', 'CursorHoldI' }, {
    group = group,
    once = true,
    callback = function()
      M.asked = false
      pcall(M.tell)
    end,
  })
end

return M
