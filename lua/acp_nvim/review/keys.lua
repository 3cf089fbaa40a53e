--- The keys of a review: the verdict keys in both windows (the user's own buffer-local maps
--- of those keys are saved and put back), and `dp` in the proposal.
local M = {}

local api = vim.api

local VERDICT_KEYS = { 'ga', 'gr', 'gA', 'gR' }

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

local function map(buf, lhs, fn, desc, saved)
  if saved then
    local old = vim.fn.maparg(lhs, 'n', false, true)
    if old.buffer == 1 then
      saved[#saved + 1] = old
    end
  end
  vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, desc = 'acp.nvim review: ' .. desc })
end

--- Map the verdict keys on both buffers of `file` and `dp` on its proposal.
---@param actions table<string, { [1]: function, [2]: string }> ga/gr/gA/gR -> { callback, description }
function M.set(file, actions)
  for _, buf in ipairs({ file.prop, file.left }) do
    local saved = buf == file.left and file.live and file.saved_maps or nil
    api.nvim_buf_call(buf, function()
      for _, lhs in ipairs(VERDICT_KEYS) do
        map(buf, lhs, actions[lhs][1], actions[lhs][2], saved)
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
  api.nvim_buf_call(file.left, function()
    for _, old in ipairs(file.saved_maps) do
      vim.fn.mapset('n', false, old)
    end
  end)
  file.saved_maps = {}
end

return M
