--- The reviews waiting for a verdict, in arrival order; at most one is open at a time.
local M = {}

---@type table[] { id, spec, files, state = queued|open|hidden, sent, closing }
M.reviews = {}

--- Review `id` and its position, or nil.
function M.find(id)
  for i, review in ipairs(M.reviews) do
    if review.id == id then
      return review, i
    end
  end
end

--- The open review, or nil.
function M.active()
  for _, review in ipairs(M.reviews) do
    if review.state == 'open' then
      return review
    end
  end
end

--- The first review waiting to be shown, or nil.
function M.next_queued()
  for _, review in ipairs(M.reviews) do
    if review.state == 'queued' then
      return review
    end
  end
end

function M.add(review)
  M.reviews[#M.reviews + 1] = review
end

function M.remove(review)
  local _, index = M.find(review.id)
  if index then
    table.remove(M.reviews, index)
  end
end

--- Requests other than `review` still waiting: reviews and permission prompts.
function M.others_waiting(review)
  local n = 0
  for _, other in ipairs(M.reviews) do
    if other ~= review then
      n = n + 1
    end
  end
  return n + #require('acp_nvim.permission').queue
end

--- { id, title, session, files, state } of every review, for :Ai permissions.
function M.list()
  local out = {}
  for _, review in ipairs(M.reviews) do
    out[#out + 1] = { id = review.id, title = review.spec.title, session = review.spec.session,
      files = #review.spec.files, state = review.state }
  end
  return out
end

return M
