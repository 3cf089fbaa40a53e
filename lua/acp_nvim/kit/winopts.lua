--- Window options as data, saved and given back in one place (after diffview.nvim's store).
---
--- Only local values are read and written (`scope = 'local'`): a window's global values, and
--- so the options of windows split from it later, are never touched. The first save of an
--- option wins, so setting an option twice still gives back the user's value.
local M = {}

local api = vim.api

---@type table<integer, table<string, any>> window -> option -> the value before we touched it
local saved = {}

local function get(win, name)
  return api.nvim_get_option_value(name, { win = win, scope = 'local' })
end

local function put(win, name, value)
  api.nvim_set_option_value(name, value, { win = win, scope = 'local' })
end

--- Remember the current local values of `names` in `win` (options saved before are kept).
---@param win integer
---@param names string[]
function M.save(win, names)
  local store = saved[win] or {}
  for _, name in ipairs(names) do
    if store[name] == nil then
      store[name] = get(win, name)
    end
  end
  saved[win] = store
end

--- Set `opts` ({ name = value }) locally in `win`, saving what they replace.
---@param win integer
---@param opts table<string, any>
function M.set(win, opts)
  M.save(win, vim.tbl_keys(opts))
  for name, value in pairs(opts) do
    put(win, name, value)
  end
end

--- Give back every saved option of `win` and forget them (a closed window is just forgotten).
---@param win integer
function M.restore(win)
  local store = saved[win]
  saved[win] = nil
  if not (store and api.nvim_win_is_valid(win)) then
    return
  end
  for name, value in pairs(store) do
    pcall(put, win, name, value)
  end
end

--- The saved values of `win` (nil when nothing is saved), for tests and checks.
---@param win integer
---@return table<string, any>|nil
function M.saved(win)
  return saved[win] and vim.deepcopy(saved[win]) or nil
end

return M
