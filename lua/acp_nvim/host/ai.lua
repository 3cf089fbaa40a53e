--- The :Ai command: dispatch (to Lua or to the Python host) and completion, from the registry.
local M = {}

local subcommands, by_name -- the registry, generated from Python (acp_nvim.host.subcommands)

local function registry()
  if not subcommands then
    subcommands, by_name = require('acp_nvim.host.subcommands'), {}
    for _, sub in ipairs(subcommands.list) do
      by_name[sub.name] = sub
    end
  end
  return subcommands, by_name
end

--- Run a subcommand that lives in Lua (it works before the Python host starts) with its words.
local function run_in_lua(spec, opts)
  local module, fn = spec.lua[1], spec.lua[2]
  require(module)[fn](vim.list_slice(opts.fargs, 2))
end

--- Run :Ai (see plugin/acp_nvim.lua); `session` (a key) stands for the chat it would run from.
function M.run(opts, session)
  require('acp_nvim.kit.highlights').setup()
  local subs, by = registry()
  local sub = opts.fargs[1] or subs.default
  local spec = by[sub]
  if spec and spec.lua then
    return run_in_lua(spec, opts)
  end
  local text = opts.args:gsub('^%s*%S+%s?', '', 1)
  if spec and spec.expand then
    local expanded, problem = require('acp_nvim.host.cmdline').expand(text)
    if not expanded then
      require('acp_nvim.kit.notify').notify('[acp.nvim] ' .. problem, vim.log.levels.ERROR)
      return
    end
    text = expanded
  end
  M.started = true -- acp_nvim.shutdown() stops the host only then
  require('acp_nvim.kit.guard').start() -- prompts must know whether the user is typing (:help acp_nvim-permission-keys)
  require('acp_nvim.state.notices') -- from now on it follows the focus (FocusLost: notices also go to the terminal)
  local block, block_session
  if sub == 'cancel' and not session then
    block, block_session = M.block_under_cursor()
  end
  require('acp_nvim.host').call.command({
    sub = sub,
    args = vim.list_slice(opts.fargs, 2),
    text = text,
    range = opts.range,
    line1 = opts.line1,
    line2 = opts.line2,
    buf = vim.api.nvim_get_current_buf(),
    session = session or vim.b.acp_nvim_session, -- from a chat buffer: that chat's session
    block = block, -- :Ai cancel on a subagent's block cancels only it
    block_session = block_session,
    -- a range's lines as they are now (unsaved edits too), read here for the same reason
    lines = opts.range > 0 and vim.api.nvim_buf_get_lines(0, opts.line1 - 1, opts.line2, false) or nil,
    bufname = vim.api.nvim_buf_get_name(0),
    -- the config travels with the request: fetching it would yield the handler's greenlet,
    -- and a second :Ai could then overtake the first
    config = require('acp_nvim.presets.registry').with_installed(require('acp_nvim.config.options').config),
    cwd = vim.fn.getcwd(),
  })
end

--- The id of the chat block under the cursor (not in the prompt area) and the chat's session, or nil.
function M.block_under_cursor()
  local chats = package.loaded['acp_nvim.chat'] -- no chat is drawn before it loads
  local chat = chats and chats.of_buffer()
  local id = chat and chat:block_at(vim.api.nvim_win_get_cursor(0)[1] - 1)
  if id then
    return id, chat.key
  end
end

--- Run `:Ai {words}` for session `key`, as from its chat (the board's keys).
---@param key string
---@param words string[]
function M.run_for(key, words)
  M.run({ fargs = words, args = table.concat(words, ' '), range = 0, line1 = 0, line2 = 0 }, key)
end

--- The worktrees' folder names (`worktrees.folder`), for completion: best effort, no git run.
local function worktree_names()
  local folder = require('acp_nvim.config.options').config.worktrees.folder
  local top = vim.fs.root(0, '.git') or vim.fn.getcwd()
  local git = top .. '/.git'
  if folder:match('^%.git/') and vim.fn.filereadable(git) == 1 then -- a linked worktree: .git is a file
    local dir = (vim.fn.readfile(git)[1] or ''):match('^gitdir: (.*)/worktrees/[^/]+$')
    git = dir or git
  end
  local base = folder:match('^%.git/') and (git .. folder:sub(5)) or vim.fs.joinpath(top, vim.fn.expand(folder))
  return vim.tbl_map(function(path)
    return vim.fn.fnamemodify(path, ':t')
  end, vim.fn.glob(base .. '/*', false, true))
end

--- The named completion sources of the registry (`sources` in acp_nvim.host.subcommands).
local SOURCES = {
  sessions = function()
    return vim.tbl_keys(require('acp_nvim.state').sessions)
  end,
  modes = function()
    local current = require('acp_nvim.state').current()
    return current and current.modes or {}
  end,
  agents = function()
    local names = vim.list_extend({ 'demo' }, vim.tbl_keys(require('acp_nvim.config.options').config.agents))
    return vim.list_extend(names, vim.tbl_keys(require('acp_nvim.presets.registry').installed()))
  end,
  registry = function()
    local file = require('acp_nvim.presets.registry').cache_file()
    local ok, data = pcall(function()
      return vim.json.decode(table.concat(vim.fn.readfile(file), '\n'))
    end)
    return ok and type(data) == 'table' and vim.tbl_map(function(agent)
      return agent.id
    end, data.agents or {}) or {}
  end,
  installed = function()
    return vim.tbl_keys(require('acp_nvim.presets.registry').installed())
  end,
  worktrees = worktree_names,
  files = function(arglead)
    return vim.fn.getcompletion(arglead, 'file')
  end,
}

local function arg_candidates(arg, arglead)
  local out = vim.list_extend({}, arg.words or {})
  for _, source in ipairs(arg.sources or {}) do
    vim.list_extend(out, SOURCES[source](arglead))
  end
  return out
end

--- Candidates for the argument after `typed` (the words already typed after the subcommand).
local function args_candidates(args, typed, arglead)
  local arg = args and args[1]
  if not arg then
    return {}
  end
  if #typed == 0 then
    return arg_candidates(arg, arglead)
  end
  local after = arg.after and arg.after[typed[1]]
  return args_candidates(after or vim.list_slice(args, 2), vim.list_slice(typed, 2), arglead)
end

--- Completion for :Ai; never starts the Python host.
function M.complete(arglead, cmdline, _)
  local words = vim.split(cmdline, '%s+', { trimempty = true })
  local nth = #words + (cmdline:match('%s$') and 1 or 0)
  local candidates
  if nth <= 2 then
    candidates = vim.tbl_map(function(sub)
      return sub.name
    end, registry().list)
  else
    local spec = select(2, registry())[words[2]]
    candidates = spec and args_candidates(spec.args, vim.list_slice(words, 3, nth - 1), arglead) or {}
  end
  local seen = {}
  return vim.tbl_filter(function(c)
    local fresh = not seen[c] and vim.startswith(c, arglead)
    seen[c] = true
    return fresh
  end, candidates)
end

return M
