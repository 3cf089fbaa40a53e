--- acp.nvim: Neovim as an Agent Client Protocol client.
--- Public API: setup(), status(), and the :Ai command (see :help acp_nvim).
local M = {}

local config = require('acp_nvim.config')

M.config = config.build(nil)

--- Configure agents and behaviour. Safe to call more than once.
---@param opts table|nil
function M.setup(opts)
  M.config = config.build(opts)
  require('acp_nvim.highlights').setup()
end

local SUBCOMMANDS = { 'open', 'send', 'cancel', 'new', 'close', 'restart', 'mode', 'permissions', 'changes',
  'log', 'rules', 'policy', 'sessions', 'model', 'config', 'queue', 'locations' }

local function lua_subcommand(sub)
  if sub == 'permissions' then
    require('acp_nvim.permission').show()
    return true
  end
  return false
end

--- Entry point of :Ai (see plugin/acp_nvim.lua).
function M.command(opts)
  local sub = opts.fargs[1] or 'open'
  if lua_subcommand(sub) then
    return
  end
  local text = opts.args:gsub('^%s*%S+%s?', '', 1)
  M._started = true
  vim.fn.AcpNvimCommand({
    sub = sub,
    args = vim.list_slice(opts.fargs, 2),
    text = text,
    range = opts.range,
    line1 = opts.line1,
    line2 = opts.line2,
    buf = vim.api.nvim_get_current_buf(),
    session = vim.b.acp_nvim_session, -- from a chat buffer: that chat's session
    -- a range's lines as they are now (unsaved edits too), read here for the same reason
    lines = opts.range > 0 and vim.api.nvim_buf_get_lines(0, opts.line1 - 1, opts.line2, false) or nil,
    bufname = vim.api.nvim_buf_get_name(0),
    -- the config travels with the request: fetching it would yield the handler's greenlet,
    -- and a second :Ai could then overtake the first
    config = M.config,
    cwd = vim.fn.getcwd(),
  })
end

--- Completion for :Ai.
function M.complete(arglead, cmdline, _)
  local words = vim.split(cmdline, '%s+', { trimempty = true })
  local nth = #words + (cmdline:match('%s$') and 1 or 0)
  local candidates = {}
  if nth <= 2 then
    candidates = SUBCOMMANDS
  elseif words[2] == 'new' then
    candidates = vim.list_extend({ 'demo' }, vim.tbl_keys(M.config.agents))
  elseif words[2] == 'mode' then
    local current = require('acp_nvim.state').current()
    candidates = current and current.modes or {}
  elseif words[2] == 'queue' and nth == 3 then
    candidates = { 'show', 'edit', 'clear' }
  elseif words[2] == 'open' and nth == 3 then
    candidates = vim.tbl_keys(require('acp_nvim.state').sessions)
  elseif words[2] == 'policy' and nth == 3 then
    candidates = { 'ask', 'auto-edit', 'trust' }
  elseif words[2] == 'rules' and nth == 3 then
    candidates = { 'remove' }
  elseif words[2] == 'log' and nth == 3 then
    candidates = vim.list_extend({ 'export', 'level' }, vim.tbl_keys(require('acp_nvim.state').sessions))
  elseif words[2] == 'log' and words[3] == 'level' and nth == 4 then
    candidates = { 'trace', 'debug', 'info', 'warn', 'error' }
  elseif words[2] == 'log' and words[3] == 'export' and nth == 4 then
    candidates = vim.fn.getcompletion(arglead, 'file')
  end
  return vim.tbl_filter(function(c)
    return vim.startswith(c, arglead)
  end, candidates)
end

--- Statusline component: "agent/n · state · mode · tokens" for the current session, or "".
--- Reads a table kept in Lua: cheap enough for every redraw.
function M.status()
  return require('acp_nvim.state').status()
end

--- Called on VimLeavePre: stop agent processes (only if the Python host was started).
function M.shutdown()
  if M._started then
    pcall(vim.fn.AcpNvimShutdown)
  end
end

return M
