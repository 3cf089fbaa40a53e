--- The prompt window: a small window right below a chat window, in the same column, that shows the
--- chat's prompt buffer (:help acp_nvim-prompt). Everything about where it goes is in open_below(),
--- so the code that places chat windows only has to call it.
local M = {}

local api = vim.api

--- Lines a chat window keeps when its prompt window opens below it: the prompt gets lower first.
M.MIN_CHAT_HEIGHT = 5

---@type table<integer, integer> prompt window -> the chat window it belongs to
local below = {}

--- The prompt window's height under a chat window `chat_height` lines high (before the split, which
--- also costs the chat window a status line), or nil when there is no room for one.
function M.height(chat_height, wanted)
  local room = chat_height - 1 - M.MIN_CHAT_HEIGHT
  if room < 1 then
    return nil
  end
  return math.max(1, math.min(wanted, room))
end

--- The window in `chat_win`'s tab page that shows `buf`, or nil.
local function shown_in_tab(buf, chat_win)
  local tab = api.nvim_win_get_tabpage(chat_win)
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    if api.nvim_win_get_tabpage(win) == tab then
      return win
    end
  end
end

--- The winbar text: `%` is the statusline's escape.
local function winbar(text)
  return '%#AcpNvimPromptSeparator#' .. text:gsub('%%', '%%%%')
end

--- Open the prompt window of `prompt_buf` below the chat window `chat_win` (or return the one its tab
--- page already has); `label` goes in its winbar. Returns the window, or nil when the chat window is too
--- low to give it room.
---@param prompt_buf integer
---@param chat_win integer
---@param label string
---@return integer?
function M.open_below(prompt_buf, chat_win, label)
  local win = shown_in_tab(prompt_buf, chat_win)
  if win then
    return win
  end
  -- The chat column switched sessions: the prompt window under it switches with it.
  for prompt_win, owner in pairs(below) do
    if owner == chat_win and api.nvim_win_is_valid(prompt_win) then
      api.nvim_win_set_buf(prompt_win, prompt_buf)
      vim.wo[prompt_win].winbar = winbar(label)
      return prompt_win
    end
  end
  local height = M.height(api.nvim_win_get_height(chat_win), require('acp_nvim.config.options').config.chat.prompt_height)
  if not height then
    return nil
  end
  local ok, opened = pcall(api.nvim_open_win, prompt_buf, false, { split = 'below', win = chat_win, height = height })
  if not ok then
    return nil
  end
  local wo = vim.wo[opened]
  wo.winfixheight = true
  wo.wrap = true
  wo.linebreak = true
  wo.winbar = winbar(label)
  below[opened] = chat_win
  M.watch()
  return opened
end

--- Set the winbar of every window showing `prompt_buf` to `label`.
function M.relabel(prompt_buf, label)
  for _, win in ipairs(vim.fn.win_findbuf(prompt_buf)) do
    vim.wo[win].winbar = winbar(label)
  end
end

--- Closing a chat window closes its prompt window (one autocommand for all).
function M.watch()
  local group = api.nvim_create_augroup('acp_nvim.prompt.window', { clear = false })
  if #api.nvim_get_autocmds({ group = group }) > 0 then
    return
  end
  api.nvim_create_autocmd('WinClosed', {
    group = group,
    callback = function(ev)
      local closed = tonumber(ev.match)
      below[closed] = nil
      for prompt_win, chat_win in pairs(below) do
        if chat_win == closed then
          below[prompt_win] = nil
          vim.schedule(function() -- not while Neovim closes the other one
            local last = #api.nvim_list_tabpages() == 1 and #api.nvim_list_wins() == 1
            if api.nvim_win_is_valid(prompt_win) and not last then
              pcall(api.nvim_win_close, prompt_win, false)
            end
          end)
        end
      end
    end,
  })
end

return M
