--- Configuration: defaults and key-by-key validation. A problem never stops the plugin: it is
--- reported once, naming its key path (and the nearest known key for a typo), and that key keeps its
--- default (an unknown key is left out; so is an agent or an MCP server that cannot be used).
--- Python validates the same table again (python/acp_nvim/core/config.py): what it receives is the
--- corrected one, so it never raises "invalid configuration" on each command.
local M = {}

-- Every default, bound and choice comes from the Python models (python/acp_nvim/core/config.py),
-- generated into acp_nvim.config.schema by `make docs`: this file keeps only the checks a table
-- cannot say (agents, MCP servers, default_agent). See :help acp_nvim-config.
local schema = require('acp_nvim.config.schema')

M.defaults = schema.defaults

-- A check raises a Problem; the guards below (checked) catch it, record it and put the default back.
local Problem = {}
Problem.__index = Problem
Problem.__tostring = function(self)
  return self.path .. ': ' .. self.msg
end

local function fail(path, msg)
  error(setmetatable({ path = path, msg = msg }, Problem), 0)
end

---@type string[]|nil the problems of the build under way
local problems

local function report(path, msg)
  if not problems then -- outside M.build (M.validate called alone): raise, as a check does
    error(('acp_nvim.setup: %s: %s'):format(path, msg), 0)
  end
  table.insert(problems, ('%s: %s'):format(path, msg))
end

--- Run `fn(...)`; a Problem it raises is returned (anything else is a bug and raises on).
local function checked(fn, ...)
  local ok, err = pcall(fn, ...)
  if ok then
    return nil
  elseif getmetatable(err) == Problem then
    return err
  end
  error(err, 0)
end

