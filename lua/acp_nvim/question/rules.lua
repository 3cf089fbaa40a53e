--- The `acp://rules` buffer: remembered permission rules, one per line; `dd` forgets one.
local M = {}

local api = vim.api
local scratch = require('acp_nvim.kit.scratch')

local NAME = 'acp://rules'

local function remove_at_cursor()
  local line = api.nvim_get_current_line()
  local number = line:match('^(%d+)%. ')
  if number then
    vim.cmd('Ai rules remove ' .. number)
  end
end

local function set_keys(buf)
  vim.keymap.set('n', 'dd', remove_at_cursor, { buffer = buf, nowait = true, desc = 'acp.nvim: forget this rule' })
  vim.keymap.set('n', 'x', remove_at_cursor, { buffer = buf, nowait = true, desc = 'acp.nvim: forget this rule' })
  vim.keymap.set('n', 'q', '<Cmd>close<CR>', { buffer = buf, nowait = true, desc = 'acp.nvim: close' })
end

--- Show (or refresh) the list; `lines` are "n. description" strings.
function M.show(lines)
  local text = #lines > 0 and lines or { '(no remembered rules: answer a prompt with "always" to add one)' }
  local buf, created = scratch.create({ name = NAME, kind = 'rules', buftype = 'nofile', bufhidden = 'wipe',
    filetype = 'acp_nvim_rules', modifiable = false, reuse = true,
    lines = vim.list_extend({ 'Remembered permission rules  (dd forgets one, q closes)', '' }, text) })
  if created then
    set_keys(buf)
  end
  if vim.fn.bufwinid(buf) == -1 then
    vim.cmd('botright split')
    api.nvim_win_set_buf(0, buf)
    api.nvim_win_set_height(0, math.min(#text + 3, 15))
  end
end

return M
