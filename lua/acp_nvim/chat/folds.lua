--- Folds in a chat: the turns a rewind took back, closed above its marker and readable (zo opens).
---
--- A marker block carries `meta.fold = { first, last }` (block ids); a later one `meta.unfold = marker`
--- (:Ai rewind undo put the turns back). Folds are manual folds of each window showing the chat,
--- made again in a window that shows it later (BufWinEnter), so a reopened chat folds the same.
local M = {}

local api = vim.api

--- The rows (1-based, inclusive) the blocks `first`..`last` take, or nil when one is not drawn.
local function rows(chat, fold)
  if not (chat.index[fold.first] and chat.index[fold.last]) then
    return nil
  end
  local start = chat:block_range(fold.first)
  local _, stop = chat:block_range(fold.last)
  if not start or not stop or stop <= start then
    return nil
  end
  return start + 1, stop
end

--- Make the folds of `chat` in window `win` that it does not have yet.
function M.apply(chat, win)
  local made = vim.w[win].acp_nvim_folds or {}
  for marker, fold in pairs(chat.folds or {}) do
    local first, last = rows(chat, fold)
    if first and not made[tostring(marker)] then
      api.nvim_win_call(win, function()
        if vim.wo[win].foldmethod == 'manual' then
          vim.cmd(('%d,%dfold'):format(first, last))
        end
      end)
      made[tostring(marker)] = true
    end
  end
  vim.w[win].acp_nvim_folds = made
end

--- Fold the turns from block `first` to block `last` under the marker block `marker`.
function M.add(chat, marker, first, last)
  chat.folds = chat.folds or {}
  chat.folds[marker] = { first = first, last = last }
  if not chat.fold_autocmd then
    chat.fold_autocmd = api.nvim_create_autocmd('BufWinEnter', {
      buffer = chat.buf,
      callback = function()
        M.apply(chat, api.nvim_get_current_win())
      end,
    })
  end
  for _, win in ipairs(vim.fn.win_findbuf(chat.buf)) do
    M.apply(chat, win)
  end
end

--- Open the fold of marker `marker` for good (the rewind was undone).
function M.remove(chat, marker)
  local fold = chat.folds and chat.folds[marker]
  if not fold then
    return
  end
  local first, last = rows(chat, fold)
  chat.folds[marker] = nil
  for _, win in ipairs(vim.fn.win_findbuf(chat.buf)) do
    if first then
      api.nvim_win_call(win, function()
        pcall(vim.cmd, ('%d,%dfoldopen!'):format(first, last))
      end)
    end
  end
end

--- A new block's meta: a fold to make or to open.
function M.on_new(chat, id, meta)
  if type(meta) ~= 'table' then
    return
  end
  if type(meta.fold) == 'table' and meta.fold[1] and meta.fold[2] then
    M.add(chat, id, meta.fold[1], meta.fold[2])
  end
  if meta.unfold then
    M.remove(chat, meta.unfold)
  end
end

return M
