-- make demo: the plugin from this checkout, the demo agent as default, a statusline that shows it.
vim.opt.runtimepath:prepend(vim.env.ACP_NVIM_ROOT)

-- :help acp_nvim: the checkout's doc/ has no tags file (a plugin manager makes one on install), so
-- the demo copies the help into its own cache folder, tags it there and adds that folder to
-- 'runtimepath': nothing is written into the checkout or into your config.
local function demo_help()
  local source = vim.env.ACP_NVIM_ROOT .. '/doc/acp_nvim.txt'
  local folder = vim.fn.stdpath('cache') .. '/acp_nvim_help'
  vim.fn.mkdir(folder .. '/doc', 'p')
  vim.fn.writefile(vim.fn.readfile(source, 'b'), folder .. '/doc/acp_nvim.txt', 'b')
  vim.cmd.helptags(vim.fn.fnameescape(folder .. '/doc'))
  vim.opt.runtimepath:append(folder)
end
local ok, problem = pcall(demo_help)
if not ok then
  vim.notify('acp.nvim demo: :help acp_nvim is unavailable: ' .. tostring(problem), vim.log.levels.WARN)
end
vim.g.acp_nvim_python = vim.env.ACP_NVIM_PYTHON
vim.g.python3_host_prog = vim.env.ACP_NVIM_PYTHON
vim.o.laststatus = 3
vim.o.statusline = "%f %m%= %{v:lua.require'acp_nvim'.status()} "
vim.o.termguicolors = true
require('acp_nvim').setup({})

-- The banner's examples; tests/e2e/test_examples.py runs each as written (in hello.py).
local EXAMPLES = { ':Ai send hello', ':Ai send plan', ':Ai send edit %:p', ':Ai send shell ls' }

vim.api.nvim_create_autocmd('VimEnter', {
  once = true,
  callback = function()
    -- One line that fits the screen: a longer one would stop Neovim at "Press ENTER".
    local shown = vim.deepcopy(EXAMPLES)
    local function banner()
      return 'acp.nvim demo: try  ' .. table.concat(shown, '   ') .. '   :help acp_nvim'
    end
    while #shown > 1 and vim.fn.strdisplaywidth(banner()) >= vim.o.columns - 12 do
      table.remove(shown)
    end
    vim.notify(banner(), vim.log.levels.INFO)
  end,
})
