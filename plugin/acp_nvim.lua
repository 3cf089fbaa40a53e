-- acp.nvim: defines :Ai and the exit hook. Nothing costly happens at start-up.
if vim.g.loaded_acp_nvim then
  return
end
vim.g.loaded_acp_nvim = 1

vim.api.nvim_create_user_command('Ai', function(opts)
  require('acp_nvim').command(opts)
end, {
  nargs = '*',
  range = true,
  desc = 'acp.nvim: talk to ACP agents (:help acp_nvim)',
  complete = function(...)
    return require('acp_nvim').complete(...)
  end,
})

vim.api.nvim_create_autocmd('VimLeavePre', {
  group = vim.api.nvim_create_augroup('acp_nvim', { clear = true }),
  callback = function()
    require('acp_nvim').shutdown()
  end,
})

require('acp_nvim.highlights').setup()
