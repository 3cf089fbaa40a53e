--- The keys of a review: the verdict keys and `gC` (a comment, in Normal and Visual mode) in both
--- windows (the user's own buffer-local maps of those keys are saved and put back), and `dp` in
--- the proposal. The verdict keys count only
--- once the file has been in front of the user `permissions.arm_ms` and no key came in the
--- `permissions.quiet_ms` before (acp_nvim.kit.guard): a `ga` typed in a hurry decides nothing.
local M = {}

local api = vim.api
local guard = require('acp_nvim.kit.guard')

local VERDICT_KEYS = { 'ga', 'gr', 'gA', 'gR' }
--- `gC` is no command of Vim or Neovim in Normal or Visual mode (`gc`, the comment operator, is
--- another key), so the review shadows nothing by it.
local COMMENT_KEY = 'gC'
local COMMENT_MODES = { 'n', 'x' }

local function notify(msg)
  vim.notify('[acp.nvim] ' .. msg, vim.log.levels.INFO)
end

local function diff_indices(a, b)
  local diff = (vim.text and vim.text.diff) or vim.diff
  return diff(table.concat(a, '\n') .. '\n', table.concat(b, '\n') .. '\n', { result_type = 'indices' })
end

--- `dp` in the proposal: put the agent's version of the hunk under the cursor back.
local function take_hunk(file)
  local row = api.nvim_win_get_cursor(0)[1]
  local agent = file.spec.agent
  local mine = api.nvim_buf_get_lines(file.prop, 0, -1, false)
  for _, h in ipairs(diff_indices(agent, mine)) do
    local a_start, a_count, b_start, b_count = unpack(h)
    local last = b_count == 0 and b_start + 1 or b_start + b_count - 1
    if row >= b_start and row <= last then
      local first = b_count == 0 and b_start or b_start - 1
      api.nvim_buf_set_lines(file.prop, first, first + b_count, false,
        vim.list_slice(agent, a_start, a_start + a_count - 1))
      return
    end
  end
  notify('no change of the agent at the cursor (dp takes the agent’s version of a hunk)')
end

local function map(buf, lhs, fn, desc, saved, mode)
  mode = mode or 'n'
  if saved then
    local old = vim.fn.maparg(lhs, mode, false, true)
    if old.buffer == 1 then
      saved[#saved + 1] = { mode, old }
    end
  end
  vim.keymap.set(mode, lhs, fn, { buffer = buf, nowait = true, desc = 'acp.nvim review: ' .. desc })
end

--- `fn` behind the key guard: ignored (and the user told how long to wait) while keys wait.
local function guarded(fn, shown_at)
  return function()
    local counts, wait = guard.press(shown_at())
    if not counts then
      return notify(('review keys wait %.1f s more: the review just appeared, or you were typing'):format(
        wait / 1000))
    end
    fn()
  end
end

--- Whether the verdict keys of a file shown at `shown_at` would count now (for the winbar).
function M.armed(shown_at)
  return shown_at ~= nil and guard.armed(shown_at)
end

--- Map the verdict keys on both buffers of `file` and `dp` on its proposal.
---@param actions table<string, { [1]: function, [2]: string }> ga/gr/gA/gR -> { callback, description }
---@param shown_at fun(): number when the file's keys were put before the user (ms, acp_nvim.kit.guard)
---@param comment function `gC`: comment on the cursor's line or the visual range
function M.set(file, actions, shown_at, comment)
  for _, buf in ipairs({ file.prop, file.left }) do
    local saved = buf == file.left and file.live and file.saved_maps or nil
    api.nvim_buf_call(buf, function()
      for _, lhs in ipairs(VERDICT_KEYS) do
        map(buf, lhs, guarded(actions[lhs][1], shown_at), actions[lhs][2], saved)
      end
      for _, mode in ipairs(COMMENT_MODES) do
        map(buf, COMMENT_KEY, comment, 'comment on these lines', saved, mode)
      end
    end)
  end
  map(file.prop, 'dp', function() take_hunk(file) end, 'take the agent’s hunk')
end

--- Take the verdict keys off the user's live buffer and put back the maps they replaced.
function M.restore(file)
  if not (file.live and api.nvim_buf_is_valid(file.left)) then
    return
  end
  for _, lhs in ipairs(VERDICT_KEYS) do
    pcall(vim.keymap.del, 'n', lhs, { buffer = file.left })
  end
  for _, mode in ipairs(COMMENT_MODES) do
    pcall(vim.keymap.del, mode, COMMENT_KEY, { buffer = file.left })
  end
  api.nvim_buf_call(file.left, function()
    for _, old in ipairs(file.saved_maps) do
      vim.fn.mapset(old[1], false, old[2])
    end
  end)
  file.saved_maps = {}
end

return M
