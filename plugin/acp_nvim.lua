-- acp.nvim: defines :Ai and its autocommands, loads nothing (every module is required on first use).
if vim.g.loaded_acp_nvim then
  return
end
vim.g.loaded_acp_nvim = 1
if vim.fn.has('nvim-0.11') == 0 then return require('acp_nvim.host.version').refuse() end -- MINIMUM of acp_nvim.host.version

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

local group = vim.api.nvim_create_augroup('acp_nvim', { clear = true })
vim.api.nvim_create_autocmd('VimLeavePre', {
  group = group,
  callback = function()
    require('acp_nvim').shutdown()
  end,
})
-- Once a UI is there and the user pauses typing, start the Python host and load the protocol
-- (prestart): starting a process costs Neovim a few ms, which must not delay a typed key.
vim.api.nvim_create_autocmd('UIEnter', {
  group = group,
  once = true,
  callback = function()
    vim.defer_fn(function()
      require('acp_nvim.kit.frame').when_idle(function()
        require('acp_nvim.host.idle').prestart()
      end)
    end, 100)
  end,
})

vim.keymap.set('n', '<Plug>(AcpNvimToggle)', function()
  require('acp_nvim.chat.toggle').toggle()
end, { desc = 'acp.nvim: hide or show the chat column' })

-- <Plug>(AcpNvim…): every action a chat key has, for keys of your own (:help acp_nvim-plug). They
-- run acp_nvim.chat.actions, loaded on first use; the chat's default keys run the same code.
for _, plug in ipairs({
  { 'Send', 'send', { 'n', 'i' } },
  { 'Cancel', 'cancel', { 'n' } },
  { 'Open', 'open', { 'n' } },
  { 'Locations', 'locations', { 'n' } },
  { 'HistoryPrev', 'history_prev', { 'n', 'i' } },
  { 'HistoryNext', 'history_next', { 'n', 'i' } },
  { 'Permissions', 'permissions', { 'n', 'i' } },
  { 'Restart', 'restart', { 'n' } },
  { 'Steer', 'steer', { 'n', 'i' } },
  { 'Retry', 'retry', { 'n' } },
  { 'Login', 'login', { 'n' } },
  { 'NewSession', 'new_session', { 'n' } },
  { 'Wait', 'wait', { 'n' } },
  { 'NextWaiting', 'next_waiting', { 'n' } },
  { 'PrevWaiting', 'prev_waiting', { 'n' } },
  { 'EditPrompt', 'edit_prompt', { 'n' } },
  { 'Revert', 'revert', { 'n' } },
}) do
  vim.keymap.set(plug[3], '<Plug>(AcpNvim' .. plug[1] .. ')', function()
    require('acp_nvim.chat.actions').plug(plug[2])
  end, { desc = 'acp.nvim: ' .. plug[2]:gsub('_', ' ') })
end
vim.keymap.set({ 'n', 'x' }, '<Plug>(AcpNvimReviewComment)', function()
  require('acp_nvim.review').comment()
end, { desc = 'acp.nvim: comment on these lines of a review' })
