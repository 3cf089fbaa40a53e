--- The windows of a review: a tab page per file (current | proposal) in diff mode through the
--- view kit, the autocmds that notice a closed window or a `:w`, and closing it all again.
local M = {}

local api = vim.api
local diff = require('acp_nvim.kit.diff')

--- Every character of a review can be seen before an accept counts: lines wrap (no text past the
--- window's edge, as diff mode would leave it), tabs, runs of spaces, trailing spaces and no-break
--- spaces show as marks, and characters that show as nothing (bidi marks, zero-width and
--- exotic spaces Neovim prints as themselves) get a mark naming them (`hidden.mark`).
M.OPTIONS = { wrap = true, linebreak = false, breakindent = false, list = true,
  listchars = 'tab:→ ,trail:·,nbsp:␣,multispace:·,leadmultispace: ,extends:›,precedes:‹' }

local function group_name(review)
  return 'acp_nvim_review_' .. review.id
end

local function first_hunk(win)
  api.nvim_win_call(win, function()
    vim.cmd('normal! gg')
    if vim.fn.diff_hlID(1, 1) == 0 then
      pcall(vim.cmd, 'silent! normal! ]c')
    end
  end)
end

--- Open the tab page of `file`: `file.wins` = { current, proposal }, the cursor on the first hunk.
function M.open(file)
  file.wins = diff.tab({ file.left, file.prop })
  file.tab = api.nvim_get_current_tabpage()
  for _, win in ipairs(file.wins) do
    diff.set(win, M.OPTIONS)
  end
  require('acp_nvim.review.hidden').mark(file.prop)
  if not file.live then
    require('acp_nvim.review.hidden').mark(file.left)
  end
  first_hunk(file.wins[2])
end

--- Call `on_closed()` when a window of `file` closes and `on_written()` on `:w` in its proposal.
function M.watch(review, file, on_closed, on_written)
  local group = api.nvim_create_augroup(group_name(review), { clear = false })
  for _, win in ipairs(file.wins) do
    api.nvim_create_autocmd('WinClosed', {
      group = group,
      pattern = tostring(win),
      once = true,
      callback = function()
        vim.schedule(on_closed)
      end,
    })
  end
  api.nvim_create_autocmd('BufWriteCmd', {
    group = group,
    buffer = file.prop,
    callback = function()
      -- after the write: `:wq` / `:x` then close the window, which must not count as a reject
      vim.bo[file.prop].modified = false
      vim.schedule(on_written)
    end,
  })
end

--- Close every window of `review`, their options given back; `review.closing` is set meanwhile
--- so the WinClosed autocmds know it was not the user.
function M.close(review)
  review.closing = true
  pcall(api.nvim_del_augroup_by_name, group_name(review))
  for _, file in ipairs(review.files or {}) do
    for _, win in ipairs(diff.close(file.wins or {})) do
      if api.nvim_win_get_buf(win) == file.prop then
        api.nvim_win_call(win, function()
          vim.cmd('enew') -- the last window of the editor: give it an empty buffer
        end)
      end
    end
    file.wins = nil
  end
  review.closing = false
end

return M
