--- Presets: how to launch well-known ACP agents, and the settings that make the permission
--- policy true for each. A preset is a template: it returns an ordinary agent table
--- ({ command, args, env, mode }) that you put under `agents` in setup():
---
---   require('acp_nvim').setup({
---     agents = { claude = require('acp_nvim.presets').claude() },
---     default_agent = 'claude',
---   })
---
--- Every preset takes the same options (all optional):
---   policy  'ask' (default) | 'auto-edit' | 'trust': how much the agent may do unasked
---   command the executable (default: the agent's usual name on PATH)
---   args    extra arguments, appended after the preset's own
---   env     extra environment variables, merged over the preset's own
---   cwd     working directory for the agent process
---   mcp_servers  this agent's MCP servers (see :help acp_nvim-mcp)
--- See :help acp_nvim-presets.
local M = {}

local POLICIES = { ask = true, ['auto-edit'] = true, trust = true }

--- Each definition: the default command, fixed args, and per-policy settings
--- ({ args = {...}, env = {...}, mode = '...' }).
local DEFS = {
  claude = {
    command = 'claude-agent-acp',
    args = {},
    -- claude-agent-acp may start in a mode that asks nothing ('auto'): select the one that asks.
    policy = {
      ask = { mode = 'default' },
      ['auto-edit'] = { mode = 'acceptEdits' },
      trust = { mode = 'bypassPermissions' },
    },
  },
  codex = {
    -- @agentclientprotocol/codex-acp. It starts in 'agent' (auto review), which edits the
    -- workspace unasked; 'read-only' asks before every edit and every command that writes.
    -- 'workspace-write' edits the workspace unasked and asks to go beyond it.
    command = 'codex-acp',
    args = {},
    policy = {
      ask = { mode = 'read-only' },
      ['auto-edit'] = { mode = 'workspace-write' },
      trust = { mode = 'agent-full-access' },
    },
  },
  gemini = {
    command = 'gemini',
    args = { '--acp' },
    policy = {
      ask = { mode = 'default' },
      ['auto-edit'] = { mode = 'autoEdit' },
      trust = { mode = 'yolo' },
    },
  },
  opencode = {
    command = 'opencode',
    args = { 'acp' },
    -- Without a permission block opencode asks nothing at all.
    policy = {
      ask = { env = { OPENCODE_PERMISSION = '{"edit":"ask","bash":"ask","webfetch":"ask"}' } },
      ['auto-edit'] = { env = { OPENCODE_PERMISSION = '{"edit":"allow","bash":"ask","webfetch":"ask"}' } },
      trust = { env = { OPENCODE_PERMISSION = '{"edit":"allow","bash":"allow","webfetch":"allow"}' } },
    },
  },
  goose = { command = 'goose', args = { 'acp' } },
  qwen = { command = 'qwen', args = { '--acp' } },
  kimi = { command = 'kimi', args = { 'acp' } },
  copilot = { command = 'copilot', args = { '--acp', '--stdio' } },
}

--- Names of every shipped preset, sorted.
M.names = vim.tbl_keys(DEFS)
table.sort(M.names)

local function fail(name, msg)
  error(('acp_nvim.presets.%s: %s'):format(name, msg), 0)
end

local function check_opts(name, opts)
  if opts ~= nil and type(opts) ~= 'table' then
    fail(name, 'expected an options table')
  end
  opts = opts or {}
  local policy = opts.policy or 'ask'
  if not POLICIES[policy] then
    fail(name, ("policy: expected 'ask', 'auto-edit' or 'trust', got %s"):format(vim.inspect(policy)))
  end
  for key in pairs(opts) do
    if not vim.tbl_contains({ 'policy', 'command', 'args', 'env', 'cwd', 'mcp_servers' }, key) then
      fail(name, ('unknown option %q (known: policy, command, args, env, cwd, mcp_servers)'):format(tostring(key)))
    end
  end
  return opts, policy
end

--- Build the agent table of preset `name` with `opts` (see the top of this file).
---@param name string
---@param opts table|nil
---@return table
function M.build(name, opts)
  local def = DEFS[name]
  if not def then
    error(('acp_nvim.presets: no preset %q (known: %s)'):format(tostring(name), table.concat(M.names, ', ')), 0)
  end
  local policy
  opts, policy = check_opts(name, opts)
  local extra = (def.policy or {})[policy] or {}
  local agent = {
    command = opts.command or def.command,
    args = vim.list_extend(vim.list_extend(vim.deepcopy(def.args), extra.args or {}), opts.args or {}),
    env = vim.tbl_extend('force', {}, extra.env or {}, opts.env or {}),
    mode = extra.mode,
    cwd = opts.cwd,
    mcp_servers = opts.mcp_servers and vim.deepcopy(opts.mcp_servers) or nil,
  }
  return agent
end

for _, preset in ipairs(M.names) do
  M[preset] = function(opts)
    return M.build(preset, opts)
  end
end

return M
