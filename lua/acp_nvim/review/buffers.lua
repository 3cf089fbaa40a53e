--- The buffers of a review file: the agent's proposal (an editable `acwrite` scratch buffer) and,
--- on the left, the file as it is now: the live buffer when it is loaded (so unsaved edits
--- show), a read-only scratch copy otherwise. Made and wiped through the view kit.
local M = {}

local api = vim.api
local scratch = require('acp_nvim.kit.scratch')

M.KIND = 'review'

--- `path` as the user reads it: relative to the working directory when inside it, else with `~`
--- for the home folder.
function M.display_name(path)
  return vim.fn.fnamemodify(path, ':~:.')
end

--- `{file} (review {n} of {session})`, the left copy `{file} (current, review …)`: named after
--- the file, with no '/' after it, so the tab page's default label is the file's name (the
--- default tabline shortens every directory of the current buffer's name to one letter).
local function name(review, file, role)
  local session = review.spec.session:gsub('/', ':')
  return ('%s (%sreview %d of %s)'):format(M.display_name(file.spec.path), role and (role .. ', ') or '',
    review.spec.number, session)
end

--- Make `file.prop` and `file.left` (`file.live` when the left side is the user's buffer).
function M.make(review, file)
  local spec = file.spec
  local readable = spec.located ~= 'not-found'
  file.prop = scratch.create({ name = name(review, file), kind = M.KIND, buftype = 'acwrite',
    bufhidden = 'hide', filetype_from = spec.path, lines = spec.agent, modifiable = readable })
  vim.b[file.prop].acp_nvim_session = review.spec.session -- :Ai commands and notices know whose it is
  local live = spec.loaded and readable and require('acp_nvim.host.buffers').find(spec.path)
  if live then
    file.left, file.live = live, true
    return
  end
  file.left = scratch.create({ name = name(review, file, 'current'), kind = M.KIND, buftype = 'nofile',
    bufhidden = 'hide', filetype_from = spec.path, lines = spec.left, modifiable = false })
  vim.b[file.left].acp_nvim_session = review.spec.session
end

--- The accepted text: the proposal buffer as the user left it.
function M.proposal_text(file)
  local lines = api.nvim_buf_get_lines(file.prop, 0, -1, false)
  local text = table.concat(lines, file.spec.newline)
  if file.spec.eol then
    text = text .. file.spec.newline
  end
  return text
end

--- Wipe the review's own buffers (never the user's live buffer).
function M.wipe(review)
  for _, file in ipairs(review.files or {}) do
    scratch.wipe(file.prop)
    if not file.live then
      scratch.wipe(file.left)
    end
  end
end

return M