--- Edit distance between two short strings (insert, delete, change, or swap two neighbours).
local function distance(a, b)
  local d = {}
  for i = 0, #a do
    d[i] = { [0] = i }
  end
  for j = 0, #b do
    d[0][j] = j
  end
  for i = 1, #a do
    for j = 1, #b do
      local cost = a:sub(i, i) == b:sub(j, j) and 0 or 1
      d[i][j] = math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
      if i > 1 and j > 1 and a:sub(i, i) == b:sub(j - 1, j - 1) and a:sub(i - 1, i - 1) == b:sub(j, j) then
        d[i][j] = math.min(d[i][j], d[i - 2][j - 2] + 1)
      end
    end
  end
  return d[#a][#b]
end

--- The known key nearest to `key`, when it is close enough to be a typo of it.
function M.nearest(key, known)
  key = tostring(key)
  local best, best_d
  for _, name in ipairs(known) do
    local d = distance(key:lower(), name)
    if not best_d or d < best_d then
      best, best_d = name, d
    end
  end
  -- a typo: one or two edits, at most a third of the word (so `hang` is no `login`)
  if best_d and best_d <= math.min(2, math.max(1, math.floor(#best / 3))) then
    return best
  end
end

--- Report and drop the keys of `tbl` (at `path`) that are not in the list `known`.
local function drop_unknown(path, tbl, known)
  local set = {}
  for _, name in ipairs(known) do
    set[name] = true
  end
  for key in pairs(tbl) do
    if not set[key] then
      local near = M.nearest(key, known)
      report(path .. tostring(key), near and ('unknown key; did you mean %s?'):format(near)
        or ('unknown key (known: %s)'):format(table.concat(known, ', ')))
      tbl[key] = nil
    end
  end
end

local function expect(path, value, kind)
  if type(value) ~= kind then
    fail(path, ('expected %s, got %s'):format(kind, type(value)))
  end
end

local function validate_strings(path, value, list)
  expect(path, value, 'table')
  for k, v in pairs(value) do
    if list and type(k) ~= 'number' then
      fail(path, 'expected a list of strings')
    end
    expect(list and ('%s[%d]'):format(path, k) or ('%s.%s'):format(path, k), v, 'string')
  end
end

--- Check `container[name]` (found at `path`) with `validate(path, value)`. A problem below one of its
--- keys leaves that key out (it has no default: absent is the default) and checks it again; a problem
--- with the entry itself or one of its `vital` keys leaves the entry out.
local function settle(container, name, path, validate, vital)
  while container[name] ~= nil do
    local problem = checked(validate, path, container[name])
    if not problem then
      return
    end
    local key = problem.path:sub(#path + 2):match('^[^.%[]+')
    local entry = container[name]
    if key and not vital[key] and type(entry) == 'table' and entry[key] ~= nil then
      report(problem.path, problem.msg .. '; left out')
      entry[key] = nil
    else
      report(problem.path, ('%s; %s left out'):format(problem.msg, path))
      container[name] = nil
    end
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
end

local MCP_VITAL = { type = true, command = true, url = true }

--- Validate an `mcp_servers` table (global or an agent's): names to servers, or `false`.
local function validate_mcp_servers(path, servers)
  expect(path, servers, 'table')
  for name, server in pairs(servers) do
    if type(name) ~= 'string' or name == '' then
      report(path, 'expected a table of servers by name ({ name = { ... } }); left out')
      servers[name] = nil
    else
      if type(server) == 'table' then
        local http = server.type == 'http' or server.type == 'sse'
        drop_unknown(('%s.%s.'):format(path, name), server, http and schema.mcp_keys.remote or schema.mcp_keys.stdio)
      end
      settle(servers, name, path .. '.' .. name, validate_mcp_server, MCP_VITAL)
    end
  end
end

-- remote agents and terminals: `url`, `headers`, `terminal` --------------------
local AGENT_VITAL = { command = true, url = true }

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

--- `box`: false, or { enabled, paths, writable, state, env } (|acp_nvim-box|).
local function validate_box(path, value)
  if value == false then
    return
  end
  expect(path, value, 'table')
  for key, item in pairs(value) do
    local where = path .. '.' .. tostring(key)
    if key == 'enabled' then
      expect(where, item, 'boolean')
    elseif key == 'paths' or key == 'writable' or key == 'state' or key == 'env' then
      expect(where, item, 'table')
      for i, entry in ipairs(item) do
        expect(('%s[%d]'):format(where, i), entry, 'string')
      end
    else
      fail(where, 'unknown key (known: enabled, paths, writable, state, env)')
    end
  end
end

local function validate_agent_extra(path, key, value)
  if key == 'box' then
    validate_box(path .. '.box', value)
    return true
  end
  if key == 'terminal' or key == 'warm' or key == 'bills_per_session' then -- warm: |acp_nvim-warm|
    expect(path .. '.' .. key, value, 'boolean')
    return true
  end
  return key == 'url' or key == 'headers' or key == 'insecure' -- checked by validate_remote
end

local function validate_agent(path, agent)
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
    elseif key ~= 'command' then
      validate_agent_extra(path, key, value)
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
  if check.keys then
    drop_unknown(check.path .. '.', value, check.keys)
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

--- Put `value` at `path` (its parent is a table: parents are checked, and defaulted, first).
local function assign(config, path, value)
  local parent, key = path:match('^(.*)%.([^.]+)$')
  local tbl = parent and lookup(config, parent) or config
  tbl[key or path] = value
end

local function check_schema(config)
  local skipped = {}
  for _, check in ipairs(schema.checks) do
    local parent = check.path:match('^(.*)%.[^.]+$')
    if parent and skipped[parent] then
      skipped[check.path] = true
    else
      local ok, result = pcall(check_value, check, lookup(config, check.path))
      if not ok then
        if getmetatable(result) ~= Problem then
          error(result, 0)
        end
        report(result.path, result.msg .. '; using the default')
        assign(config, check.path, vim.deepcopy(lookup(M.defaults, check.path)))
        skipped[check.path] = true -- the default is valid below
      elseif result == false then
        skipped[check.path] = true
      end
    end
  end
end

--- Check a merged configuration, in place: each problem is recorded (see M.build) and its key gets
--- its default (or is left out). Returns the configuration.
function M.validate(config)
  if type(config.agents) ~= 'table' then
    report('agents', ('expected table, got %s; using the default'):format(type(config.agents)))
    config.agents = {}
  end
  for name, agent in pairs(config.agents) do
    local path = 'agents.' .. tostring(name)
    if type(agent) == 'table' then
      drop_unknown(path .. '.', agent, schema.agent_keys)
    end
    settle(config.agents, name, path, validate_agent, AGENT_VITAL)
  end
  check_schema(config)
  if config.default_agent ~= 'demo' and not config.agents[config.default_agent] then
    report('default_agent', ("no agent named %q in agents; using 'demo'"):format(config.default_agent))
    config.default_agent = 'demo'
  end
  local problem = checked(validate_mcp_servers, 'mcp_servers', config.mcp_servers)
  if problem then
    report(problem.path, problem.msg .. '; using the default')
    config.mcp_servers = {}
  end
  return config
end

--- Merge user options over the defaults and check the result. Never raises for a user's mistake:
--- returns the configuration (each bad key on its default) and the problems found, each one line
--- "path: what is wrong; what was done".
---@return table config
---@return string[] problems
function M.build(opts)
  problems = {}
  local found = problems
  if opts ~= nil and type(opts) ~= 'table' then
    report('opts', ('expected a table, got %s; using the defaults'):format(type(opts)))
    opts = nil
  end
  opts = vim.deepcopy(opts or {}) -- the user's table stays as they wrote it
  drop_unknown('', opts, schema.top_keys)
  local merged = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts)
  -- agents replace wholesale: merging a user's args list into defaults would make no sense
  merged.agents = opts.agents or {}
  -- a server replaces wholesale too (a user's http server must not inherit a default's keys)
  merged.mcp_servers = opts.mcp_servers or {}
  local ok, err = pcall(M.validate, merged)
  problems = nil
  if not ok then
    error(err, 0)
  end
  for name, lhs in pairs(merged.keymaps) do
    if lhs == false then -- false turns a key off, as '' does; the views test for ''
      merged.keymaps[name] = ''
    end
  end
  return merged, found
end

return M
