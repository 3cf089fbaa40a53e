--- Where the plugin's windows go (|acp_nvim-layout|): one chat column per tab page, a sidebar
--- that shows one session's chat at a time and switches between them; the board and the log in a
--- split below the editing window; no window of the plugin narrower than MIN_WIDTH (when the
--- screen has no room, a window is reused instead); and a label in each window's winbar (the
--- user's statusline and tabline stay theirs).
---
--- The column is the window marked `w:acp_nvim_column` (else a window of the tab showing a chat);
--- `t:acp_nvim_chat_width` keeps its width when the user resizes it.
local M = {}

local api = vim.api

M.MIN_WIDTH = 20

local WINBAR = "%{%v:lua.require'acp_nvim.chat.layout'.winbar()%}"

local function chat_config()
  return require('acp_nvim.config.options').config.chat
end

local function is_float(win)
  return api.nvim_win_get_config(win).relative ~= ''
end

local function is_chat(buf)
  return vim.bo[buf].filetype == 'acp_chat'
end

--- A chat's own window: the chat or the prompt window under it (|acp_nvim-prompt|).
local function is_chat_part(buf)
  local filetype = vim.bo[buf].filetype
  return filetype == 'acp_chat' or filetype == 'acp_prompt'
end

local function size(value, total)
  return value > 1 and math.floor(value) or math.floor(total * value)
end

local function side_by_side()
  local position = chat_config().position
  return position == 'left' or position == 'right'
end

--- The tab's chat column (nil when it has none).
---@param tab integer? the current tab page by default
---@return integer?
function M.column(tab)
  local fallback
  for _, win in ipairs(api.nvim_tabpage_list_wins(tab or 0)) do
    if not is_float(win) then
      if vim.w[win].acp_nvim_column then
        return win
      end
      if not fallback and is_chat(api.nvim_win_get_buf(win)) then
        fallback = win
      end
    end
  end
  return fallback
end

--- The width a new column gets: the one the user gave it in this tab, else `chat.width`; never
--- under MIN_WIDTH, and the editor beside it keeps MIN_WIDTH.
local function column_width()
  local width = vim.t.acp_nvim_chat_width or size(chat_config().width, vim.o.columns)
  return math.max(M.MIN_WIDTH, math.min(width, vim.o.columns - M.MIN_WIDTH - 1))
end

local function mark(win)
  vim.w[win].acp_nvim_column = true
  if side_by_side() then
    vim.wo[win].winfixwidth = true
  elseif chat_config().position == 'bottom' then
    vim.wo[win].winfixheight = true
  end
end

--- A window for the column: a new split at the side (or bottom) of the tab, or the current window
--- for `position = 'current'` and when the screen has no room for two windows of MIN_WIDTH.
local function open_column()
  local position = chat_config().position
  local here = api.nvim_get_current_win()
  if position == 'current' or is_float(here) then
    return here
  end
  if position == 'bottom' then
    if not pcall(vim.cmd, ('botright %dsplit'):format(size(chat_config().height, vim.o.lines))) then
      return here
    end
  else
    if vim.o.columns < 2 * M.MIN_WIDTH + 1 then
      mark(here)
      return here
    end
    local side = position == 'left' and 'topleft' or 'botright'
    if not pcall(vim.cmd, ('%s %dvsplit'):format(side, column_width())) then
      return here
    end
  end
  local win = api.nvim_get_current_win()
  mark(win)
  return win
end

local function chat_window_options(win)
  vim.wo[win].wrap = true
  vim.wo[win].linebreak = true
  vim.wo[win].conceallevel = 2
  vim.wo[win].winbar = WINBAR
end

--- Show chat buffer `buf` in the tab's chat column: in the window already showing it, else in the
--- column (which switches to it), else in a new column. `focus` moves the cursor there.
---@param buf integer
---@param focus boolean?
---@return integer win
function M.show_chat(buf, focus)
  M.watch()
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    local previous = api.nvim_get_current_win()
    win = M.column() or open_column()
    api.nvim_win_set_buf(win, buf)
    chat_window_options(win)
    api.nvim_win_set_cursor(win, { api.nvim_buf_line_count(buf), 0 })
    if not focus and api.nvim_win_is_valid(previous) then
      api.nvim_set_current_win(previous)
    end
  end
  if focus then
    api.nvim_set_current_win(win)
  end
  vim.t.acp_nvim_chat_buf = buf
  return win
