--- Markdown highlighting of chat buffers, one block at a time.
---
--- The buffer gets no treesitter highlighter: tree-sitter-markdown reparses its whole input
--- on every change, which costs O(chat) per streamed batch, and a parse suspended across
--- several regions of one parser can crash Neovim 0.11. Instead each markdown block (agent
--- and user messages) is parsed on its own, by a string parser, asynchronously, and its
--- captures become extmarks. A streaming block is re-highlighted at most every DELAY ms
--- while it is small; a finished block once more, unless it is huge.
local M = {}

local api = vim.api
local ns = api.nvim_create_namespace('acp_nvim.chat.md')

M.MD_KINDS = { agent = true, user = true }
M.DELAY = 150 -- ms between highlight passes over a streaming block
M.STREAM_MAX = 32 * 1024 -- bytes: a larger streaming block waits until it is finished
M.SETTLED_MAX = 256 * 1024 -- bytes: a larger finished block stays plain text
M.PASSES = 8 -- blocks started per tick (a reopened chat highlights its history a few at a time)
local SKIP = { spell = true, nospell = true, conceal = true }

--- Set up highlighting state for a new chat (nothing when the markdown parser is missing).
function M.attach(chat)
  pcall(vim.treesitter.language.register, 'markdown', 'acp_chat') -- other plugins find the parser
  if pcall(vim.treesitter.language.add, 'markdown') then
    chat.md = { dirty = {}, running = {}, version = {}, stream = nil, timer = false }
    M.prewarm()
  end
end

local warm = false

--- Load the highlight queries now, one per tick (about 40 ms the first time), rather than in
--- the middle of the first streamed answer.
function M.prewarm()
  if warm then
    return
  end
  warm = true
  vim.schedule(function()
    pcall(vim.treesitter.query.get, 'markdown', 'highlights')
    vim.schedule(function()
      pcall(vim.treesitter.query.get, 'markdown_inline', 'highlights')
    end)
  end)
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

local function apply(chat, id, parser, text, count)
  local row = content_rows(chat, id)
  api.nvim_buf_clear_namespace(chat.buf, ns, row, row + count)
  parser:for_each_tree(function(tree, ltree)
    local lang = ltree:lang()
    local query = vim.treesitter.query.get(lang, 'highlights')
    if not query then
      return
    end
    for capture, node, metadata in query:iter_captures(tree:root(), text) do
      if not SKIP[query.captures[capture]] and not vim.startswith(query.captures[capture], '_') then
        local r, c, opts = capture_opts(query, capture, lang, metadata, row, node)
        pcall(api.nvim_buf_set_extmark, chat.buf, ns, r, c, opts)
      end
    end
  end)
end

local schedule

local function pass(chat, id)
  local md = chat.md
  local first, stop = content_rows(chat, id)
  local lines = api.nvim_buf_get_lines(chat.buf, first, stop, false)
  local text, version = table.concat(lines, '\n'), md.version[id]
  local parser = vim.treesitter.get_string_parser(text, 'markdown')
  md.running[id] = true
  parser:parse(true, function(err)
    md.running[id] = nil
    if err or not chat.index[id] or not api.nvim_buf_is_valid(chat.buf) then
      return
    end
    apply(chat, id, parser, text, #lines)
    if md.version[id] ~= version then
      md.dirty[id] = true
      schedule(chat)
    end
  end)
end

local function run(chat)
  local md = chat.md
  md.timer = false
  if not api.nvim_buf_is_valid(chat.buf) then
    return
  end
  local started = 0
  for id in pairs(md.dirty) do
    if started >= M.PASSES then
      break
    end
    if not md.running[id] then
      md.dirty[id] = nil
      if chat.index[id] and chat.sizes[id] <= limit(md, id) then
        started = started + 1
        pass(chat, id)
      end
    end
  end
  if next(md.dirty) then
    schedule(chat)
  end
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

return M
