--- Many edits to a buffer for the price of one view update per window.
---
--- After every API call that changes lines above a window's cursor, Neovim moves the cursor with
--- its text and re-validates the window's view (`update_topline`), measuring the lines in sight;
--- with 'wrap' and 'linebreak', character by character. A chat whose window follows its end (the
--- cursor in the prompt area, below everything streamed in) paid that per operation: 115 new
--- blocks in one flush took 18 ms instead of 1.3 in a 1M-line chat with a UI attached. `edit`
--- parks each such cursor near the top of its window, above the edits, and puts it back once:
--- on its text (an extmark follows it), the window's first line on its text too, then scrolled
--- into sight as Neovim scrolls after an edit (a cursor far below is brought back with as much of
--- what follows it as fits: a long prompt shows whole).
local M = {}

local api = vim.api
local ns = api.nvim_create_namespace('acp_nvim.parked')

--- Park the cursor of each window of `buf` that is at or below row `from` (1-based) and below
--- the window's first lines; returns what `unpark` needs.
local function park(buf, from)
  local parked = {}
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    local row, col = unpack(api.nvim_win_get_cursor(win))
    if row >= from then
      local view = api.nvim_win_call(win, vim.fn.winsaveview)
      -- 'scrolloff' lines below the first, so that parking does not scroll
      local spot = view.topline + vim.wo[win].scrolloff
      if spot < row and spot < from then
        parked[#parked + 1] = {
          win = win,
          curswant = view.curswant,
          cursor = api.nvim_buf_set_extmark(buf, ns, row - 1, col, {}),
          top = api.nvim_buf_set_extmark(buf, ns, view.topline - 1, 0, {}),
        }
        api.nvim_win_set_cursor(win, { spot, 0 })
      end
    end
  end
  return parked
end

local function unpark(buf, parked)
  for _, p in ipairs(parked) do
    local row, col = unpack(api.nvim_buf_get_extmark_by_id(buf, ns, p.cursor, {}))
    local top = api.nvim_buf_get_extmark_by_id(buf, ns, p.top, {})[1]
    api.nvim_buf_del_extmark(buf, ns, p.cursor)
    api.nvim_buf_del_extmark(buf, ns, p.top)
    if row and top and api.nvim_win_is_valid(p.win) then
      api.nvim_win_call(p.win, function()
        -- an edit above the first line moves the parked cursor, which may scroll
        if vim.fn.winsaveview().topline ~= top + 1 then -- (line('w0') would scroll first)
          vim.fn.winrestview({ topline = top + 1 })
        end
        api.nvim_win_set_cursor(0, { row + 1, col })
        if p.curswant ~= col then -- the column j and k aim for, as before
          vim.fn.winrestview({ curswant = p.curswant })
        end
      end)
    end
  end
end

--- Run `edit`, which changes lines of `buf` at row `from` (1-based) and below, with the cursors of
--- its windows parked. An edit above `from` is still right, only not cheaper.
---@param buf integer
---@param from integer
---@param edit fun()
function M.edit(buf, from, edit)
  local parked = park(buf, from)
  if #parked == 0 then
    return edit()
  end
  local ok, err = pcall(edit)
  unpark(buf, parked)
  if not ok then
    error(err, 0)
  end
end

return M
