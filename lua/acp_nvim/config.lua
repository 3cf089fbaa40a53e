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
  -- MCP servers for every agent, by name: { command, args, env } (stdio) or
  -- { type = 'http' | 'sse', url, headers }. agents.<name>.mcp_servers adds to them and wins;
  -- `false` there removes a global one. See :help acp_nvim-mcp.
  mcp_servers = {},
  editor_mcp = true, -- offer the editor itself as the MCP server "nvim" (diagnostics, buffers, LSP)
  media = { max_bytes = 5 * 1024 * 1024 }, -- images and audio in prompts (@shot.png, :Ai paste)
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
    -- A prompt sent while a turn runs is steered into it where the agent offers steering
    -- (:help acp_nvim-steering); false: it waits in the queue. keymaps.steer switches the next one.
    steer = true,
  },
  -- Secrets are replaced by [redacted] in the chat, notifications, the log and its export
  -- (:help acp_nvim-redaction). patterns: your own, as Python regular expressions.
  redaction = { patterns = {} },
  permissions = {
    policy = 'ask', -- 'ask' | 'auto-edit' | 'trust': the policy new sessions start with
    close_is_reject = true, -- closing a review view rejects it (false: hides it, still pending)
    -- A prompt or review never takes the keys you type (:help acp_nvim-permission-keys):
    focus = 'idle', -- 'idle': it enters its window only when you are in normal mode and not typing;
    --                 'never': it never does (go to it with :Ai permissions or keymaps.permissions)
    arm_ms = 500, -- its keys count only once it has been visible this long (0..10000) ...
    quiet_ms = 300, -- ... and no key was typed this long before the one that answers (0..10000)
    -- copies of rejected proposals kept in stdpath('state')/acp_nvim/rejected (0: no bound)
    rejected = { max_files = 200, max_age_days = 30, max_bytes = 50 * 1024 * 1024 },
  },
  -- commands agents run through terminal/* (pty jobs in terminal buffers)
  terminals = {
    output_limit = 1024 * 1024, -- bytes of output kept per terminal when the agent names no limit
    max_output_limit = 16 * 1024 * 1024, -- the most an agent's outputByteLimit may ask for
    preview_lines = 12, -- last lines of a running terminal shown live in the chat
  },
  -- Start the Python host and load the protocol once Neovim is idle after startup, so the first
  -- :Ai is ready sooner (false: start it on the first :Ai).
  prestart = true,
  -- The ACP registry of :Ai agents / :Ai install (cached, fetched again at most hourly).
  registry = { url = 'https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json' },
  -- What the agent may write on its stdout: a longer line is dropped and reported.
  wire = { max_line_bytes = 128 * 1024 * 1024 },
  keymaps = {
    send = '<C-s>', -- normal and insert mode in the chat buffer; <CR> in normal mode in the prompt area too
    cancel = '<C-c>', -- normal mode in the chat buffer
    open = '<CR>', -- normal mode on a block: its full text, its diff, or the location under the cursor
    locations = 'gl', -- normal mode: tool call locations to the quickfix list
    history_prev = '<M-p>', -- normal and insert mode: the previous sent prompt
    history_next = '<M-n>', -- normal and insert mode: the next sent prompt
    permissions = '<M-a>', -- normal and insert mode: go to the pending permission prompt or review
    restart = '<C-r>', -- normal mode: restart the agent and reopen the session (like :Ai restart)
    steer = '<M-s>', -- normal and insert mode: the next prompt during a turn is queued instead of steered (or back)
    -- after a failed prompt (:help acp_nvim-failures), in normal mode outside the prompt area;
    -- elsewhere, and when nothing failed, these keys do what they always do
    retry = 'R', -- send the failed prompt again
    login = 'L', -- :Ai login
    new_session = 'N', -- a new session of the same agent, which gets the failed prompt
    wait = 'W', -- after a usage limit with a known reset time: retry automatically then
  },
  -- Seconds acp.nvim waits for an agent (see :help acp_nvim-faults).
  timeouts = {
    handshake = 60, -- each handshake request (initialize, session/new, load, resume, set_mode); then it fails
    login = 300, -- authenticate (a login may wait for you in a browser)
    notice = 8, -- no answer (or, in a turn, no output while no tool runs) for this long: the chat says so
    cancel = 5, -- the agent must end a cancelled turn within this; then it is shown as ignoring the cancel
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

local MCP_STDIO_KEYS = { type = true, command = true, args = true, env = true }
local MCP_REMOTE_KEYS = { type = true, url = true, headers = true }

local function validate_strings(path, value, list)
  expect(path, value, 'table')
  for k, v in pairs(value) do
    if list and type(k) ~= 'number' then
      fail(path, 'expected a list of strings')
    end
    expect(list and ('%s[%d]'):format(path, k) or ('%s.%s'):format(path, k), v, 'string')
  end
end

local function validate_mcp_server(path, server)
  if server == false then
    return
  end
  expect(path, server, 'table')
  local kind = server.type or 'stdio'
  if kind == 'stdio' then
    expect(path .. '.command', server.command, 'string')
    if server.command == '' then
      fail(path .. '.command', 'must not be empty')
    end
    validate_strings(path .. '.args', server.args or {}, true)
    validate_strings(path .. '.env', server.env or {}, false)
  elseif kind == 'http' or kind == 'sse' then
    expect(path .. '.url', server.url, 'string')
    if not server.url:match('^https?://') then
      fail(path .. '.url', 'expected an http:// or https:// URL')
    end
    validate_strings(path .. '.headers', server.headers or {}, false)
  else
    fail(path .. '.type', "expected 'stdio', 'http' or 'sse'")
  end
  local known = kind == 'stdio' and MCP_STDIO_KEYS or MCP_REMOTE_KEYS
  for key in pairs(server) do
    if not known[key] then
      local names = kind == 'stdio' and 'type, command, args, env' or 'type, url, headers'
      fail(path .. '.' .. tostring(key), ('unknown key (known: %s)'):format(names))
    end
  end
end

--- Validate an `mcp_servers` table (global or an agent's): names to servers, or `false`.
local function validate_mcp_servers(path, servers)
  expect(path, servers, 'table')
  for name, server in pairs(servers) do
    if type(name) ~= 'string' or name == '' then
      fail(path, 'expected a table of servers by name ({ name = { ... } })')
    end
    validate_mcp_server(path .. '.' .. name, server)
  end
end

-- remote agents and terminals: `url`, `headers`, `terminal` --------------------
local AGENT_KEYS = 'command, args, env, cwd, mode, mcp_servers, terminal, url, headers, insecure'

--- Whether a ws:// address names this machine (127.0.0.0/8, ::1, localhost).
local function loopback(url)
  local host = url:match('^wss?://([^/?#]*)') or ''
  host = (host:gsub('^.*@', '')):lower()
  if host:match('^%[::1%]') then
    return true
  end
  host = host:gsub(':%d*$', '')
  return host == 'localhost' or host == 'localhost.' or host:match('^127%.%d+%.%d+%.%d+$') ~= nil
end

local function validate_remote(path, agent)
  expect(path .. '.url', agent.url, 'string')
  if not (agent.url:match('^wss?://[^/]')) then
    fail(path .. '.url', "expected a 'ws://…' or 'wss://…' address")
  end
  if agent.command ~= nil then
    fail(path, 'give either command (a local agent) or url (a remote one), not both')
  end
  if agent.headers ~= nil then
    expect(path .. '.headers', agent.headers, 'table')
    for k, v in pairs(agent.headers) do
      expect(('%s.headers.%s'):format(path, k), v, 'string')
    end
  end
  if agent.insecure ~= nil then
    expect(path .. '.insecure', agent.insecure, 'boolean')
  end
  if agent.url:match('^ws://') and not loopback(agent.url) and not agent.insecure then
    fail(path .. '.url', 'ws:// is not encrypted: headers, files and the MCP token would cross the network '
      .. 'in clear text; use wss://, or set insecure = true for this agent')
  end
end

local function validate_agent_extra(path, key, value)
  if key == 'terminal' then
    expect(path .. '.terminal', value, 'boolean')
    return true
  end
  return key == 'url' or key == 'headers' or key == 'insecure' -- checked by validate_remote
end

local function validate_agent(name, agent)
  local path = 'agents.' .. name
  expect(path, agent, 'table')
  if agent.url ~= nil then
    validate_remote(path, agent)
  else
    expect(path .. '.command', agent.command, 'string')
    if agent.command == '' then
      fail(path .. '.command', 'must not be empty')
    end
    if agent.headers ~= nil then
      fail(path .. '.headers', 'only for a remote agent (url)')
    end
    if agent.insecure ~= nil then
      fail(path .. '.insecure', 'only for a remote agent (url)')
    end
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
    elseif key == 'mcp_servers' then
      validate_mcp_servers(path .. '.mcp_servers', value)
    elseif key ~= 'command' and not validate_agent_extra(path, key, value) then
      fail(path .. '.' .. tostring(key), 'unknown key (known: ' .. AGENT_KEYS .. ')')
    end
  end
end

local function whole(path, value, max)
  expect(path, value, 'number')
  if value < 0 or value ~= math.floor(value) or (max and value > max) then
    fail(path, ('expected a whole number from 0 to %s'):format(max or 'any size'))
  end
end

--- The key guard and the rejected copies (`permissions.*`, see :help acp_nvim-permission-keys).
local function validate_guard(permissions)
  if not vim.tbl_contains({ 'idle', 'never' }, permissions.focus) then
    fail('permissions.focus', "expected 'idle' or 'never'")
  end
  whole('permissions.arm_ms', permissions.arm_ms, 10000)
  whole('permissions.quiet_ms', permissions.quiet_ms, 10000)
  expect('permissions.rejected', permissions.rejected, 'table')
  for key, value in pairs(permissions.rejected) do
    if key == 'max_files' or key == 'max_bytes' then
      whole('permissions.rejected.' .. key, value)
    elseif key == 'max_age_days' then
      expect('permissions.rejected.max_age_days', value, 'number')
      if value < 0 then
        fail('permissions.rejected.max_age_days', 'expected a number >= 0')
      end
    else
      fail('permissions.rejected.' .. tostring(key), 'unknown key (known: max_files, max_age_days, max_bytes)')
    end
  end
end

local TIMEOUTS = { 'handshake', 'login', 'notice', 'cancel' }

local function validate_timeouts(timeouts)
  expect('timeouts', timeouts, 'table')
  local known = {}
  for _, name in ipairs(TIMEOUTS) do
    known[name] = true
    local value = timeouts[name]
    expect('timeouts.' .. name, value, 'number')
    if value <= 0 or value > 3600 then
      fail('timeouts.' .. name, 'expected seconds, more than 0 and at most 3600')
    end
  end
  for key in pairs(timeouts) do
    if not known[key] then
      fail('timeouts.' .. tostring(key), 'unknown key (known: ' .. table.concat(TIMEOUTS, ', ') .. ')')
    end
  end
end

-- history = false | { max_sessions, max_bytes }
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

--- Validate a merged configuration; raises with the offending key path.
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
  validate_mcp_servers('mcp_servers', config.mcp_servers)
  expect('editor_mcp', config.editor_mcp, 'boolean')
  expect('media', config.media, 'table')
  expect('media.max_bytes', config.media.max_bytes, 'number')
  if config.media.max_bytes < 0 or config.media.max_bytes ~= math.floor(config.media.max_bytes) then
    fail('media.max_bytes', 'expected a whole number of bytes >= 0')
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
  expect('chat.steer', config.chat.steer, 'boolean')
  if not vim.tbl_contains({ 'ask', 'auto-edit', 'trust' }, config.permissions.policy) then
    fail('permissions.policy', "expected 'ask', 'auto-edit' or 'trust'")
  end
  expect('permissions.close_is_reject', config.permissions.close_is_reject, 'boolean')
  expect('redaction', config.redaction, 'table')
  expect('redaction.patterns', config.redaction.patterns, 'table')
  for i, pattern in ipairs(config.redaction.patterns) do
    expect(('redaction.patterns[%d]'):format(i), pattern, 'string')
  end
  validate_guard(config.permissions)
  for _, name in ipairs({ 'max_block_lines', 'max_line_chars' }) do
    expect('chat.' .. name, config.chat[name], 'number')
    if config.chat[name] < 1 then
      fail('chat.' .. name, 'must be at least 1')
    end
  end
  for _, name in ipairs({ 'output_limit', 'max_output_limit', 'preview_lines' }) do -- terminals
    local value = config.terminals[name]
    expect('terminals.' .. name, value, 'number')
    if value < (name == 'preview_lines' and 0 or 1) or value ~= math.floor(value) then
      fail('terminals.' .. name, 'expected a whole number' .. (name == 'preview_lines' and ' >= 0' or ' >= 1'))
    end
  end
  expect('prestart', config.prestart, 'boolean')
  expect('registry', config.registry, 'table')
  expect('registry.url', config.registry.url, 'string')
  if config.python ~= nil then -- the host's Python (:help acp_nvim-host); the default: the venv of :Ai deps
    expect('python', config.python, 'string')
  end
  expect('wire', config.wire, 'table')
  expect('wire.max_line_bytes', config.wire.max_line_bytes, 'number')
  if config.wire.max_line_bytes < 1024 or config.wire.max_line_bytes ~= math.floor(config.wire.max_line_bytes) then
    fail('wire.max_line_bytes', 'expected a whole number of bytes >= 1024')
  end
  for _, name in ipairs({ 'send', 'cancel', 'open', 'locations', 'history_prev', 'history_next', 'permissions', 'restart',
    'steer', 'retry', 'login', 'new_session', 'wait' }) do
    expect('keymaps.' .. name, config.keymaps[name], 'string')
  end
  validate_timeouts(config.timeouts)
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
  -- a server replaces wholesale too (a user's http server must not inherit a default's keys)
  merged.mcp_servers = vim.deepcopy((opts or {}).mcp_servers or {})
  return M.validate(merged)
end

return M
