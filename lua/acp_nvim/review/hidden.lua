--- Characters that show as nothing, or as a plain space, in a review: each gets an inline mark
--- naming it (`⟨U+202E⟩`), so a bidi override, a zero-width character or an exotic space in
--- what the agent proposes can be seen before it is accepted. Neovim shows C0 controls as `^X`
--- and many format characters as `<xxxx>` itself; a character that already takes more than
--- one cell is not marked again. Tabs and runs of spaces are shown by 'listchars' (windows.lua).
local M = {}

local api = vim.api

M.ns = api.nvim_create_namespace('acp_nvim_review_hidden')

--- Code points (ranges, inclusive) that render as nothing or as a blank.
M.RANGES = {
  { 0x00A0, 0x00A0 }, { 0x00AD, 0x00AD }, { 0x034F, 0x034F }, { 0x061C, 0x061C }, { 0x115F, 0x1160 },
  { 0x17B4, 0x17B5 }, { 0x180B, 0x180E }, { 0x2000, 0x200F }, { 0x2028, 0x202F }, { 0x205F, 0x206F },
  { 0x2800, 0x2800 }, { 0x3000, 0x3000 }, { 0x3164, 0x3164 }, { 0xFE00, 0xFE0F }, { 0xFEFF, 0xFEFF },
  { 0xFFA0, 0xFFA0 }, { 0xFFF9, 0xFFFB }, { 0xE0000, 0xE007F },
}

local function hidden(code)
  for _, range in ipairs(M.RANGES) do
    if code >= range[1] and code <= range[2] then
      return true
    end
  end
  return false
end

--- The code point of the UTF-8 sequence `ch` (nil when it is not one).
local function decode(ch)
  local b1, b2, b3, b4 = ch:byte(1, 4)
  if #ch == 2 and b1 >= 0xC2 then
    return (b1 - 0xC0) * 0x40 + (b2 - 0x80)
  elseif #ch == 3 then
    return ((b1 - 0xE0) * 0x40 + (b2 - 0x80)) * 0x40 + (b3 - 0x80)
  elseif #ch == 4 then
    return (((b1 - 0xF0) * 0x40 + (b2 - 0x80)) * 0x40 + (b3 - 0x80)) * 0x40 + (b4 - 0x80)
  end
end

--- Mark every such character of `buf` (a review's own buffer) with its name.
function M.mark(buf)
  if not (buf and api.nvim_buf_is_valid(buf)) then
    return
  end
  api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
  for row, line in ipairs(api.nvim_buf_get_lines(buf, 0, -1, false)) do
    if line:find('[\194-\244]') then
      for col, ch in line:gmatch('()([\194-\244][\128-\191]*)') do
        local code = decode(ch)
        if code and hidden(code) and vim.fn.strdisplaywidth(ch) <= 1 then
          api.nvim_buf_set_extmark(buf, M.ns, row - 1, col - 1, {
            virt_text = { { ('⟨U+%04X⟩'):format(code), 'AcpNvimReviewHidden' } }, virt_text_pos = 'inline',
          })
        end
      end
    end
  end
end

return M
