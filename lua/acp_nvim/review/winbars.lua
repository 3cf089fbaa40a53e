--- The winbars of a review: what each side is, the keys, flags and how many requests wait.
local M = {}

local api = vim.api
local diff = require('acp_nvim.kit.diff')
local display_name = require('acp_nvim.review.buffers').display_name

local FLAGS = { snippet = 'snippet placed', merged = 'merged on current text', new = 'new file',
  ['not-found'] = 'diff as sent, read-only' }

local function escape(text)
  return (text:gsub('%%', '%%%%'))
end

local function key(k, label)
  return ('%%#AcpNvimReviewKey#%s%%#AcpNvimReviewBar# %s'):format(k, label)
end

--- What the name leads to: the file a write lands in when the name is a link, and a flag when
--- that file configures code execution.
local function target(file)
  local out = ''
  if (file.spec.target or '') ~= '' then
    out = (' %%#AcpNvimReviewNote#[link → writes %s]%%#AcpNvimReviewBar#'):format(
      escape(display_name(file.spec.target)))
  end
  if file.spec.runs_code then
    out = out .. ' %#AcpNvimReviewNote#[configures code execution]%#AcpNvimReviewBar#'
  end
  return out
end

local function left_bar(review, file)
  local multi = #review.files > 1
  local state = file.live and vim.bo[file.left].modified and ' [unsaved]' or ''
  if not require('acp_nvim.review.keys').armed(file.shown_at or review.shown_at) then
    state = state .. ' %#AcpNvimPromptLocked#[keys wait a moment]%#AcpNvimReviewBar#'
  end
  local parts = {
    ('%%#AcpNvimReviewTitle#current%%#AcpNvimReviewBar# %s%s%s'):format(escape(display_name(file.spec.path)),
      target(file), state),
    key('ga', multi and 'accept file' or 'accept'),
    key('gr', multi and 'reject file' or 'reject'),
  }
  if multi then
    parts[#parts + 1] = key('gA/gR', 'all files')
  end
  parts[#parts + 1] = key(']c [c', 'next/prev hunk')
  return '%#AcpNvimReviewBar#' .. table.concat(parts, ' · ')
end

local function right_bar(review, file, index, waiting)
  local head = ('%%#AcpNvimReviewTitle#proposal %d/%d'):format(index, #review.files)
  if file.decision then
    head = head .. ' (' .. file.decision .. ')'
  end
  local flag = FLAGS[file.spec.located]
  if flag then
    head = head .. ' %#AcpNvimReviewNote#[' .. flag .. ']'
  end
  local parts = { head, key('do', 'leave hunk (current→proposal)'), key('dp', 'take hunk (agent→proposal)') }
  if waiting > 0 then
    parts[#parts + 1] = ('%%#AcpNvimReviewNote#+%d waiting'):format(waiting)
  end
  return '%#AcpNvimReviewBar#' .. table.concat(parts, '%#AcpNvimReviewBar# · ')
end

--- Redraw the winbars of every open window of `review`; `waiting` other requests are pending.
function M.refresh(review, waiting)
  for i, file in ipairs(review.files) do
    local wins = file.wins or {}
    if wins[1] and api.nvim_win_is_valid(wins[1]) then
      diff.set(wins[1], { winbar = left_bar(review, file) })
    end
    if wins[2] and api.nvim_win_is_valid(wins[2]) then
      diff.set(wins[2], { winbar = right_bar(review, file, i, waiting) })
    end
  end
end

return M
