--- The review view: every file of a diff-bearing permission request in its own tab page.
--- Left: the file as it is now (the live buffer when loaded, so unsaved edits show; otherwise a
--- scratch copy). Right: the agent's proposal in an editable `acwrite` scratch buffer. The
--- verdict goes back to Python exactly once (`host.call.review_done`); one review is open at a time,
--- the others wait in a visible queue (|:Ai-permissions|).
---
--- This module is the lifecycle and the public API; its parts live in review/:
---   queue    the pending reviews                 buffers  the proposal and the left side
---   winbars  the winbars                         keys     verdict keys, `gC` and `dp`
---   windows  tab pages, autocmds, closing        comments the user's comments on lines
local M = {}

local api = vim.api
local guard = require('acp_nvim.kit.guard')
local buffers = require('acp_nvim.review.buffers')
local comments = require('acp_nvim.review.comments')
local keys = require('acp_nvim.review.keys')
local oneline = require('acp_nvim.kit.oneline')
local queue = require('acp_nvim.review.queue')
local winbars = require('acp_nvim.review.winbars')
local windows = require('acp_nvim.review.windows')

--- A review (its fields: review/queue.lua) owns its files' buffers and tab pages.
---@class acp_nvim.Review
local Review = {}
Review.__index = Review

--- The pending reviews in arrival order (review/queue.lua): { id, spec, files, state, … }.
---@return acp_nvim.Review[]
function M.pending()
  return queue.reviews()
end

local function notify(msg, level)
  require('acp_nvim.kit.notify').notify('[acp.nvim] ' .. msg, level or vim.log.levels.INFO)
end

function Review:refresh_bars()
  winbars.refresh(self, queue.others_waiting(self))
end

function Review:close_windows()
  windows.close(self)
  for _, file in ipairs(self.files or {}) do
    keys.restore(file)
  end
end

