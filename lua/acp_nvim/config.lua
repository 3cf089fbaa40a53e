--- Configuration: defaults and key-by-key validation (errors name the key path).
local M = {}

-- Every default, bound and choice comes from the Python models (python/acp_nvim/core/config.py),
-- generated into acp_nvim.config_schema by `make docs`: this file keeps only the checks a table
-- cannot say (agents, MCP servers, default_agent). See :help acp_nvim-config.
local schema = require('acp_nvim.config_schema')

M.defaults = schema.defaults

local function fail(path, msg)
  error(('acp_nvim.setup: %s: %s'):format(path, msg), 0)
end

local function expect(path, value, kind)
  if type(value) ~= kind then
    fail(path, ('expected %s, got %s'):format(kind, type(value)))
  end
end

local function set_of(list)
  local set = {}
  for _, item in ipairs(list) do
    set[item] = true
  end
  return set
end

local MCP_STDIO_KEYS = set_of(schema.mcp_keys.stdio)
local MCP_REMOTE_KEYS = set_of(schema.mcp_keys.remote)

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
      local names = table.concat(kind == 'stdio' and schema.mcp_keys.stdio or schema.mcp_keys.remote, ', ')
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
local AGENT_KEYS = table.concat(schema.agent_keys, ', ')

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
  if key == 'terminal' or key == 'warm' or key == 'bills_per_session' then -- warm: |acp_nvim-warm|
    expect(path .. '.' .. key, value, 'boolean')
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

-- the checks of the schema: types, bounds, choices, closed tables --------------

local function lookup(config, path)
  local value = config
  for part in path:gmatch('[^.]+') do
    if type(value) ~= 'table' then
      return nil
    end
    value = value[part]
  end
  return value
end

local function check_number(check, value)
  expect(check.path, value, 'number')
  if (check.type == 'integer' and value ~= math.floor(value))
    or (check.min and value < check.min)
    or (check.above and value <= check.above)
    or (check.max and value > check.max)
  then
    fail(check.path, check.message)
  end
end

local function check_section(check, value)
  expect(check.path, value, 'table')
  if not check.keys then
    return
  end
  local known = set_of(check.keys)
  for key in pairs(value) do
    if not known[key] then
      fail(check.path .. '.' .. tostring(key), 'unknown key (known: ' .. table.concat(check.keys, ', ') .. ')')
    end
  end
end

local function check_strings(path, value)
  expect(path, value, 'table')
  for i, item in ipairs(value) do
    expect(('%s[%d]'):format(path, i), item, 'string')
  end
end

--- Check `value`, found at `check.path`; false when the keys below it are not to be checked.
local function check_value(check, value)
  if check.may_be_false and value == false then
    return false
  end
  if check.type == 'section' then
    check_section(check, value)
  elseif check.type == 'integer' or check.type == 'number' then
    check_number(check, value)
  elseif check.type == 'strings' then
    check_strings(check.path, value)
  else
    expect(check.path, value, check.type)
    if check.choices and not vim.tbl_contains(check.choices, value) then
      fail(check.path, check.message)
    end
  end
  return true
end

local function check_schema(config)
  local skipped = {}
  for _, check in ipairs(schema.checks) do
    local parent = check.path:match('^(.*)%.[^.]+$')
    if (parent and skipped[parent]) or not check_value(check, lookup(config, check.path)) then
      skipped[check.path] = true
    end
  end
end

--- Validate a merged configuration; raises with the offending key path.
function M.validate(config)
  expect('agents', config.agents, 'table')
  for name, agent in pairs(config.agents) do
    validate_agent(name, agent)
  end
  check_schema(config)
  if config.default_agent ~= 'demo' and not config.agents[config.default_agent] then
    fail('default_agent', ('no agent named %q in agents'):format(config.default_agent))
  end
  validate_mcp_servers('mcp_servers', config.mcp_servers)
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
  M.validate(merged)
  for name, lhs in pairs(merged.keymaps) do
    if lhs == false then -- false turns a key off, as '' does; the views test for ''
      merged.keymaps[name] = ''
    end
  end
  return merged
end

return M
