--- Notices that never freeze the editor. Neovim's own `vim.notify` shows an ERROR with
--- `nvim_echo(..., { err = true })`, which marks an error message as on display: the next mode
--- message (typing in Insert mode, entering it from Normal mode) then waits a whole second so the
--- error can be read (`msg_check_for_delay`), and no key, RPC request or timer runs meanwhile.
--- acp.nvim's errors mostly arrive on their own (an agent or the host exits, a protocol error), in
--- whatever mode the user is typing, so with the built-in `vim.notify` an error is echoed in the
--- ErrorMsg highlight and kept in :messages, without the error flag. A `vim.notify` replaced by the
--- user (nvim-notify, snacks, noice…) gets every notice with its level, as before.
local M = {}

local ERROR = vim.log.levels.ERROR

--- Whether `vim.notify` is still Neovim's own (defined in the runtime's vim/_editor.lua).
function M.builtin()
  local info = debug.getinfo(vim.notify, 'S')
  return info ~= nil and (info.source or ''):match('vim/_editor%.lua$') ~= nil
end

--- `vim.notify(msg, level, opts)`, except that an ERROR for the built-in `vim.notify` is echoed
--- (ErrorMsg, in :messages) without the error flag that makes Neovim wait a second.
---@param msg string
---@param level integer?
---@param opts table?
function M.notify(msg, level, opts)
  if level == ERROR and M.builtin() then
    vim.api.nvim_echo({ { tostring(msg), 'ErrorMsg' } }, true, {})
    return
  end
  vim.notify(msg, level, opts)
end

return M
