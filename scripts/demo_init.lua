-- make demo: the plugin from this checkout, the demo agent as default, a statusline that shows it.
vim.opt.runtimepath:prepend(vim.env.ACP_NVIM_ROOT)
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
    vim.notify(
      'acp.nvim demo: try  ' .. table.concat(EXAMPLES, '   ')
        .. '   then type in the chat prompt area and press <C-s>.  :help acp_nvim',
      vim.log.levels.INFO
    )
  end,
})
