--- The review view: every file of a diff-bearing permission request in its own tab page.
--- Left: the file as it is now (the live buffer when loaded, so unsaved edits show; otherwise a
--- scratch copy). Right: the agent's proposal in an editable `acwrite` scratch buffer. The
--- verdict goes back to Python exactly once (AcpNvimReviewDone); one review is open at a time,
--- the others wait in a visible queue (|:Ai-permissions|).
local M = {}

local api = vim.api

---@type table[] pending reviews in arrival order: { id, spec, files, state = queued|open|hidden }
M.reviews = {}

local SAVED_OPTIONS = { 'diff', 'scrollbind', 'cursorbind', 'foldmethod', 'foldcolumn', 'foldenable', 'foldlevel',
  'wrap', 'winbar' }
local VERDICT_KEYS = { 'ga', 'gr', 'gA', 'gR' }

local function highlights()
  api.nvim_set_hl(0, 'AcpNvimReviewBar', { link = 'WinBar', default = true })
  api.nvim_set_hl(0, 'AcpNvimReviewTitle', { link = 'Title', default = true })
  api.nvim_set_hl(0, 'AcpNvimReviewKey', { link = 'Special', default = true })
  api.nvim_set_hl(0, 'AcpNvimReviewNote', { link = 'DiagnosticWarn', default = true })
end

local function notify(msg, level)
  vim.notify('[acp.nvim] ' .. msg, level or vim.log.levels.INFO)
end

local function find(id)
  for i, review in ipairs(M.reviews) do
    if review.id == id then
      return review, i
    end
  end
end

local function active()
  for _, review in ipairs(M.reviews) do
    if review.state == 'open' then
      return review
    end
  end
end

local function display_name(path)
  return vim.fn.fnamemodify(path, ':.')
end

-- buffers -----------------------------------------------------------------------------------

--- A leftover buffer of the same name (a review that died with an error) gives way.
local function unique_name(name)
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_get_name(buf) == name then
      pcall(api.nvim_buf_delete, buf, { force = true })
    end
  end
  return name
end

local function fill(buf, lines)
  local levels = vim.bo[buf].undolevels
  vim.bo[buf].undolevels = -1 -- the initial text is not an undoable change
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].undolevels = levels
  vim.bo[buf].modified = false
end

local function setup_scratch(buf, name, path, lines, buftype)
  api.nvim_buf_set_name(buf, unique_name(name))
  vim.bo[buf].buftype = buftype
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  fill(buf, lines)
  local ft = vim.filetype.match({ filename = path, buf = buf })
  if ft then
    vim.bo[buf].filetype = ft
  end
end

--- A scratch buffer named `name` before it is filled with `lines`, filetype from `path`.
local function scratch(name, path, lines, buftype)
  local buf = api.nvim_create_buf(false, true)
  local ok, err = pcall(setup_scratch, buf, name, path, lines, buftype)
  if not ok then
    pcall(api.nvim_buf_delete, buf, { force = true })
    error(err, 0)
  end
  return buf
end

local function base_name(review, file)
  return ('acp://review/%s/%d/%s'):format(review.spec.session, review.spec.number, display_name(file.spec.path))
end

local function make_buffers(review, file)
  local spec = file.spec
  file.prop = scratch(base_name(review, file), spec.path, spec.agent, 'acwrite')
  vim.bo[file.prop].modifiable = spec.located ~= 'not-found'
  local live = spec.loaded and spec.located ~= 'not-found' and require('acp_nvim.buffers').find(spec.path)
  if live then
    file.left, file.live = live, true
  else
    local name = base_name(review, file):gsub('^acp://review/', 'acp://review-base/')
    file.left = scratch(name, spec.path, spec.left, 'nofile')
    vim.bo[file.left].modifiable = false
  end
end

--- The accepted text: the proposal buffer as the user left it.
local function proposal_text(file)
  local lines = api.nvim_buf_get_lines(file.prop, 0, -1, false)
  local text = table.concat(lines, file.spec.newline)
  if file.spec.eol then
    text = text .. file.spec.newline
  end
  return text
