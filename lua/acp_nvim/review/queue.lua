--- The reviews waiting for a verdict, in arrival order (kept in acp_nvim.question.pending with the
--- permission prompts); at most one is open at a time.
local M = {}

local pending = require('acp_nvim.question.pending')

---@class acp_nvim.Review: acp_nvim.Pending
---@field spec table      what Python sent (nvim/review_spec.py)
---@field files table[]?  one per file once built (review/init.lua)
---@field state 'queued'|'open'|'hidden'
---@field sent boolean?   the verdict went out
---@field closing boolean? its windows are being closed by us, not the user

--- Review `id` and its position, or nil.
---@return acp_nvim.Review?, integer?
function M.find(id)
  return pending.find('review', id)
end

--- The pending reviews, oldest first.
---@return acp_nvim.Review[]
function M.reviews()
  return pending.list('review')
end

--- The open review, or nil.
function M.active()
  return pending.first('review', function(review)
    return review.state == 'open'
  end)
end

--- The first review waiting to be shown, or nil.
function M.next_queued()
  return pending.first('review', function(review)
    return review.state == 'queued'
  end)
end

function M.add(review)
  pending.add('review', review)
end

function M.remove(review)
  pending.remove(review)
end

--- Requests other than `review` still waiting: reviews and permission prompts.
function M.others_waiting(review)
  local n = pending.count()
  return M.find(review.id) == review and n - 1 or n
end

--- { id, title, session, files, state } of every review, for :Ai permissions.
function M.list()
  local out = {}
  for _, review in ipairs(M.reviews()) do
    out[#out + 1] = { id = review.id, title = review.spec.title, session = review.spec.session,
      files = #review.spec.files, state = review.state }
  end
  return out
end

return M
