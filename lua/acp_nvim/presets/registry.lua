--- Agents from the ACP registry (registry.json: agents with `npx`, `binary` and `uvx` distributions):
--- :Ai agents (a picker), :Ai install {id}, :Ai update [id], :Ai uninstall {id}. Pure Lua, no host.
--- The registry is cached under stdpath('cache'), one file per URL, and fetched again at most hourly;
--- offline, the cache serves; a failed fetch says why and keeps it. With no cache, the dated snapshot
--- shipped with the plugin (data/acp_registry_snapshot.json) serves, marked as such.
--- An agent is installed under
--- stdpath('data')/acp_nvim/agents/{id}/{version} with a manifest (agent.json: command, args, env),
--- so it runs with nothing fetched at its start and needs no setup() line.
local M = {}

M.DEFAULT_URL = 'https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json'
M.MAX_AGE = 3600 -- seconds a fetched registry is used before it is fetched again
local MANIFEST = 'agent.json'

--- Presets (acp_nvim.presets) by the registry id they serve: their permission settings apply.
M.PRESETS = {
  ['claude-acp'] = 'claude', ['claude-code'] = 'claude', ['claude-agent-acp'] = 'claude',
  ['codex-acp'] = 'codex', codex = 'codex', gemini = 'gemini', ['gemini-cli'] = 'gemini',
  opencode = 'opencode', goose = 'goose', ['qwen-code'] = 'qwen', kimi = 'kimi', ['kimi-cli'] = 'kimi',
  ['github-copilot'] = 'copilot', ['github-copilot-cli'] = 'copilot',
}

local function say(msg, level)
  require('acp_nvim.kit.notify').notify('[acp.nvim] ' .. msg, level or vim.log.levels.INFO)
end

--- Ask `prompt` with `choices` (texts) through vim.ui.select (non-blocking); `done(index | nil)`.
local function confirm(prompt, choices, done)
  vim.ui.select(choices, { prompt = prompt }, function(_, index)
    done(index)
  end)
end

local function waits()
  return #vim.api.nvim_list_uis() == 0
end

--- Run `argv`; `done(result)` on the main loop. Without a UI it waits (a build step, a test).
local function run(argv, opts, done)
  local ok, job = pcall(vim.system, argv, vim.tbl_extend('force', { text = true }, opts or {}),
    (not waits()) and vim.schedule_wrap(done) or nil)
  if not ok then
    return done({ code = -1, stderr = tostring(job), stdout = '' })
  end
  if waits() then
    done(job:wait())
  end
end

