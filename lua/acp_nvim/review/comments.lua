--- Review comments (|acp_nvim-review-comments|): `gC` on a line or a visual range of either side
--- of a review asks for a comment (`vim.ui.input`) and marks those lines with a sign and the
--- comment as virtual text. The comments go back with the verdict; the marks are extmarks, so a
--- comment follows its lines while the user edits the proposal, and its lines are read at the end.
local M = {}

local api = vim.api

M.NS = api.nvim_create_namespace('acp_nvim_review_comments')
local SIGN = '✎'
local MAX_QUOTE = 2000

local function notify(msg)
  vim.notify('[acp.nvim] ' .. msg, vim.log.levels.INFO)
end

--- Which side of `file` buffer `buf` is: 'proposal' (the agent's text) or 'current' (the file now).
local function side_of(file, buf)
  if buf == file.prop then
    return 'proposal'
  elseif buf == file.left then
    return 'current'
  end
end

local function mark(buf, comment)
  comment.marks = {}
  for row = comment.first, comment.last do
    local opts = { sign_text = SIGN, sign_hl_group = 'AcpNvimReviewComment', priority = 20 }
    if row == comment.first then
      opts.virt_text = { { SIGN .. ' ' .. comment.text, 'AcpNvimReviewComment' } }
      opts.virt_text_pos = 'eol'
    end
    comment.marks[#comment.marks + 1] = api.nvim_buf_set_extmark(buf, M.NS, row - 1, 0, opts)
  end
end

--- Add a comment on lines `first`..`last` (1-based) of `buf`, one of `file`'s two buffers.
function M.add(file, buf, first, last, text)
  local side = side_of(file, buf)
  if not side then
    return
  end
  first, last = math.min(first, last), math.max(first, last)
  local comment = { buf = buf, side = side, first = first, last = last, text = vim.trim(text) }
  file.comments = file.comments or {}
  file.comments[#file.comments + 1] = comment
  mark(buf, comment)
  notify(('comment on %s %s: it goes to the agent with your verdict'):format(side,
    first == last and ('line ' .. first) or ('lines %d-%d'):format(first, last)))
end

--- Ask for a comment on lines `first`..`last` of `buf` and add it (an empty answer adds nothing).
function M.ask(file, buf, first, last)
  local lines = first == last and ('line ' .. first) or ('lines %d-%d'):format(math.min(first, last),
    math.max(first, last))
  vim.ui.input({ prompt = ('Comment on %s (%s): '):format(lines, side_of(file, buf)) }, function(text)
    if text and vim.trim(text) ~= '' and api.nvim_buf_is_valid(buf) then
      M.add(file, buf, first, last, text)
    end
  end)
end

--- The line span a comment's marks cover now (edits above or inside move them).
local function span(comment)
  local rows = {}
  for _, id in ipairs(comment.marks or {}) do
    local pos = api.nvim_buf_get_extmark_by_id(comment.buf, M.NS, id, {})
    if pos[1] then
      rows[#rows + 1] = pos[1] + 1
    end
  end
  if #rows == 0 then
    return comment.first, comment.last
  end
  return math.min(unpack(rows)), math.max(unpack(rows))
end

--- The comments of `file` for the verdict: { side, first, last, text, quote } each.
function M.of(file)
  local out = {}
  for _, comment in ipairs(file.comments or {}) do
    local first, last = comment.first, comment.last
    local quote = ''
    if api.nvim_buf_is_valid(comment.buf) then
      first, last = span(comment)
      quote = table.concat(api.nvim_buf_get_lines(comment.buf, first - 1, last, false), '\n'):sub(1, MAX_QUOTE)
    end
    out[#out + 1] = { side = comment.side, first = first, last = last, text = comment.text, quote = quote }
  end
  return out
end

--- Take the marks off both buffers of `file` (the left one may be the user's own buffer).
function M.clear(file)
  for _, buf in ipairs({ file.prop, file.left }) do
    if buf and api.nvim_buf_is_valid(buf) then
      api.nvim_buf_clear_namespace(buf, M.NS, 0, -1)
    end
  end
end

--- The lines `gC` comments on in the current window: the visual range in Visual mode (which it
--- ends), else the cursor's line.
function M.range()
  local mode = api.nvim_get_mode().mode
  if mode:match('^[vV\22]') then
    local first, last = vim.fn.line('v'), vim.fn.line('.')
    api.nvim_feedkeys(api.nvim_replace_termcodes('<Esc>', true, false, true), 'nx', false)
    return math.min(first, last), math.max(first, last)
  end
  local row = api.nvim_win_get_cursor(0)[1]
  return row, row
end

M.notify = notify

return M
