--- Configuration: defaults and key-by-key validation (errors name the key path).
local M = {}

M.defaults = {
  -- Agents are data: { command = "...", args = { ... }, env = { ... }, cwd = nil, mode = nil }
  -- (mode: the agent's session mode to select on start; presets set it, see acp_nvim.presets).
  -- The bundled offline demo agent is always available as "demo".
  agents = {},
  default_agent = 'demo',
  -- Folders besides the working directory that the agent may read and write through the
  -- editor (fs requests); paths outside them are refused.
  workspace_roots = {},
  log = { max_entries = 5000, max_bytes = 8 * 1024 * 1024, level = 'debug' },
  -- Local session history for :Ai resume (false: keep none). Records per working directory,
  -- and bytes per record (the oldest turns of a longer one are dropped).
  history = { max_sessions = 200, max_bytes = 2 * 1024 * 1024 },
  chat = {
    position = 'right', -- 'right' | 'left' | 'bottom' | 'current'
    width = 0.4, -- fraction of the editor (right/left), or columns when > 1
    height = 0.4, -- fraction of the editor (bottom), or lines when > 1
    max_block_lines = 2000, -- lines shown per transcript block; the rest is one key away
    max_line_chars = 1000, -- longer lines are broken in the chat (the full text keeps them)
  },
  permissions = {
    policy = 'ask', -- 'ask' | 'auto-edit' | 'trust': the policy new sessions start with
    close_is_reject = true, -- closing a review view rejects it (false: hides it, still pending)
  },
  keymaps = {
    send = '<C-s>', -- normal and insert mode in the chat buffer; <CR> in normal mode in the prompt area too
    cancel = '<C-c>', -- normal mode in the chat buffer
    open = '<CR>', -- normal mode on a block: its full text, its diff, or the location under the cursor
    locations = 'gl', -- normal mode: tool call locations to the quickfix list
    history_prev = '<M-p>', -- normal and insert mode: the previous sent prompt
    history_next = '<M-n>', -- normal and insert mode: the next sent prompt
  },
}

local LEVELS = { trace = true, debug = true, info = true, warn = true, error = true }

local function fail(path, msg)
  error(('acp_nvim.setup: %s: %s'):format(path, msg), 0)
end

local function expect(path, value, kind)
  if type(value) ~= kind then
    fail(path, ('expected %s, got %s'):format(kind, type(value)))
  end
end

local function validate_agent(name, agent)
  local path = 'agents.' .. name
  expect(path, agent, 'table')
  expect(path .. '.command', agent.command, 'string')
  if agent.command == '' then
    fail(path .. '.command', 'must not be empty')
  end
  for key, value in pairs(agent) do
    if key == 'args' then
      expect(path .. '.args', value, 'table')
      for i, arg in ipairs(value) do
        expect(('%s.args[%d]'):format(path, i), arg, 'string')
      end
    elseif key == 'env' then
      expect(path .. '.env', value, 'table')
      for k, v in pairs(value) do
        expect(('%s.env.%s'):format(path, k), v, 'string')
      end
    elseif key == 'cwd' or key == 'mode' then
      expect(path .. '.' .. key, value, 'string')
    elseif key ~= 'command' then
      fail(path .. '.' .. tostring(key), 'unknown key (known: command, args, env, cwd, mode)')
    end
  end
end

--- Validate a merged configuration; raises with the offending key path.
-- sessions lane (issue 14): history = false | { max_sessions, max_bytes }
local HISTORY_MIN = { max_sessions = 1, max_bytes = 1024 }

local function validate_history(history)
  if history == false then
    return
  end
  expect('history', history, 'table')
  for key, min in pairs(HISTORY_MIN) do
    expect('history.' .. key, history[key], 'number')
    if history[key] < min or history[key] ~= math.floor(history[key]) then
      fail('history.' .. key, ('expected a whole number >= %d'):format(min))
    end
  end
end

function M.validate(config)
  expect('agents', config.agents, 'table')
  for name, agent in pairs(config.agents) do
    validate_agent(name, agent)
  end
  expect('default_agent', config.default_agent, 'string')
  if config.default_agent ~= 'demo' and not config.agents[config.default_agent] then
    fail('default_agent', ('no agent named %q in agents'):format(config.default_agent))
  end
  expect('workspace_roots', config.workspace_roots, 'table')
  for i, root in ipairs(config.workspace_roots) do
    expect(('workspace_roots[%d]'):format(i), root, 'string')
  end
  for _, key in ipairs({ 'max_entries', 'max_bytes' }) do
    local value = config.log[key]
    expect('log.' .. key, value, 'number')
    if value < 0 or value ~= math.floor(value) then
      fail('log.' .. key, 'expected a whole number >= 0 (0 turns the log off)')
    end
  end
  if not LEVELS[config.log.level] then
    fail('log.level', 'expected one of trace, debug, info, warn, error')
  end
  validate_history(config.history)
  if not vim.tbl_contains({ 'right', 'left', 'bottom', 'current' }, config.chat.position) then
    fail('chat.position', "expected 'right', 'left', 'bottom' or 'current'")
  end
  expect('chat.width', config.chat.width, 'number')
  expect('chat.height', config.chat.height, 'number')
  if not vim.tbl_contains({ 'ask', 'auto-edit', 'trust' }, config.permissions.policy) then
    fail('permissions.policy', "expected 'ask', 'auto-edit' or 'trust'")
  end
  expect('permissions.close_is_reject', config.permissions.close_is_reject, 'boolean')
  for _, name in ipairs({ 'max_block_lines', 'max_line_chars' }) do
    expect('chat.' .. name, config.chat[name], 'number')
    if config.chat[name] < 1 then
      fail('chat.' .. name, 'must be at least 1')
    end
  end
  for _, name in ipairs({ 'send', 'cancel', 'open', 'locations', 'history_prev', 'history_next' }) do
    expect('keymaps.' .. name, config.keymaps[name], 'string')
  end
  return config
end

--- Merge user options over the defaults and validate the result.
function M.build(opts)
  if opts ~= nil and type(opts) ~= 'table' then
    fail('opts', 'expected a table')
  end
  local merged = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  -- agents replace wholesale: merging a user's args list into defaults would make no sense
  merged.agents = vim.deepcopy((opts or {}).agents or {})
  return M.validate(merged)
end

return M