local function last_lines(result)
  local text = vim.trim((result.stderr or '') .. '\n' .. (result.stdout or ''))
  local lines = vim.split(text, '\n')
  return table.concat(vim.list_slice(lines, math.max(1, #lines - 4)), '\n')
end

function M.url()
  local ok, config = pcall(function()
    return require('acp_nvim.config.options').config
  end)
  local registry = ok and config.registry or nil
  return (type(registry) == 'table' and type(registry.url) == 'string' and registry.url ~= '') and registry.url
    or M.DEFAULT_URL
end

--- The cache of the registry at `url` (default: M.url()): one file per URL, so changing
--- `registry.url` never shows another registry's agents.
function M.cache_file(url)
  return ('%s/acp_nvim/registry-%s.json'):format(vim.fn.stdpath('cache'), vim.fn.sha256(url or M.url()):sub(1, 16))
end

--- The snapshot of the ACP registry shipped with the plugin: its path.
function M.snapshot_file()
  local here = debug.getinfo(1, 'S').source:sub(2)
  return vim.fn.fnamemodify(here, ':h:h:h:h') .. '/data/acp_registry_snapshot.json'
end

function M.agents_dir()
  return vim.fn.stdpath('data') .. '/acp_nvim/agents'
end

local function read_json(path)
  local ok, text = pcall(vim.fn.readfile, path)
  if not ok or #text == 0 then
    return nil
  end
  local decoded_ok, decoded = pcall(vim.json.decode, table.concat(text, '\n'))
  return decoded_ok and type(decoded) == 'table' and decoded or nil
end

local function cached()
  local data = read_json(M.cache_file())
  return data and type(data.agents) == 'table' and data or nil
end

--- The shipped snapshot, marked with why it is used (`snapshot = { date, why }`), or nil.
local function snapshot(why)
  local data = read_json(M.snapshot_file())
  if not (data and type(data.agents) == 'table' and type(data.snapshot) == 'table') then
    return nil
  end
  data.snapshot.why = why
  return data
end

--- "install it: {line}" for agent `name` run as `command` (the preset's install line, and
--- `:Ai install {id}` when the registry knows it), or '' (data/agent_install.json; the Python side,
--- core/install_hints.py, says the same when the agent does not start).
function M.install_line(name, command)
  local hints = read_json(vim.fn.fnamemodify(M.snapshot_file(), ':h') .. '/agent_install.json') or {}
  local base = vim.fn.fnamemodify(tostring(command or ''), ':t')
  local lines, renamed = hints.lines or {}, hints.registry_ids or {}
  local ways = type(lines[base]) == 'string' and { lines[base] } or {}
  local ids = M.known_ids()
  for _, candidate in ipairs({ name, base }) do
    local id = renamed[candidate] or candidate
    if vim.tbl_contains(ids, id) then
      ways[#ways + 1] = ':Ai install ' .. id
      break
    end
  end
  return #ways > 0 and ('install it: ' .. table.concat(ways, ' or ')) or ''
end

--- The agent ids the registry knows without fetching it: the cache of M.url(), else the snapshot.
function M.known_ids()
  local data = cached() or snapshot('') or { agents = {} }
  local ids = {}
  for _, agent in ipairs(data.agents) do
    if type(agent) == 'table' and type(agent.id) == 'string' then
      ids[#ids + 1] = agent.id
    end
  end
  return ids
end

--- The registry, to `done(registry|nil)`: the cache while it is younger than MAX_AGE (or `force`
--- is false and the fetch fails), else fetched from M.url().
function M.load(done, force)
  local file = M.cache_file()
  local age = os.time() - vim.fn.getftime(file)
  local have = cached()
  if have and not force and vim.fn.getftime(file) > 0 and age < M.MAX_AGE then
    return done(have)
  end
  vim.fn.mkdir(vim.fn.fnamemodify(file, ':h'), 'p')
  local part = file .. '.part'
  run({ 'curl', '-fsSL', '--max-time', '30', '-o', part, M.url() }, {}, function(result)
    local fresh = result.code == 0 and read_json(part)
    if fresh and type(fresh.agents) == 'table' then
      vim.fn.rename(part, file)
      return done(fresh)
    end
    vim.fn.delete(part)
    local why = result.code ~= 0 and last_lines(result) or 'not a registry (no "agents" list)'
    if have then
      say(('the agent registry %s could not be fetched (%s); using the copy of %s'):format(M.url(), why,
        os.date('%Y-%m-%d %H:%M', vim.fn.getftime(file))), vim.log.levels.WARN)
      return done(have)
    end
    why = why:gsub('%s*\n%s*', ' ')
    local shipped = snapshot(why)
    if shipped then
      say(('the agent registry %s could not be fetched (%s); using the snapshot of %s shipped with acp.nvim')
        :format(M.url(), why, tostring(shipped.snapshot.date)), vim.log.levels.WARN)
      return done(shipped)
    end
    say(('the agent registry %s could not be fetched: %s'):format(M.url(), why), vim.log.levels.ERROR)
    done(nil)
  end)
end

--- The installed agents: { [id] = manifest } (the newest version of each).
function M.installed()
  local out = {}
  for _, path in ipairs(vim.fn.glob(M.agents_dir() .. '/*/*/' .. MANIFEST, false, true)) do
    local manifest = read_json(path)
    if manifest and type(manifest.id) == 'string' then
      local have = out[manifest.id]
      if not have or vim.version.lt(have.version or '0', manifest.version or '0') then
        out[manifest.id] = manifest
      end
    end
  end
  return out
end

--- This machine's key in a binary distribution (darwin-aarch64, linux-x86_64, …).
function M.platform()
  local uname = vim.uv.os_uname()
  local os_name = ({ Darwin = 'darwin', Linux = 'linux', Windows_NT = 'windows' })[uname.sysname]
    or uname.sysname:lower()
  local arch = ({ x86_64 = 'x86_64', amd64 = 'x86_64', arm64 = 'aarch64', aarch64 = 'aarch64' })[uname.machine]
    or uname.machine
  return os_name .. '-' .. arch
end

--- The distribution acp.nvim installs: kind ('npx' | 'binary' | 'uvx') and its table, or nil.
function M.distribution(agent)
  local dist = type(agent.distribution) == 'table' and agent.distribution or {}
  if type(dist.npx) == 'table' and dist.npx.package then
    return 'npx', dist.npx
  end
  if type(dist.binary) == 'table' and type(dist.binary[M.platform()]) == 'table' then
    return 'binary', dist.binary[M.platform()]
  end
  if type(dist.uvx) == 'table' and dist.uvx.package then
    return 'uvx', dist.uvx
  end
end

local function kinds(agent)
  local dist = type(agent.distribution) == 'table' and agent.distribution or {}
  return table.concat(vim.tbl_filter(function(k)
    return dist[k] ~= nil
  end, { 'npx', 'binary', 'uvx' }), '/')
end

-- npm names a package `@scope/name@1.2.3` or `name@1.2.3`: the name without the version
local function npm_name(package)
  return package:match('^(@[^@/]+/[^@]+)') or package:match('^([^@]+)')
end

local function npm_bin(dir, package)
  local info = read_json(('%s/node_modules/%s/package.json'):format(dir, npm_name(package)))
  local bin = info and info.bin
  if type(bin) == 'string' then
    return dir .. '/node_modules/' .. npm_name(package) .. '/' .. bin
  end
  if type(bin) == 'table' then
    local names = vim.tbl_keys(bin)
    table.sort(names)
    local short = npm_name(package):match('([^/]+)$')
    return dir .. '/node_modules/.bin/' .. (bin[short] and short or names[1])
  end
end

local function sha256(path)
  local ok, result = pcall(function()
    return vim.system({ 'sha256sum', path }, { text = true }):wait()
  end)
  if not ok or result.code ~= 0 then
    result = vim.system({ 'shasum', '-a', '256', path }, { text = true }):wait()
  end
  return (result.stdout or ''):match('^(%x+)')
end

local function unpack_argv(archive, dir)
  if archive:match('%.zip$') then
    return { 'unzip', '-q', '-o', archive, '-d', dir }
  elseif archive:match('%.tar%.gz$') or archive:match('%.tgz$') then
    return { 'tar', '-xzf', archive, '-C', dir }
  elseif archive:match('%.tar%.bz2$') then
    return { 'tar', '-xjf', archive, '-C', dir }
  elseif archive:match('%.tar%.xz$') then
    return { 'tar', '-xJf', archive, '-C', dir }
  elseif archive:match('%.tar$') then
    return { 'tar', '-xf', archive, '-C', dir }
  end
end

--- Whether `path` lies inside `dir` (both absolute, normalized; `dir` itself is not inside).
local function within(path, dir)
  return path:sub(1, #dir + 1) == dir .. '/' and #path > #dir + 1
end

--- The problem with a registry `cmd` as written (nil when it names a path below the install
--- folder): never absolute, never a `..`, never empty.
local function cmd_problem(cmd)
  if type(cmd) ~= 'string' or cmd == '' then
    return 'names no command'
  end
  if cmd:sub(1, 1) == '/' or cmd:sub(1, 1) == '~' or cmd:find('\\', 1, true) or cmd:match('^%a:') then
    return ('has an absolute cmd %q'):format(cmd)
  end
  for part in cmd:gmatch('[^/]+') do
    if part == '..' then
      return ('has a cmd %q that climbs out of its folder (..)'):format(cmd)
    end
  end
  if cmd:gsub('^%./', ''):gsub('/+$', '') == '' or cmd:match('^[./]*$') then
    return ('has a cmd %q that names no file'):format(cmd)
  end
end

--- The problem with the file `cmd` names below `dir` once it is there (nil when it is a regular
--- file reached through real folders only): checked with lstat, no link followed.
local function landed_problem(dir, cmd)
  local at = dir
  local parts = vim.tbl_filter(function(part)
    return part ~= '' and part ~= '.'
  end, vim.split(cmd, '/', { plain = true }))
  for index, part in ipairs(parts) do
    at = at .. '/' .. part
    local stat = vim.uv.fs_lstat(at)
    if not stat then
      return ('the archive has no %s'):format(cmd)
    end
    if stat.type == 'link' then
      return ('%s in the archive is a link (%s): acp.nvim installs no command through a link'):format(
        table.concat(vim.list_slice(parts, 1, index), '/'), tostring(vim.uv.fs_readlink(at)))
    end
    if index < #parts and stat.type ~= 'directory' then
      return ('the archive has no %s'):format(cmd)
    end
    if index == #parts and stat.type ~= 'file' then
      return ('%s in the archive is not a file'):format(cmd)
    end
  end
end

--- The first link below `dir` that leads outside it (or nowhere): "path -> target", or nil.
local function escaping_link(dir)
  local real_dir = vim.uv.fs_realpath(dir) or dir
  for name, kind in vim.fs.dir(dir, { depth = 64 }) do
    if kind == 'link' then
      local path = dir .. '/' .. name
      local real = vim.uv.fs_realpath(path)
      if not real or not within(real, real_dir) then
        return ('%s -> %s'):format(name, tostring(vim.uv.fs_readlink(path)))
      end
    end
  end
end

-- each installer: (agent, dist, dir, done(manifest | nil, why))
local INSTALL = {}

-- The lifecycle scripts npm runs on install: code from the package (and its dependencies), run as you.
local INSTALL_SCRIPTS = { 'preinstall', 'install', 'postinstall', 'prepare' }

--- The installed packages of `dir` that have install scripts npm left out: { 'name (postinstall: …)' }.
local function skipped_scripts(dir)
  local found = {}
  local files = vim.fn.glob(dir .. '/node_modules/*/package.json', false, true)
  vim.list_extend(files, vim.fn.glob(dir .. '/node_modules/@*/*/package.json', false, true))
  for _, file in ipairs(files) do
    local info = read_json(file) or {}
    local scripts = type(info.scripts) == 'table' and info.scripts or {}
    for _, name in ipairs(INSTALL_SCRIPTS) do
      if type(scripts[name]) == 'string' then
        found[#found + 1] = ('%s (%s: %s)'):format(tostring(info.name or vim.fs.basename(vim.fs.dirname(file))),
          name, scripts[name])
      end
    end
    if scripts.install == nil and vim.uv.fs_stat(vim.fs.dirname(file) .. '/binding.gyp') then
      found[#found + 1] = ('%s (install: node-gyp rebuild)'):format(tostring(info.name))
    end
  end
  return found
end

M.RUN_SCRIPTS = 'run their install scripts (npm rebuild): code from those packages runs as you'
M.SKIP_SCRIPTS = 'leave the scripts out (the agent may not work without them)'

function INSTALL.npx(agent, dist, dir, done)
  -- --ignore-scripts: nothing of the package runs while it is installed unless you say so below
  run({ 'npm', 'install', '--prefix', dir, '--ignore-scripts', '--no-fund', '--no-audit', '--loglevel=error',
    dist.package }, {}, function(result)
      if result.code ~= 0 then
        return done(nil, 'npm install failed: ' .. last_lines(result))
      end
      local finish = function()
        local bin = npm_bin(dir, dist.package)
        if not bin or vim.fn.executable(bin) == 0 then
          return done(nil, ('npm installed %s, but it has no executable'):format(dist.package))
        end
        done({ command = bin, args = dist.args or {}, env = dist.env or {} })
      end
      local scripts = skipped_scripts(dir)
      if #scripts == 0 then
        return finish()
      end
      confirm(('%s: npm left out the install scripts of %s. Running them runs code from those packages as you. '
        .. 'Run them?'):format(dist.package, table.concat(scripts, ', ')), { M.SKIP_SCRIPTS, M.RUN_SCRIPTS },
        function(choice)
          if choice ~= 2 then
            say(('%s installed without its install scripts'):format(dist.package))
            return finish()
          end
          run({ 'npm', 'rebuild', '--prefix', dir, '--no-fund', '--no-audit', '--loglevel=error' }, {},
            function(rebuilt)
              if rebuilt.code ~= 0 then
                return done(nil, 'the install scripts failed: ' .. last_lines(rebuilt))
              end
              finish()
            end)
        end)
    end)
end

M.INSTALL_UNCHECKED = 'install it unchecked'
M.REFUSE_UNCHECKED = 'do not install it'

-- `unchecked`: you accepted a download without a sha256 (never a field of the entry: the registry writes those)
function INSTALL.binary(agent, dist, dir, done, unchecked)
  local url = dist.archive
  if type(url) ~= 'string' or type(dist.cmd) ~= 'string' then
    return done(nil, 'its binary distribution names no archive or cmd')
  end
  local problem = cmd_problem(dist.cmd)
  if problem then
    return done(nil, ('the registry entry %s: everything it installs stays in %s'):format(problem, dir))
  end
  local checked = type(dist.sha256) == 'string' and dist.sha256 ~= ''
  if not checked and not unchecked then
    return confirm(('%s %s: the registry gives no sha256 for %s: what is downloaded cannot be checked, and it '
      .. 'runs as you. Install it unchecked?'):format(agent.id, agent.version, url),
      { M.REFUSE_UNCHECKED, M.INSTALL_UNCHECKED }, function(choice)
        if choice ~= 2 then
          return done(nil, 'the registry gives no sha256 for its download, and you did not accept it unchecked')
        end
        INSTALL.binary(agent, dist, dir, done, true)
      end)
  end
  local name = url:match('([^/?#]+)[?#]?[^/]*$') or 'download'
  local file = dir .. '/' .. ((name == '.' or name == '..') and 'download' or name)
  run({ 'curl', '-fsSL', '--max-time', '600', '-o', file, url }, {}, function(result)
    if result.code ~= 0 then
      return done(nil, ('downloading %s failed: %s'):format(url, last_lines(result)))
    end
    if checked then
      local sum = sha256(file)
      if not sum or sum:lower() ~= dist.sha256:lower() then
        return done(nil, ('%s has sha256 %s, the registry says %s: not installed'):format(url, tostring(sum),
          dist.sha256))
      end
    end
    local relative = dist.cmd:gsub('^%./', '')
    local command = vim.fs.normalize(dir .. '/' .. relative)
    if not within(command, vim.fs.normalize(dir)) then
      return done(nil, ('the registry entry has a cmd %q outside %s'):format(dist.cmd, dir))
    end
    local finish = function()
      local link = escaping_link(dir)
      if link then
        return done(nil, ('the archive holds a link that leads outside its folder (%s): not installed'):format(link))
      end
      local landed = landed_problem(dir, relative)
      if landed then
        return done(nil, landed)
      end
      vim.uv.fs_chmod(command, tonumber('755', 8))
      done({ command = command, args = dist.args or {}, env = dist.env or {} })
    end
    local argv = unpack_argv(file, dir)
    if not argv then -- a bare executable
      if file ~= command then -- the folder is new and holds only the download: no link on the way
        vim.fn.mkdir(vim.fs.dirname(command), 'p')
        vim.fn.rename(file, command)
      end
      return finish()
    end
    run(argv, {}, function(unpacked)
      if unpacked.code ~= 0 then
        return done(nil, 'unpacking failed: ' .. last_lines(unpacked))
      end
      vim.fn.delete(file)
      finish()
    end)
  end)
end

function INSTALL.uvx(agent, dist, dir, done)
  local base, problem = require('acp_nvim.host.deps').base_python()
  if not base then
    return done(nil, problem)
  end
  local venv = dir .. '/venv'
  run({ base, '-m', 'venv', venv }, {}, function(made)
    if made.code ~= 0 then
      return done(nil, 'making its venv failed: ' .. last_lines(made))
    end
    run({ venv .. '/bin/python', '-m', 'pip', 'install', '--disable-pip-version-check', dist.package }, {},
      function(result)
        if result.code ~= 0 then
          return done(nil, 'pip install failed: ' .. last_lines(result))
        end
        local name = dist.package:match('^(%w[%w%._-]*)')
        if not name or name:find('..', 1, true) then
          return done(nil, ('the package name %q names no command'):format(dist.package))
        end
        done({ command = venv .. '/bin/' .. name, args = dist.args or {}, env = dist.env or {} })
      end)
  end)
end

local function find(registry, id)
  for _, agent in ipairs(registry.agents) do
    if agent.id == id then
      return agent
    end
  end
end

local function check_id(id)
  return type(id) == 'string' and id:match('^[a-z][a-z0-9-]*$') ~= nil
end

--- Install `agent` (a registry entry); `done(ok)`.
function M.install_agent(agent, done)
  done = done or function() end
  local kind, dist = M.distribution(agent)
  if not kind then
    say(('%s has no distribution acp.nvim can install here (%s; this machine: %s)'):format(agent.id, kinds(agent),
      M.platform()), vim.log.levels.ERROR)
    return done(false)
  end
  if not check_id(agent.id) or type(agent.version) ~= 'string' or not agent.version:match('^%w[%w%.%+_-]*$')
    or agent.version:find('%.%.') then
    say(('the registry entry %q has an id or version acp.nvim does not use as a folder name'):format(
      tostring(agent.id)), vim.log.levels.ERROR)
    return done(false)
  end
  local final = ('%s/%s/%s'):format(M.agents_dir(), agent.id, agent.version)
  local dir = final .. '.part'
  vim.fn.delete(dir, 'rf')
  vim.fn.mkdir(dir, 'p')
  say(('installing %s %s (%s)…'):format(agent.id, agent.version, kind))
  INSTALL[kind](agent, dist, dir, function(manifest, why)
    local real = manifest and vim.uv.fs_realpath(manifest.command)
    if manifest and not (real and within(real, vim.uv.fs_realpath(dir) or dir)) then
      manifest, why = nil, ('its command %s lies outside %s'):format(tostring(manifest.command), final)
    end
    if not manifest then
      vim.fn.delete(dir, 'rf')
      vim.fn.delete(vim.fn.fnamemodify(final, ':h'), 'd') -- its id's folder, when nothing else is in it
      say(('installing %s failed: %s'):format(agent.id, why), vim.log.levels.ERROR)
      return done(false)
    end
    manifest.command = manifest.command:gsub('^' .. vim.pesc(dir), final)
    manifest = vim.tbl_extend('force', manifest, { id = agent.id, name = agent.name, version = agent.version,
      kind = kind })
    vim.fn.writefile({ vim.json.encode(manifest) }, dir .. '/' .. MANIFEST)
    vim.fn.delete(final, 'rf')
    vim.fn.rename(dir, final)
    for _, old in ipairs(vim.fn.glob(M.agents_dir() .. '/' .. agent.id .. '/*', false, true)) do
      if old ~= final then
        vim.fn.delete(old, 'rf')
      end
    end
    say(('installed %s %s: :Ai new %s'):format(agent.id, agent.version, agent.id))
    done(true)
  end)
end

--- :Ai install {id}
function M.install(words)
  local id = words and words[1]
  if not id then
    return say('usage: :Ai install {id} (:Ai agents lists them)', vim.log.levels.ERROR)
  end
  M.load(function(registry)
    local agent = registry and find(registry, id)
    if registry and not agent then
      return say(('no agent %q in the registry %s (:Ai agents lists them)'):format(id, M.url()),
        vim.log.levels.ERROR)
    end
    if agent then
      M.install_agent(agent)
    end
  end)
end

--- How `new` relates to `old`: 'an upgrade', 'a downgrade', or why it cannot be told.
function M.direction(old, new)
  local a, b = vim.version.parse(tostring(old or ''), { strict = false }),
    vim.version.parse(tostring(new or ''), { strict = false })
  if not a or not b then
    return 'another version (which is newer cannot be told)'
  end
  local order = vim.version.cmp(a, b)
  return order < 0 and 'an upgrade' or order > 0 and 'a DOWNGRADE' or 'the same version number, other text'
end

M.KEEP = 'keep the installed version'

--- Replace the installed `old` (manifest) with `agent` (a registry entry) once you say so; `done(ok)`.
function M.confirm_update(old, agent, done)
  done = done or function() end
  local direction = M.direction(old.version, agent.version)
  local update = ('replace %s %s with %s (%s)'):format(agent.id, tostring(old.version), agent.version, direction)
  confirm(('update %s: the registry has %s, %s is installed: %s'):format(agent.id, agent.version,
    tostring(old.version), direction), { M.KEEP, update }, function(choice)
    if choice ~= 2 then
      say(('kept %s %s'):format(agent.id, tostring(old.version)))
      return done(false)
    end
    M.install_agent(agent, done)
  end)
end

--- :Ai update [id]: the installed agents (or {id}) whose registry version differs, each replaced once
--- you confirm what replaces what (a downgrade says so).
function M.update(words)
  local only = words and words[1]
  local installed = M.installed()
  if only and not installed[only] then
    return say(('%s is not installed (:Ai install %s)'):format(only, only), vim.log.levels.ERROR)
  end
  M.load(function(registry)
    if not registry then
      return
    end
    local todo = {}
    for id, manifest in pairs(installed) do
      local agent = (not only or id == only) and find(registry, id)
      if agent and agent.version ~= manifest.version then
        todo[#todo + 1] = agent
      end
    end
    if #todo == 0 then
      return say('every installed agent is the registry\'s version')
    end
    table.sort(todo, function(a, b)
      return a.id < b.id
    end)
    local function next_one(i)
      local agent = todo[i]
      if agent then
        M.confirm_update(installed[agent.id], agent, function()
          next_one(i + 1)
        end)
      end
    end
    next_one(1)
  end, true)
end

--- :Ai uninstall {id}
function M.uninstall(words)
  local id = words and words[1]
  if not check_id(id) or not M.installed()[id] then
    return say(('%s is not installed'):format(tostring(id)), vim.log.levels.ERROR)
  end
  vim.fn.delete(M.agents_dir() .. '/' .. id, 'rf')
  say(('uninstalled %s'):format(id))
end

--- One picker line of a registry entry.
function M.describe(agent, installed)
  local have = installed[agent.id]
  local state = have and ('installed ' .. tostring(have.version)) or 'not installed'
  return ('%s (%s) %s · %s · %s — %s'):format(agent.name or agent.id, agent.id, tostring(agent.version), state,
    kinds(agent), tostring(agent.description or ''))
end

--- :Ai agents: pick an agent of the registry; picking one installs (or updates) it.
function M.pick()
  M.load(function(registry)
    if not registry then
      return
    end
    local installed = M.installed()
    local prompt = 'ACP registry agents (pick one to install it)'
    if registry.snapshot then
      prompt = ('ACP registry agents: snapshot of %s, the registry could not be fetched: %s '
        .. '(pick one to install it)'):format(tostring(registry.snapshot.date), tostring(registry.snapshot.why))
    end
    vim.ui.select(registry.agents, {
      prompt = prompt,
      format_item = function(agent)
        return M.describe(agent, installed)
      end,
    }, function(agent)
      if agent and installed[agent.id] and installed[agent.id].version ~= agent.version then
        M.confirm_update(installed[agent.id], agent)
      elseif agent and not installed[agent.id] then
        M.install_agent(agent)
      elseif agent then
        say(('%s %s is installed: :Ai new %s'):format(agent.id, agent.version, agent.id))
      end
    end)
  end)
end

--- The agent table of an installed manifest, with acp.nvim's preset for that agent where it has one.
function M.agent_spec(manifest)
  local spec = { command = manifest.command, args = vim.deepcopy(manifest.args or {}),
    env = vim.deepcopy(manifest.env or {}) }
  local preset = M.PRESETS[manifest.id]
  if preset then
    local policy = require('acp_nvim.presets').build(preset, {})
    spec.mode = policy.mode
    spec.env = vim.tbl_extend('force', policy.env or {}, spec.env)
  end
  return spec
end

--- `config` with the installed agents that it does not name itself (setup() wins).
function M.with_installed(config)
  local installed = M.installed()
  if vim.tbl_isempty(installed) then
    return config
  end
  local out = vim.deepcopy(config)
  for id, manifest in pairs(installed) do
    if out.agents[id] == nil then
      out.agents[id] = M.agent_spec(manifest)
    end
  end
  return out
end

return M