function Review:build()
  if self.files then
    return
  end
  self.files = {}
  for _, spec in ipairs(self.spec.files) do
    local file = { spec = spec, saved_maps = {} }
    self.files[#self.files + 1] = file -- first, so a failure below still cleans up
    buffers.make(self, file)
  end
end

--- Focus the proposal of the first undecided file (the first file when all are decided). Its
--- verdict keys wait `permissions.arm_ms` from here (acp_nvim.kit.guard).
function Review:focus()
  local target = self.files[1]
  for _, file in ipairs(self.files) do
    if not file.decision then
      target = file
      break
    end
  end
  local win = target.wins and target.wins[2]
  if win and api.nvim_win_is_valid(win) then
    api.nvim_set_current_win(win)
    target.shown_at = target.shown_at or guard.now()
  end
end

--- When the verdict keys of `file` were put before the user (for the key guard).
function Review:keys_shown_at(file)
  return function()
    return file.shown_at or self.shown_at
  end
end

function Review:actions(file)
  return {
    ga = { function() M.decide(self.id, file, 'accepted') end, 'accept this file' },
    gr = { function() M.decide(self.id, file, 'rejected') end, 'reject this file' },
    gA = { function() M.decide_all(self.id, 'accepted') end, 'accept every file' },
    gR = { function() M.decide_all(self.id, 'rejected') end, 'reject every file' },
  }
end

function Review:watch_lock()
  if self.stop_watch then
    self.stop_watch()
  end
  self.stop_watch = guard.watch(function()
    return self.state == 'open' and self.shown_at or nil
  end, function()
    self:refresh_bars()
  end)
end

function Review:show()
  require('acp_nvim.kit.highlights').setup()
  self:build()
  vim.cmd('stopinsert')
  self.state = 'open'
  self.shown_at = guard.now()
  for _, file in ipairs(self.files) do
    file.shown_at = nil
    windows.open(file)
    keys.set(file, self:actions(file), self:keys_shown_at(file), function() M.comment() end)
    windows.watch(self, file, function() M.closed_by_user(self.id) end,
      function() M.decide(self.id, file, 'accepted') end)
  end
  self:focus()
  self:refresh_bars()
  self:watch_lock()
end

--- Show a review; if that fails, say why and let Python ask without the view.
function Review:show_safely()
  local ok, err = pcall(self.show, self)
  if ok then
    return
  end
  self.sent = true
  self:forget()
  notify(('cannot show the review (%s); asking without it'):format(err), vim.log.levels.ERROR)
  require('acp_nvim.host').call.review_done(self.id, { files = {}, error = tostring(err) })
end

local function refresh_active()
  local current = queue.active()
  if current then
    current:refresh_bars()
  end
end

--- Show the first queued review when none is open: at once after the user's own verdict or close
--- (`in_flow`), otherwise only when they are not typing (else it waits for :Ai permissions).
local function next_queued(in_flow)
  local review = not queue.active() and queue.next_queued()
  if review and (in_flow or guard.may_focus()) then
    review:show_safely()
  end
end

--- What the user is told of a review that did not open: one line (no hit-enter prompt).
local function waiting_notice(title)
  local focus = (require('acp_nvim.config.options').config.permissions or {}).focus
  return oneline.fit('[acp.nvim] review waiting: ', title,
    focus == 'never' and '; :Ai permissions opens it' or '; opens when you pause')
end

function Review:forget()
  if self.stop_watch then
    self.stop_watch()
    self.stop_watch = nil
  end
  queue.remove(self)
  self:close_windows()
  for _, file in ipairs(self.files or {}) do
    comments.clear(file)
  end
  buffers.wipe(self)
  vim.cmd('redrawstatus!')
end

function Review:finish()
  if self.sent then
    return
  end
  self.sent = true
  local files = {}
  for _, file in ipairs(self.files) do
    files[#files + 1] = { path = file.spec.path, text = file.decision == 'accepted' and file.text or nil,
      comments = comments.of(file) }
  end
  self:forget()
  require('acp_nvim.host').call.review_done(self.id, { files = files })
  next_queued(true)
  refresh_active()
end

local function record(file, decision)
  file.decision = decision
  file.text = decision == 'accepted' and buffers.proposal_text(file) or nil
end

--- A new review from Python: shown at once when the user is not typing; else (and behind an open
--- review) it waits in arrival order, the user is told how to reach it, and it opens by itself as
--- soon as they are idle, however long that takes (acp_nvim.kit.guard.when_idle; not with
--- `permissions.focus = 'never'`). A review the user hid stays hidden.
function M.open(id, spec)
  guard.start()
  local review = setmetatable({ id = id, spec = spec, state = 'queued' }, Review)
  queue.add(review)
  if queue.active() then
    refresh_active()
    vim.notify(oneline.fit('[acp.nvim] another review waiting: ', spec.title, ' (:Ai permissions)'))
  elseif guard.may_focus() then
    queue.next_queued():show_safely()
  else
    vim.notify(waiting_notice(spec.title), vim.log.levels.INFO)
    guard.when_idle(function()
      if review.state ~= 'queued' or not queue.find(review.id) or queue.active() then
        return false
      end
      queue.next_queued():show_safely()
      return true
    end)
  end
end

--- Decide one file; when every file is decided the verdict goes out.
function M.decide(id, file, decision)
  local review = queue.find(id)
  if not review or review.sent then
    return
  end
  record(file, decision)
  vim.bo[file.prop].modified = false
  for _, other in ipairs(review.files) do
    if not other.decision then
      review:focus()
      review:refresh_bars()
      return notify(('%s %s; next: %s'):format(buffers.display_name(file.spec.path), decision,
        buffers.display_name(other.spec.path)))
    end
  end
  review:finish()
end

--- Decide every file not decided yet (gA / gR), then send the verdict.
function M.decide_all(id, decision)
  local review = queue.find(id)
  if not review then
    return
  end
  for _, file in ipairs(review.files) do
    if not file.decision then
      record(file, decision)
    end
  end
  review:finish()
end

--- The user closed a review window: reject (default) or hide it, per `permissions.close_is_reject`.
function M.closed_by_user(id)
  local review = queue.find(id)
  if not review or review.closing or review.sent or review.state ~= 'open' then
    return
  end
  local config = require('acp_nvim.config.options').config.permissions or {}
  if config.close_is_reject == false then
    review:close_windows()
    review.state = 'hidden'
    notify(('review hidden, still waiting: %s (:Ai permissions shows it)'):format(review.spec.title))
    return next_queued(true)
  end
  for _, file in ipairs(review.files) do
    if not file.decision or not api.nvim_buf_is_valid(file.prop) then
      file.decision, file.text = 'rejected', nil
    end
  end
  review:finish()
end

--- The request was answered elsewhere (cancelled turn, closed session): close without a reply.
function M.dismiss(id)
  local review = queue.find(id)
  if not review then
    return
  end
  review.sent = true
  review:forget()
  notify(('review closed: the request was cancelled (%s)'):format(review.spec.title))
  next_queued(false)
  refresh_active()
end

--- Bring review `id` to the front (from :Ai permissions); the open one waits hidden.
function M.show(id)
  local review = queue.find(id)
  if not review then
    return
  end
  if review.state == 'open' then
    return review:focus()
  end
  local current = queue.active()
  if current then
    current:close_windows()
    current.state = 'hidden'
  end
  review:show_safely()
end

--- `gC` and <Plug>(AcpNvimReviewComment): comment on the cursor's line (or the visual range) of the
--- review in the current window (|acp_nvim-review-comments|).
function M.comment()
  local review = queue.active()
  local buf = api.nvim_get_current_buf()
  for _, file in ipairs(review and not review.sent and review.files or {}) do
    if file.prop == buf or file.left == buf then
      local first, last = comments.range()
      return comments.ask(file, buf, first, last)
    end
  end
  comments.notify('<Plug>(AcpNvimReviewComment) works in a review window (a request with a diff opens one)')
end

--- Whether the open review's verdict keys would count if pressed now in the current window
--- (for tests and the fault harness; see acp_nvim.kit.guard).
function M.armed()
  local review = queue.active()
  if not review then
    return false
  end
  local win = api.nvim_get_current_win()
  for _, file in ipairs(review.files or {}) do
    if file.wins and (file.wins[1] == win or file.wins[2] == win) then
      return keys.armed(file.shown_at or review.shown_at)
    end
  end
  return false
end

--- Pending reviews for :Ai permissions: { id, title, session, files, state }.
function M.list()
  return queue.list()
end

return M
