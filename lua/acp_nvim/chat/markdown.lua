--- Markdown highlighting of chat buffers, one block at a time.
---
--- The buffer gets no treesitter highlighter: tree-sitter-markdown reparses its whole input
--- on every change, which costs O(chat) per streamed batch, and a parse suspended across
--- several regions of one parser can crash Neovim 0.11. Instead each markdown block (agent
--- and user messages) is parsed on its own, by a string parser, asynchronously, and its
--- captures become extmarks. A streaming block is re-highlighted at most every DELAY ms
--- while it is small; a finished block once more, unless it is huge.
---
--- The frame budget (acp_nvim.kit.frame): loading the parsers and compiling their queries
--- (about 20 ms the first time, and it cannot be cut) waits for a pause in typing; until then
--- blocks stay plain. One block is parsed at a time (every chat together), each parse in its
--- own turn of the loop, and only the part of a block in sight of a window (or close to it) is,
--- at most PARSE_MAX bytes from a paragraph's start: a long chat, or a long answer, highlights
--- what the user looks at, as they scroll (tree-sitter's parse steps overrun their time budget on
--- long inputs, so an input is kept short). A block with a paragraph longer than
--- PARAGRAPH_MAX bytes is parsed without its inline grammar (tree-sitter's markdown_inline can
--- take tens of ms on one long paragraph, and its steps overrun their time budget). A block's
--- captures become extmarks a slice at a time.
local M = {}

local api = vim.api
local frame = require('acp_nvim.kit.frame')
local ns = api.nvim_create_namespace('acp_nvim.chat.md')

M.MD_KINDS = { agent = true, user = true }
M.DELAY = 150 -- ms between highlight passes over a streaming block
M.STREAM_MAX = 32 * 1024 -- bytes: a larger streaming block waits until it is finished
M.SETTLED_MAX = 256 * 1024 -- bytes: a larger finished block stays plain text
M.PARAGRAPH_MAX = 2048 -- bytes: a block with a longer paragraph gets no inline highlights
M.PARSE_MAX = 6 * 1024 -- bytes of a block parsed in one pass: its part in sight of the windows
M.SIGHT = 2 -- windows' heights above and below what they show within which blocks are highlighted
local SKIP = { spell = true, nospell = true, conceal = true }

--- 'unloaded', 'loading', 'ready' or 'missing' (no markdown parser: chats stay plain).
M.state = 'unloaded'
local waiting = setmetatable({}, { __mode = 'k' }) -- chats with blocks to highlight once loaded

local schedule

--- Load the parsers and queries, one piece per pause in typing; then highlight what waited.
function M.load()
  if M.state ~= 'unloaded' then
    return
  end
  M.state = 'loading'
  local steps = {
    function()
      pcall(vim.treesitter.language.register, 'markdown', 'acp_chat') -- other plugins find the parser
      if not pcall(vim.treesitter.language.add, 'markdown') then
        M.state = 'missing'
      end
    end,
    function()
      pcall(vim.treesitter.language.add, 'markdown_inline')
    end,
    function()
      pcall(vim.treesitter.query.get, 'markdown', 'injections')
    end,
    function()
      pcall(vim.treesitter.query.get, 'markdown', 'highlights')
    end,
    function()
      pcall(vim.treesitter.query.get, 'markdown_inline', 'highlights')
    end,
  }
  local function next_step(i)
    frame.when_idle(function()
      if M.state == 'missing' then
        return
      end
      steps[i]()
      if M.state == 'missing' then
        return
      elseif i < #steps then
        next_step(i + 1)
        return
      end
      M.state = 'ready'
      for chat in pairs(waiting) do
        waiting[chat] = nil
        schedule(chat)
      end
    end)
  end
  next_step(1)
end

--- Set up highlighting state for a new chat (the parsers load later, when the user pauses).
function M.attach(chat)
  if M.state ~= 'missing' then
    chat.md = { dirty = {}, running = {}, version = {}, covered = {}, stream = nil, timer = false }
    M.load()
  end
end

--- Load the parsers and queries now (tests; a chat highlights as soon as they are there).
function M.prewarm()
  M.load()
end

local function content_rows(chat, id)
  local start, stop = chat:block_range(id)
  return chat.kinds[id] == 'user' and start + 1 or start, stop - 1
end

local function limit(md, id)
  return md.stream == id and M.STREAM_MAX or M.SETTLED_MAX
