--- Text shortened to a width in display cells: whole words, then an ellipsis; a word is cut only
--- when not even the first one fits.
local M = {}

local api = vim.api

local ELLIPSIS = '…'

--- The longest prefix of `text` that fits `width` cells, cut by characters.
local function by_characters(text, width)
  local out, used = {}, 0
  for _, char in ipairs(vim.fn.split(text, '\\zs')) do
    local cells = api.nvim_strwidth(char)
    if used + cells > width then
      break
    end
    out[#out + 1] = char
    used = used + cells
  end
  return table.concat(out)
end

--- `text` in at most `width` display cells: unchanged when it fits, else the words that fit
--- (separators such as ' · ' at the cut dropped) and '…'.
---@param text string
---@param width integer
---@return string
function M.text(text, width)
  if api.nvim_strwidth(text) <= width then
    return text
  end
  if width < 1 then
    return ''
  end
  local room = width - api.nvim_strwidth(ELLIPSIS)
  local best
  for space in text:gmatch('()%s') do
    local head = text:sub(1, space - 1):gsub('[%s·:,;%-─]+$', '')
    if head ~= '' and api.nvim_strwidth(head) <= room then
      best = head
    elseif api.nvim_strwidth(head) > room then
      break
    end
  end
  return (best or by_characters(text, room)) .. ELLIPSIS
end

return M
