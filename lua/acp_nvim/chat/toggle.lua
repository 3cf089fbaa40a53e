--- :Ai toggle and <Plug>(AcpNvimToggle): the tab's chat column hidden or shown again
--- (|acp_nvim-layout|; the column itself is layout.lua's).
local M = {}

local api = vim.api

--- :Ai toggle: hide the tab's chat column, or show it again with the current session's chat (else
--- the chat it showed last; else :Ai open). The sessions keep running.
function M.toggle()
  local chat = require('acp_nvim.chat')
  local layout = require('acp_nvim.chat.layout')
  if layout.hide() then
    return
  end
  local key = require('acp_nvim.state').current_key()
  if not (key and chat.chats[key]) then
    local last = vim.t.acp_nvim_chat_buf
    local shown = last and api.nvim_buf_is_valid(last) and chat.of_buffer(last)
    key = shown and shown.key or nil
  end
  if key and chat.chats[key] and api.nvim_buf_is_valid(chat.chats[key].buf) then
    chat.open(key, true)
  else
    vim.cmd('Ai open')
  end
end

return M
