--- Messages of one line that fit the command line: a message wider than `v:echospace` stops
--- Neovim at a "Press ENTER" prompt (with the default 'cmdheight'), and while it waits the user
--- counts as busy (acp_nvim.kit.guard), so nothing that waits for them to be idle would come either.
local M = {}

--- `text` cut to `width` display cells, the cut marked with "…".
function M.clip(text, width)
  if vim.fn.strdisplaywidth(text) <= width then
    return text
  end
  return vim.fn.strcharpart(text, 0, math.max(width - 1, 0)) .. '…'
end

--- `before .. middle .. after`, `middle` (a title, a path: the part that may be long) cut so that
--- the whole fits `v:echospace`; when even that is not enough, the whole is cut.
function M.fit(before, middle, after)
  local room = math.max(vim.v.echospace, 20)
  local width = room - vim.fn.strdisplaywidth(before .. after)
  if width >= math.min(12, vim.fn.strdisplaywidth(middle)) then
    return before .. M.clip(middle, width) .. after
  end
  return M.clip(before .. M.clip(middle, 12) .. after, room)
end

return M