end

-- winbars -----------------------------------------------------------------------------------

local function escape_bar(text)
  return (text:gsub('%%', '%%%%'))
end

local function key(k, label)
  return ('%%#AcpNvimReviewKey#%s%%#AcpNvimReviewBar# %s'):format(k, label)
end

local FLAGS = { snippet = 'snippet placed', merged = 'merged on current text', new = 'new file',
  ['not-found'] = 'diff as sent, read-only' }

local function left_bar(review, file)
  local multi = #review.files > 1
  local state = file.live and vim.bo[file.left].modified and ' [unsaved]' or ''
  local parts = {
    ('%%#AcpNvimReviewTitle#current%%#AcpNvimReviewBar# %s%s'):format(escape_bar(display_name(file.spec.path)), state),
    key('ga', multi and 'accept file' or 'accept'),
    key('gr', multi and 'reject file' or 'reject'),
  }
  if multi then
    parts[#parts + 1] = key('gA/gR', 'all files')
  end
  parts[#parts + 1] = key(']c [c', 'next/prev hunk')
  return '%#AcpNvimReviewBar#' .. table.concat(parts, ' · ')
end

local function waiting_count(review)
  local n = 0
  for _, other in ipairs(M.reviews) do
    if other ~= review then
      n = n + 1
    end
  end
  return n + #require('acp_nvim.permission').queue
end

local function right_bar(review, file, index)
  local head = ('%%#AcpNvimReviewTitle#proposal %d/%d'):format(index, #review.files)
  if file.decision then
    head = head .. ' (' .. file.decision .. ')'
  end
  local flag = FLAGS[file.spec.located]
  if flag then
    head = head .. ' %#AcpNvimReviewNote#[' .. flag .. ']'
  end
  local parts = { head, key('do', 'leave hunk (current→proposal)'), key('dp', 'take hunk (agent→proposal)') }
  local waiting = waiting_count(review)
  if waiting > 0 then
    parts[#parts + 1] = ('%%#AcpNvimReviewNote#+%d waiting'):format(waiting)
  end
  return '%#AcpNvimReviewBar#' .. table.concat(parts, '%#AcpNvimReviewBar# · ')
end

local function refresh_bars(review)
  for i, file in ipairs(review.files) do
    local wins = file.wins or {}
    if wins[1] and api.nvim_win_is_valid(wins[1]) then
      vim.wo[wins[1]].winbar = left_bar(review, file)
    end
    if wins[2] and api.nvim_win_is_valid(wins[2]) then
      vim.wo[wins[2]].winbar = right_bar(review, file, i)
    end
  end
end

-- keys ----------------------------------------------------------------------------------------

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

local function set_keys(review, file)
  local actions = {
    ga = { function() M.decide(review.id, file, 'accepted') end, 'accept this file' },
    gr = { function() M.decide(review.id, file, 'rejected') end, 'reject this file' },
    gA = { function() M.decide_all(review.id, 'accepted') end, 'accept every file' },
    gR = { function() M.decide_all(review.id, 'rejected') end, 'reject every file' },
  }
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

local function restore_keys(file)
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

-- windows -------------------------------------------------------------------------------------

local function save_window(file, win)
  local saved = {}
  for _, name in ipairs(SAVED_OPTIONS) do
    saved[name] = vim.wo[win][name]
  end
  file.saved_options[win] = saved
end

local function restore_window(file, win)
  local saved = file.saved_options[win]
  if not (saved and api.nvim_win_is_valid(win)) then
    return
  end
  api.nvim_win_call(win, function()
    vim.cmd('diffoff')
  end)
  for name, value in pairs(saved) do
    pcall(function()
      vim.wo[win][name] = value
    end)
  end
  file.saved_options[win] = nil
end

local function first_hunk(win)
  api.nvim_win_call(win, function()
    vim.cmd('normal! gg')
    if vim.fn.diff_hlID(1, 1) == 0 then
      pcall(vim.cmd, 'silent! normal! ]c')
    end
  end)
end

local function open_tab(review, file)
  vim.cmd('tabnew')
  local left_win, empty = api.nvim_get_current_win(), api.nvim_get_current_buf()
  vim.wo[left_win].winfixbuf = false
  api.nvim_win_set_buf(left_win, file.left)
  if empty ~= file.left and api.nvim_buf_get_name(empty) == '' and not vim.bo[empty].modified then
    pcall(api.nvim_buf_delete, empty, { force = true })
  end
  local right_win = api.nvim_open_win(file.prop, true, { split = 'right', win = left_win })
  file.wins, file.tab = { left_win, right_win }, api.nvim_get_current_tabpage()
  for _, win in ipairs(file.wins) do
    save_window(file, win)
    api.nvim_win_call(win, function()
      vim.cmd('diffthis')
    end)
  end
  first_hunk(right_win)
end

local function watch(review, file)
  local group = api.nvim_create_augroup('acp_nvim_review_' .. review.id, { clear = false })
  for _, win in ipairs(file.wins) do
    api.nvim_create_autocmd('WinClosed', {
      group = group,
      pattern = tostring(win),
      once = true,
      callback = function()
        vim.schedule(function()
          M.closed_by_user(review.id)
        end)
      end,
    })
  end
  api.nvim_create_autocmd('BufWriteCmd', {
    group = group,
    buffer = file.prop,
    callback = function()
      -- after the write: `:wq` / `:x` then close the window, which must not count as a reject
      vim.bo[file.prop].modified = false
      vim.schedule(function()
        M.decide(review.id, file, 'accepted')
      end)
    end,
  })
end

local function close_windows(review)
  review.closing = true
  pcall(api.nvim_del_augroup_by_name, 'acp_nvim_review_' .. review.id)
  for _, file in ipairs(review.files or {}) do
    for _, win in ipairs(file.wins or {}) do
      restore_window(file, win)
    end
    for _, win in ipairs(file.wins or {}) do
      if api.nvim_win_is_valid(win) and not pcall(api.nvim_win_close, win, true) then
        if api.nvim_win_get_buf(win) == file.prop then
          vim.cmd('enew') -- the last window of the editor: give it an empty buffer
        end
      end
    end
    restore_keys(file)
    file.wins = nil
  end
  review.closing = false
end

local function wipe(review)
  for _, file in ipairs(review.files or {}) do
    local ours = { file.prop or -1, (not file.live and file.left) or -1 }
    for _, buf in ipairs(ours) do
      if buf ~= -1 and api.nvim_buf_is_valid(buf) then
        pcall(api.nvim_buf_delete, buf, { force = true })
      end
    end
  end
end

-- lifecycle -----------------------------------------------------------------------------------

local function build(review)
  if review.files then
    return
  end
  review.files = {}
  for _, spec in ipairs(review.spec.files) do
    local file = { spec = spec, saved_options = {}, saved_maps = {} }
    review.files[#review.files + 1] = file -- first, so a failure below still cleans up
    make_buffers(review, file)
  end
end

--- Focus the proposal of the first undecided file (the first file when all are decided).
local function focus(review)
  local target = review.files[1]
  for _, file in ipairs(review.files) do
    if not file.decision then
      target = file
      break
    end
  end
  local win = target.wins and target.wins[2]
  if win and api.nvim_win_is_valid(win) then
    api.nvim_set_current_win(win)
  end
end

local function show(review)
  highlights()
  build(review)
  vim.cmd('stopinsert')
  review.state = 'open'
  for _, file in ipairs(review.files) do
    open_tab(review, file)
    set_keys(review, file)
    watch(review, file)
  end
  refresh_bars(review)
  focus(review)
end

local forget

--- Show a review; if that fails, say why and let Python ask without the view.
local function show_safely(review)
  local ok, err = pcall(show, review)
  if ok then
    return
  end
  review.sent = true
  forget(review)
  notify(('cannot show the review (%s); asking without it'):format(err), vim.log.levels.ERROR)
  vim.fn.AcpNvimReviewDone(review.id, { files = {}, error = tostring(err) })
end

local function refresh_active()
  local current = active()
  if current then
    refresh_bars(current)
  end
end

local function next_queued()
  if active() then
    return
  end
  for _, review in ipairs(M.reviews) do
    if review.state == 'queued' then
      return show_safely(review)
    end
  end
end

function forget(review)
  local _, index = find(review.id)
  if index then
    table.remove(M.reviews, index)
  end
  close_windows(review)
  wipe(review)
  vim.cmd('redrawstatus!')
end

local function finish(review)
  if review.sent then
    return
  end
  review.sent = true
  local files = {}
  for _, file in ipairs(review.files) do
    files[#files + 1] = { path = file.spec.path, text = file.decision == 'accepted' and file.text or nil }
  end
  forget(review)
  vim.fn.AcpNvimReviewDone(review.id, { files = files })
  next_queued()
  refresh_active()
end

--- A new review from Python: shown at once, or queued behind the open one.
function M.open(id, spec)
  local review = { id = id, spec = spec, state = 'queued' }
  M.reviews[#M.reviews + 1] = review
  if active() then
    refresh_active()
    notify(('another review is waiting: %s (:Ai permissions)'):format(spec.title))
  else
    show_safely(review)
  end
end

--- Decide one file; when every file is decided the verdict goes out.
function M.decide(id, file, decision)
  local review = find(id)
  if not review or review.sent then
    return
  end
  file.decision = decision
  file.text = decision == 'accepted' and proposal_text(file) or nil
  vim.bo[file.prop].modified = false
  for _, other in ipairs(review.files) do
    if not other.decision then
      refresh_bars(review)
      focus(review)
      return notify(('%s %s; next: %s'):format(display_name(file.spec.path), decision, display_name(other.spec.path)))
    end
  end
  finish(review)
end

--- Decide every file not decided yet (gA / gR), then send the verdict.
function M.decide_all(id, decision)
  local review = find(id)
  if not review then
    return
  end
  for _, file in ipairs(review.files) do
    if not file.decision then
      file.decision = decision
      file.text = decision == 'accepted' and proposal_text(file) or nil
    end
  end
  finish(review)
end

--- The user closed a review window: reject (default) or hide it, per `permissions.close_is_reject`.
function M.closed_by_user(id)
  local review = find(id)
  if not review or review.closing or review.sent or review.state ~= 'open' then
    return
  end
  local config = require('acp_nvim').config.permissions or {}
  if config.close_is_reject == false then
    close_windows(review)
    review.state = 'hidden'
    notify(('review hidden, still waiting: %s (:Ai permissions shows it)'):format(review.spec.title))
    return next_queued()
  end
  for _, file in ipairs(review.files) do
    if not file.decision or not api.nvim_buf_is_valid(file.prop) then
      file.decision, file.text = 'rejected', nil
    end
  end
  finish(review)
end

--- The request was answered elsewhere (cancelled turn, closed session): close without a reply.
function M.dismiss(id)
  local review = find(id)
  if not review then
    return
  end
  review.sent = true
  forget(review)
  notify(('review closed: the request was cancelled (%s)'):format(review.spec.title))
  next_queued()
  refresh_active()
end

--- Bring review `id` to the front (from :Ai permissions); the open one waits hidden.
function M.show(id)
  local review = find(id)
  if not review then
    return
  end
  if review.state == 'open' then
    return focus(review)
  end
  local current = active()
  if current then
    close_windows(current)
    current.state = 'hidden'
  end
  show_safely(review)
end

--- Pending reviews for :Ai permissions: { id, title, session, files, state }.
function M.list()
  local out = {}
  for _, review in ipairs(M.reviews) do
    out[#out + 1] = { id = review.id, title = review.spec.title, session = review.spec.session,
      files = #review.spec.files, state = review.state }
  end
  return out
end

return M
