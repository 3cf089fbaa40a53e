--- The questions waiting for the user in Lua's views, permission prompts and reviews alike, in
--- the order Python showed them (python/acp_nvim/core/questions.py decides that order: a request
--- is shown only once every earlier one of its session was). The one queue both views read: the
--- prompt's "1/3" and "more waiting", the review's "+n waiting" and :Ai permissions.
local M = {}

---@class acp_nvim.Pending
---@field kind 'prompt'|'review'
---@field id integer the question's id (one id space for every kind, core/questions.py)

---@type acp_nvim.Pending[] the registry: every pending question, oldest first
local items = {}

--- Add `item` (a prompt entry or a review) at the end as a question of `kind`.
---@param kind 'prompt'|'review'
---@param item table
function M.add(kind, item)
  item.kind = kind
  items[#items + 1] = item
end

--- Drop `item` (nothing when it is not pending).
function M.remove(item)
  for i, other in ipairs(items) do
    if other == item then
      table.remove(items, i)
      return
    end
  end
end

--- The question `id` of `kind` and its position among the questions of that kind, or nil.
function M.find(kind, id)
  local n = 0
  for _, item in ipairs(items) do
    if item.kind == kind then
      n = n + 1
      if item.id == id then
        return item, n
      end
    end
  end
end

--- The pending questions of `kind` (every kind when nil), oldest first (a new list).
---@param kind? 'prompt'|'review'
function M.list(kind)
  local out = {}
  for _, item in ipairs(items) do
    if kind == nil or item.kind == kind then
      out[#out + 1] = item
    end
  end
  return out
end

--- How many questions of `kind` (every kind when nil) are pending.
---@param kind? 'prompt'|'review'
function M.count(kind)
  return #M.list(kind)
end

--- The first pending question of `kind` for which `pred(item)` holds, or nil.
function M.first(kind, pred)
  for _, item in ipairs(items) do
    if item.kind == kind and (pred == nil or pred(item)) then
      return item
    end
  end
end

return M