end

local function capture_opts(query, capture, lang, metadata, row, node)
  local sr, sc, er, ec = node:range()
  local meta = metadata[capture] or {}
  return row + sr, sc, {
    end_row = row + er,
    end_col = ec,
    hl_group = '@' .. query.captures[capture] .. '.' .. lang,
    priority = tonumber(meta.priority or metadata.priority) or 100,
    conceal = meta.conceal or metadata.conceal,
    strict = false,
  }
end

--- The captures of every tree of `parser` as extmarks on block `id`, a slice at a time; `done()`
--- after the last (also when the block or the buffer went away meanwhile).
local function apply(chat, id, parser, text, offset, count, done)
  local trees = {}
  parser:for_each_tree(function(tree, ltree)
    local lang = ltree:lang()
    local query = vim.treesitter.query.get(lang, 'highlights')
    if query then
      trees[#trees + 1] = { tree = tree, lang = lang, query = query }
    end
  end)
  local cleared, index, captures = false, 1, nil
  frame.slices(function(deadline)
    if not chat.index[id] or not api.nvim_buf_is_valid(chat.buf) then
      return false
    end
    local row = content_rows(chat, id) + offset -- again each slice: older blocks may have been drawn above
    if not cleared then
      api.nvim_buf_clear_namespace(chat.buf, ns, row, row + count)
      cleared = true
    end
    local n = 0
    while index <= #trees do
      local item = trees[index]
      local query = item.query
      captures = captures or query:iter_captures(item.tree:root(), text)
      for capture, node, metadata in captures do
        local name = query.captures[capture]
        if not SKIP[name] and not vim.startswith(name, '_') then
          local r, c, opts = capture_opts(query, capture, item.lang, metadata, row, node)
          pcall(api.nvim_buf_set_extmark, chat.buf, ns, r, c, opts)
        end
        n = n + 1
        if n % 64 == 0 and frame.over(deadline) then
          return true
        end
      end
      captures, index = nil, index + 1
      if index <= #trees and frame.over(deadline) then
        return true
      end
    end
    return false
  end, done)
end

-- One pass at a time, every chat together: a parse runs as its own chain of scheduled steps,
-- and several chains would all run their step in the same turn of Neovim's loop.
local busy = false
local ready_chats = {} ---@type table[] chats whose dirty blocks wait for a pass, in order

local next_pass

--- The longest paragraph of `lines` in bytes (a run of lines without a blank one).
local function longest_paragraph(lines)
  local longest, run = 0, 0
  for _, line in ipairs(lines) do
    if line:find('%S') then
      run = run + #line + 1
      longest = math.max(longest, run)
    else
      run = 0
    end
  end
  return longest
end

--- The dirty blocks of the chat in sight of one of its windows (or within M.SIGHT heights of it),
--- found from the rows the windows show, not by looking at every dirty block (a long chat has
--- thousands waiting).
local function in_sight(chat)
  local found = {}
  for _, win in ipairs(vim.fn.win_findbuf(chat.buf)) do
    local margin = M.SIGHT * api.nvim_win_get_height(win)
    local top, bottom = vim.fn.line('w0', win) - 1 - margin, vim.fn.line('w$', win) + margin
    for _, id in ipairs(chat:blocks_between(top, bottom)) do
      if chat.md.dirty[id] then
        found[#found + 1] = id
      end
    end
  end
  return found
end

--- Rows [lo, hi) of the chat's windows with M.SIGHT heights of margin around what they show.
local function sight(chat)
  local lo, hi = math.huge, -1
  for _, win in ipairs(vim.fn.win_findbuf(chat.buf)) do
    local margin = M.SIGHT * api.nvim_win_get_height(win)
    lo = math.min(lo, vim.fn.line('w0', win) - 1 - margin)
    hi = math.max(hi, vim.fn.line('w$', win) + margin)
  end
  return lo, hi
end

--- The lines of block `id` to parse, and their offset in the block: its part in sight, begun at a
--- paragraph's start (a blank line within 200 rows above), at most M.PARSE_MAX bytes.
local function part_in_sight(chat, id)
  local first, stop = content_rows(chat, id)
  local lo, hi = sight(chat)
  lo, hi = math.max(first, lo), math.min(stop, hi)
  if lo >= hi then
    lo, hi = first, math.min(stop, first + 1)
  end
  if lo > first then
    local from = math.max(first, lo - 200)
    local above = api.nvim_buf_get_lines(chat.buf, from, lo, false)
    local start = from == first and first or lo
    for i = #above, 1, -1 do
      if not above[i]:find('%S') then
        start = from + i - 1
        break
      end
    end
    lo = start
  end
  local lines, size = {}, 0
  for _, line in ipairs(api.nvim_buf_get_lines(chat.buf, lo, hi, false)) do
    size = size + #line + 1
    if size > M.PARSE_MAX and #lines > 0 then
      break
    end
    lines[#lines + 1] = line
  end
  return lines, lo - first
end

local function pass(chat, id)
  local md = chat.md
  local lines, offset = part_in_sight(chat, id)
  local text, version = table.concat(lines, '\n'), md.version[id]
  local parser = vim.treesitter.get_string_parser(text, 'markdown')
  local inline = longest_paragraph(lines) <= M.PARAGRAPH_MAX
  busy, md.running[id] = true, true
  md.covered[id] = { offset, offset + #lines }
  local function finished()
    busy, md.running[id] = false, nil
    if md.version[id] ~= version and chat.index[id] then
      md.dirty[id] = true
      schedule(chat)
    end
    vim.defer_fn(next_pass, 0) -- the next parse begins in a turn of its own
  end
  parser:parse(inline, function(err)
    if err or not chat.index[id] or not api.nvim_buf_is_valid(chat.buf) then
      return finished()
    end
    apply(chat, id, parser, text, offset, #lines, finished)
  end)
end

--- The next dirty block of the chats that wait, if no pass runs.
next_pass = function()
  if busy or M.state ~= 'ready' then
    return
  end
  while #ready_chats > 0 do
    local chat = ready_chats[1]
    local md = chat.md
    if api.nvim_buf_is_valid(chat.buf) then
      for _, id in ipairs(in_sight(chat)) do
        if not md.running[id] then
          md.dirty[id] = nil
          if chat.index[id] and chat.sizes[id] <= limit(md, id) then
            return pass(chat, id)
          end
        end
      end
    end
    table.remove(ready_chats, 1) -- what is left waits until the user scrolls to it (M.scrolled)
    md.queued = false
  end
end

local function run(chat)
  local md = chat.md
  md.timer = false
  if not api.nvim_buf_is_valid(chat.buf) then
    return
  end
  if M.state ~= 'ready' then
    waiting[chat] = M.state ~= 'missing' or nil
    return
  end
  if not md.queued then
    md.queued = true
    ready_chats[#ready_chats + 1] = chat
  end
  next_pass()
end

schedule = function(chat)
  local md = chat.md
  if md and not md.timer and next(md.dirty) then
    md.timer = true
    vim.defer_fn(function()
      run(chat)
    end, M.DELAY)
  end
end

--- A block was added: the one streamed before it is finished (one last pass).
function M.on_new(chat, id, kind)
  local md = chat.md
  if not md then
    return
  end
  if md.stream then
    md.dirty[md.stream] = true
    md.stream = nil
  end
  if M.MD_KINDS[kind] then
    md.stream, md.version[id], md.dirty[id] = id, 0, true
  end
end

--- An older block was drawn (a long chat, as the user scrolls up): highlighted once, as finished.
function M.on_old(chat, id, kind)
  local md = chat.md
  if md and M.MD_KINDS[kind] then
    md.version[id], md.dirty[id] = 0, true
  end
end

--- Text was appended to block `id`.
function M.on_append(chat, id)
  local md = chat.md
  if md and md.version[id] then
    md.version[id] = md.version[id] + 1
    md.dirty[id] = true
  end
end

--- After a batch of operations: start the highlight timer if something changed.
function M.sync(chat)
  schedule(chat)
end

--- A window of the chat scrolled: the blocks that came into sight, and the parts of long ones,
--- get their highlights.
function M.scrolled(chat)
  local md = chat.md
  if not md then
    return
  end
  local lo, hi = sight(chat)
  for _, id in ipairs(chat:blocks_between(lo, hi)) do
    local covered = md.covered[id]
    if covered and md.version[id] and not md.running[id] then
      local first, stop = content_rows(chat, id)
      if math.max(first, lo) < first + covered[1] or math.min(stop, hi) > first + covered[2] then
        md.dirty[id] = true
      end
    end
  end
  if next(md.dirty) then
    schedule(chat)
  end
end

return M
