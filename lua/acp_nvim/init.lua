--- acp.nvim: Neovim as an Agent Client Protocol client.
--- Public API: setup(), status(), waiting(), open(), toggle(), send(), cancel(), new(), and the :Ai
--- command (see :help acp_nvim and :help acp_nvim-api).
--- Nothing here runs at startup but setup(): modules load on first use.
local M = {}

--- The configuration (acp_nvim.config.options): setup()'s options merged over the defaults and checked key
--- by key when first read (a problem is said once, naming its key path, and that key keeps its default;
--- nothing raises); the defaults without setup().
setmetatable(M, {
  __index = function(_, key)
    if key == 'config' then
      return require('acp_nvim.config.options').config
    end
  end,
})

--- Configure agents and behaviour. Safe to call more than once. It only records `opts` (nothing is
--- loaded at startup): they are checked when first used, once Neovim is idle after startup (the
--- prestart) or at the first :Ai; a problem is reported then, in one line naming its key path, and that
--- key keeps its default (:help acp_nvim-config-check).
---@param opts table|nil
function M.setup(opts)
  if not require('acp_nvim.host.version').supported() then
    return -- plugin/acp_nvim.lua has said why once
  end
  require('acp_nvim.config.options').set(opts)
end

--- Entry point of :Ai (see plugin/acp_nvim.lua and acp_nvim.host.ai).
function M.command(opts)
  require('acp_nvim.host.ai').run(opts)
end

--- Completion for :Ai, from the registry; never starts the Python host.
function M.complete(arglead, cmdline, pos)
  return require('acp_nvim.host.ai').complete(arglead, cmdline, pos)
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

-- The API for configs and other plugins (:help acp_nvim-api). Each function runs its :Ai subcommand
-- through the one dispatcher (acp_nvim.host.ai), as typed: the same checks, messages and events.

---@class acp_nvim.SendOpts
---@field session? string the session to send to (a key such as "demo/2"); default: the current one
---@field range? integer[] { line1, line2 }: the current buffer's lines attached as context, as a range does

--- Run `:Ai {sub} {words}` (for session `key`, as from its chat, when given).
---@param words string[]
---@param key string|nil
local function run(words, key)
  require('acp_nvim.host.ai').run({ fargs = words, args = table.concat(words, ' '), range = 0, line1 = 0, line2 = 0 }, key)
end

--- Open the chat of `session` (a key such as "demo/2"), or of the current session, starting the default
--- agent when there is none: `:Ai open [session]`.
---@param session? string
function M.open(session)
  run(session and { 'open', session } or { 'open' })
end

--- Hide or show the chat column: `:Ai toggle`.
function M.toggle()
  run({ 'toggle' })
end

--- Send `text` as a prompt: `:Ai send {text}` (`@path` attaches a file, `%` and `#` expand to file
--- names as for `:edit`). It queues while a turn runs, as typed prompts do.
---@param text string
---@param opts? acp_nvim.SendOpts
function M.send(text, opts)
  if type(text) ~= 'string' or text:match('^%s*$') then
    require('acp_nvim.kit.notify').notify("[acp.nvim] send(text): text must be a prompt (a string that is not blank)",
      vim.log.levels.ERROR)
    return
  end
  opts = opts or {}
  local words = vim.list_extend({ 'send' }, vim.split(text, '%s+', { trimempty = true }))
  local command = { fargs = words, args = 'send ' .. text, range = 0, line1 = 0, line2 = 0 }
  if type(opts.range) == 'table' then
    command.range, command.line1, command.line2 = 2, opts.range[1], opts.range[2] or opts.range[1]
  end
  require('acp_nvim.host.ai').run(command, opts.session)
end

--- Cancel the running turn of `session`, or of the current session: `:Ai cancel`.
---@param session? string
function M.cancel(session)
  run({ 'cancel' }, session)
end

--- Start another session, of `agent` or of the default agent: `:Ai new [agent]`.
---@param agent? string a name of `agents` in setup(), a preset or an installed registry id
function M.new(agent)
  run(agent and { 'new', agent } or { 'new' })
end

--- Called on VimLeavePre: stop agent processes (only when a command or a warm start reached the host).
function M.shutdown()
  local ai = package.loaded['acp_nvim.host.ai'] -- no :Ai ran when it was never loaded
  local host = package.loaded['acp_nvim.host']
  if (ai and ai.started) or (host and host.warming) then
    require('acp_nvim.host').shutdown()
  end
end

return M
