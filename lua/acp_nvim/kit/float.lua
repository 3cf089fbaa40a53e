--- Floating windows for prompts and pickers: centred and focused, or in the top-right corner
--- without taking the cursor (shown beside what the user is doing).
local M = {}

local api = vim.api

local function size(buf)
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  local width = 20
  for _, l in ipairs(lines) do
    width = math.max(width, api.nvim_strwidth(l) + 2)
  end
  return math.min(width, vim.o.columns - 4), math.max(1, math.min(#lines, vim.o.lines - 4))
end

--- The window config of a float showing `buf`: centred, or (`corner`) in the top-right corner.
---@param buf integer
---@param title string
---@param corner boolean|nil
function M.config(buf, title, corner)
  local width, height = size(buf)
  local config = { relative = 'editor', width = width, height = height, style = 'minimal', border = 'rounded',
    title = title, title_pos = 'center', focusable = true, zindex = 50 }
  if corner then
    config.row, config.col = 1, math.max(0, vim.o.columns - width - 3)
  else
    config.row = math.floor((vim.o.lines - height) / 2)
    config.col = math.floor((vim.o.columns - width) / 2)
  end
  return config
end

--- Open `buf` in a float in the middle of the editor, sized to its lines, and focus it.
---@param buf integer
---@param title string
---@return integer win
function M.centered(buf, title)
  return api.nvim_open_win(buf, true, M.config(buf, title))
end

--- Open `buf` in the top-right corner without entering it (the cursor stays where it is).
---@param buf integer
---@param title string
---@return integer win
function M.beside(buf, title)
  return api.nvim_open_win(buf, false, M.config(buf, title, true))
end

--- Resize and move float `win` to fit its buffer again (centred, or in the corner).
function M.fit(win, title, corner)
  local config = M.config(api.nvim_win_get_buf(win), title, corner)
  api.nvim_win_set_config(win, config)
end

return M
