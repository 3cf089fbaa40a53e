--- The oldest Neovim acp.nvim runs on, and the one line that says so on an older one.
--- This module and the guard's callers use only what Neovim 0.7 has: they run before anything else.
local M = {}

--- The oldest Neovim a test runs the plugin on (the suite runs 0.11.4; 0.10 lacks the
--- vim.str_utfindex and vim.text.diff forms the plugin calls).
M.MINIMUM = '0.11'

function M.supported()
  return vim.fn.has('nvim-' .. M.MINIMUM) == 1
end

--- "0.7.2" (from :version; vim.version() has no tostring before 0.9)
function M.running()
  local version = vim.fn.matchstr(vim.fn.execute('version'), [[NVIM v\zs[^ \n]\+]])
  return version ~= '' and version or 'an older version'
end

function M.message()
  return ('acp.nvim needs Neovim %s or newer; this is %s, so acp.nvim is off: see :help acp_nvim-requirements')
    :format(M.MINIMUM, M.running())
end

--- plugin/acp_nvim.lua's guard, on a Neovim older than MINIMUM: says the one line and makes :Ai
--- say it again (the plugin defines nothing else).
function M.refuse()
  vim.api.nvim_echo({ { M.message(), 'WarningMsg' } }, true, {})
  pcall(vim.api.nvim_create_user_command, 'Ai', function()
    vim.api.nvim_echo({ { M.message(), 'WarningMsg' } }, true, {})
  end, { nargs = '*', desc = 'acp.nvim (off: needs a newer Neovim)' })
end

return M
