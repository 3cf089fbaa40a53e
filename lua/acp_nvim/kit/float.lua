--- Centred floating windows for prompts and pickers.
local M = {}

local api = vim.api

--- Open `buf` in a float in the middle of the editor, sized to its lines, and focus it.
---@param buf integer
---@param title string
---@return integer win
function M.centered(buf, title)
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  local width = 20
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l) + 2)
  end
  width = math.min(width, vim.o.columns - 4)
  local height = math.min(#lines, vim.o.lines - 4)
  return api.nvim_open_win(buf, true, {
    relative = 'editor',
    row = math.floor((vim.o.lines - height) / 2),
    col = math.floor((vim.o.columns - width) / 2),
    width = width,
    height = height,
    style = 'minimal',
    border = 'rounded',
    title = title,
    title_pos = 'center',
  })
end

return M