end

--- A window in which the user edits: the current one, the previous one, or any other of the tab
--- that is neither the chat column nor a float.
local function editing_window()
  local function usable(win)
    return win ~= 0 and api.nvim_win_is_valid(win) and not is_float(win) and not vim.w[win].acp_nvim_column
      and not is_chat_part(api.nvim_win_get_buf(win))
  end
  local current = api.nvim_get_current_win()
  if usable(current) then
    return current
  end
  local previous = vim.fn.win_getid(vim.fn.winnr('#'))
  if usable(previous) then
    return previous
  end
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    if usable(win) then
      return win
    end
  end
end

--- Show `buf` in a split `height` lines high below the editing window (at the bottom of the tab
--- when there is none, or it is narrower than MIN_WIDTH), entering it; without room for a split,
--- the editing window shows it. The chat column keeps its width.
---@param buf integer
---@param height integer
---@return integer win
function M.below(buf, height)
  local target = editing_window()
  if target and api.nvim_win_get_width(target) < M.MIN_WIDTH then
    target = nil
  end
  local ok, win = pcall(api.nvim_open_win, buf, true, { split = 'below', win = target or -1, height = height })
  if not ok then
    win = target or api.nvim_get_current_win()
    api.nvim_set_current_win(win)
    api.nvim_win_set_buf(win, buf)
  end
  vim.wo[win].winbar = WINBAR
  return win
end

--- Close the tab's chat column (remembering what it showed); false when there is none, or it is
--- the tab's only window (it cannot be closed: a notice says so).
---@return boolean hidden
function M.hide()
  local win = M.column()
  if not win then
    return false
  end
  local others = vim.tbl_filter(function(w)
    return w ~= win and not is_float(w)
  end, api.nvim_tabpage_list_wins(0))
  if #others == 0 then
    vim.notify('[acp.nvim] the chat is the only window of this tab: nothing to hide it beside', vim.log.levels.INFO)
    return true
  end
  vim.t.acp_nvim_chat_buf = api.nvim_win_get_buf(win)
  api.nvim_win_close(win, false)
  return true
end

-- Labels ----------------------------------------------------------------------------------

local LABELS = {
  { '^acp://chat/(.+)$', '%s · chat' },
  { '^acp://log/(.+)$', '%s · log' },
  { '^acp://board$', 'acp · board' },
}

--- What a window showing `buf` is called: `demo/3 · chat`, `demo/3 · log`, `acp · board`; nil for
--- a buffer of someone else.
---@param buf integer
---@return string?
function M.label(buf)
  local name = api.nvim_buf_get_name(buf)
  for _, rule in ipairs(LABELS) do
    local key = name:match(rule[1])
    if key then
      return rule[2]:format(key)
    end
  end
end

--- The winbar of the plugin's windows: the label of the buffer shown (and the session's state for a
--- chat, `b:acp_nvim_state_label`); for a buffer of someone else, the user's global winbar.
function M.winbar()
  local win = vim.g.statusline_winid or api.nvim_get_current_win()
  local buf = api.nvim_win_get_buf(win)
  local label = M.label(buf)
  if not label then
    return vim.go.winbar
  end
  local right = vim.b[buf].acp_nvim_state_label or ''
  return (' %s%%=%s '):format(label:gsub('%%', '%%%%'), right:gsub('%%', '%%%%'))
end

-- Resizes -----------------------------------------------------------------------------------

local watching = false

--- Keep the column's width when the user resizes it (one autocommand for all tabs).
function M.watch()
  if watching then
    return
  end
  watching = true
  api.nvim_create_autocmd('WinResized', {
    group = api.nvim_create_augroup('acp_nvim.chat.layout', { clear = true }),
    callback = function()
      if not side_by_side() then
        return
      end
      for _, win in ipairs(vim.v.event.windows or {}) do
        if api.nvim_win_is_valid(win) and vim.w[win].acp_nvim_column and not is_float(win) then
          local width = api.nvim_win_get_width(win)
          if width >= M.MIN_WIDTH and width < vim.o.columns then
            vim.t[api.nvim_win_get_tabpage(win)].acp_nvim_chat_width = width
          end
        end
      end
    end,
  })
end

return M
