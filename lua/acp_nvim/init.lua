--- acp.nvim: Neovim as an Agent Client Protocol client.
--- Public API: setup(), status(), and the :Ai command (see :help acp_nvim).
--- Nothing here runs at startup but setup(): modules load on first use.
local M = {}

--- The configuration (acp_nvim.options): setup()'s options merged over the defaults and checked key
--- by key when first read (a problem is said once, naming its key path, and that key keeps its default;
--- nothing raises); the defaults without setup().
setmetatable(M, {
  __index = function(_, key)
    if key == 'config' then
      return require('acp_nvim.options').config
    end
  end,
})

--- Configure agents and behaviour. Safe to call more than once. It only records `opts` (nothing is
--- loaded at startup): they are checked when first used, once Neovim is idle after startup (the
--- prestart) or at the first :Ai; a problem is reported then, in one line naming its key path, and that
--- key keeps its default (:help acp_nvim-config-check).
---@param opts table|nil
function M.setup(opts)
  if not require('acp_nvim.version').supported() then
    return -- plugin/acp_nvim.lua has said why once
  end
  require('acp_nvim.options').set(opts)
end

--- Entry point of :Ai (see plugin/acp_nvim.lua and acp_nvim.ai).
function M.command(opts)
  require('acp_nvim.ai').run(opts)
end

--- Completion for :Ai, from the registry; never starts the Python host.
function M.complete(arglead, cmdline, pos)
  return require('acp_nvim.ai').complete(arglead, cmdline, pos)
end

--- Statusline component: "agent/n · state · mode · tokens" for the current session, or "".
--- Reads a table kept in Lua: cheap enough for every redraw.
function M.status()
  return require('acp_nvim.state').status()
end

--- How many sessions wait for you (a review, a permission prompt, a question): for a statusline.
function M.waiting()
  return require('acp_nvim.state').waiting()
end

--- Called on VimLeavePre: stop agent processes (only when a command or a warm start reached the host).
function M.shutdown()
  local ai = package.loaded['acp_nvim.ai'] -- no :Ai ran when it was never loaded
  local host = package.loaded['acp_nvim.host']
  if (ai and ai.started) or (host and host.warming) then
    require('acp_nvim.host').shutdown()
  end
end

return M
