--- One WinScrolled autocommand per kind of view: `watch(name, on_window)` calls `on_window(win)`
--- for every valid window that scrolled (or was resized), however many views of that kind exist.
--- A second `watch` of the same name replaces nothing and adds nothing.
local M = {}

local api = vim.api
local watched = {}

---@param name string the augroup's name (one per kind of view)
---@param on_window fun(win: integer)
function M.watch(name, on_window)
  if watched[name] then
    return
  end
  watched[name] = api.nvim_create_autocmd('WinScrolled', {
    group = api.nvim_create_augroup(name, { clear = true }),
    callback = function()
      for win in pairs(vim.v.event) do
        local id = tonumber(win) -- the event's keys are window ids, and 'all'
        if id and api.nvim_win_is_valid(id) then
          on_window(id)
        end
      end
    end,
  })
end

return M
