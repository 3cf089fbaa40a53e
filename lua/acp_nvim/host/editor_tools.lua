--- The editor's live state for the agent's MCP tools (see :help acp_nvim-mcp): diagnostics,
--- open buffers, the visual selection, LSP symbols/definition/references, and open_file.
---
--- Python asks through the Bridge and gets plain tables: absolute resolved paths, 1-based
--- lines, 1-based columns in characters. Confinement to the workspace is Python's job; this
--- module only reads state (open_file shows a file, without moving the user's cursor or focus).
--- An entry from a loaded buffer carries its `file_id` (acp_nvim.host.buffers.source: the file its text
--- came from), which Python compares with the file at its path now. A file that no buffer holds
--- is loaded only while it is still the regular file Python's opener found (`expect`).
--- LSP answers come later: `lsp()` returns true and the answer goes to `host.call.tool_done(id, answer)`.
local M = {}

local api = vim.api

local MAX_SELECTION = 64 * 1024 -- bytes of selected text sent
local ATTACH_WAIT = 1500 -- ms to wait for an LSP client to attach to a file loaded for a query
local MAX_HIDDEN_LOAD = 16 * 1024 * 1024 -- bytes: a larger file is not loaded just for a query (it would stall the UI)
local VISUAL = '^[vV\22]'

-- helpers ------------------------------------------------------------------------------

local function realpath(name)
  return vim.uv.fs_realpath(name) or vim.fn.fnamemodify(name, ':p')
end

local function is_file_buffer(buf)
  return api.nvim_buf_is_valid(buf)
    and api.nvim_buf_is_loaded(buf)
    and vim.bo[buf].buftype == ''
    and api.nvim_buf_get_name(buf) ~= ''
end

local function line_text(buf, lnum0)
  return api.nvim_buf_get_lines(buf, lnum0, lnum0 + 1, false)[1] or ''
end

--- A 0-based byte column as a 1-based character column of `text`.
local function char_col(text, byte)
  byte = math.max(0, math.min(byte or 0, #text))
  return vim.str_utfindex(text, 'utf-32', byte, false) + 1
end

local function find_buffer(path)
  return require('acp_nvim.host.buffers').find(path)
end

local function source_of(buf)
  return require('acp_nvim.host.buffers').source(buf)
end

--- Whether `path` is still what Python's opener found: the regular file `expect` ({ dev, ino }),
--- or still nothing ({ 0, 0 }). Checked right before Neovim opens it (a FIFO swapped in would
--- block Neovim's read).
local function still_expected(path, expect)
  local s = vim.uv.fs_lstat(path)
  if type(expect) ~= 'table' then
    return false
  elseif expect[1] == 0 and expect[2] == 0 then
    return s == nil
  end
  return s ~= nil and s.type == 'file' and s.dev == expect[1] and s.ino == expect[2]
end

local CHANGED = 'the file changed on disk after it was checked (not a regular file in the workspace any more)'

local function done(id, answer)
  require('acp_nvim.host').call.tool_done(id, answer)
end

-- diagnostics ----------------------------------------------------------------------------

--- A file buffer that holds diagnostics without being loaded (an LSP server reporting on files
--- not open: workspace diagnostics); its lines are not in memory, so its columns stay in bytes.
local function is_unloaded_file(buf)
  return api.nvim_buf_is_valid(buf)
    and not api.nvim_buf_is_loaded(buf)
    and vim.bo[buf].buftype == ''
    and api.nvim_buf_get_name(buf) ~= ''
end

local function unloaded_buffer(path)
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if is_unloaded_file(buf) and realpath(api.nvim_buf_get_name(buf)) == path then
      return buf
    end
  end
end

local function diagnostic_entry(path, buf, d)
  local loaded = api.nvim_buf_is_loaded(buf)
  local end_lnum = d.end_lnum or d.lnum
  local column, end_column = (d.col or 0) + 1, (d.end_col or d.col or 0) + 1
  if loaded then
    local text = line_text(buf, d.lnum)
    local end_text = end_lnum == d.lnum and text or line_text(buf, end_lnum)
    column, end_column = char_col(text, d.col), char_col(end_text, d.end_col or d.col)
  end
  return {
    path = path,
    line = d.lnum + 1,
    column = column,
    end_line = end_lnum + 1,
    end_column = end_column,
    severity = vim.diagnostic.severity[d.severity] or tostring(d.severity),
    message = d.message,
    source = d.source,
    code = d.code,
    file_id = loaded and source_of(buf) or nil,
  }
end

--- Diagnostics of `path`'s buffer (of every file buffer when nil), from any namespace; files
--- not open count when a source reported on them (`loaded` is false only for a file nobody did).
function M.diagnostics(path)
  local only
  if path ~= nil and path ~= vim.NIL then
    only = find_buffer(path) or unloaded_buffer(path)
    if not only then
      return { diagnostics = {}, loaded = false }
    end
  end
  local names, out = {}, {}
  for _, d in ipairs(vim.diagnostic.get(only)) do
    if names[d.bufnr] == nil then
      local file = is_file_buffer(d.bufnr) or is_unloaded_file(d.bufnr)
      names[d.bufnr] = file and realpath(api.nvim_buf_get_name(d.bufnr)) or false
    end
    if names[d.bufnr] then
      out[#out + 1] = diagnostic_entry(names[d.bufnr], d.bufnr, d)
    end
  end
  table.sort(out, function(a, b)
    if a.path ~= b.path then
      return a.path < b.path
    end
    return a.line < b.line or (a.line == b.line and a.column < b.column)
  end)
  return { diagnostics = out, loaded = true }
end

-- open buffers ---------------------------------------------------------------------------

--- Every listed file buffer: path, unsaved changes, cursor (of a window showing it, else the last known).
function M.open_buffers()
  local out = {}
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if is_file_buffer(buf) and vim.bo[buf].buflisted then
      local win = vim.fn.win_findbuf(buf)[1]
      local pos = win and api.nvim_win_get_cursor(win) or api.nvim_buf_get_mark(buf, '"')
      local lnum = math.max(pos[1], 1)
      out[#out + 1] = {
        path = realpath(api.nvim_buf_get_name(buf)),
        modified = vim.bo[buf].modified,
        line = lnum,
        column = char_col(line_text(buf, lnum - 1), pos[2]),
        visible = win ~= nil,
        lines = api.nvim_buf_line_count(buf),
        filetype = vim.bo[buf].filetype,
        file_id = source_of(buf),
      }
    end
  end
  return out
end

-- selection ------------------------------------------------------------------------------

local last_visual -- the file buffer where a visual selection last ended

--- Remember where visual selections end (their marks stay in that buffer). Idempotent.
function M.track()
  local group = api.nvim_create_augroup('acp_nvim.host.editor_tools', { clear = true })
  api.nvim_create_autocmd('ModeChanged', {
    group = group,
    pattern = '[vV\22]*:*',
    desc = 'acp.nvim: remember the last visual selection (for the agent)',
    callback = function()
      local buf = api.nvim_get_current_buf()
      if not vim.v.event.new_mode:match(VISUAL) and is_file_buffer(buf) then
        last_visual = buf
      end
    end,
  })
end

local MODES = { v = 'char', V = 'line', ['\22'] = 'block' }

local function region(buf, from, to, mode, current)
  if from[2] > to[2] or (from[2] == to[2] and from[3] > to[3]) then
    from, to = to, from
  end
  local lines = vim.fn.getregion({ buf, from[2], from[3], 0 }, { buf, to[2], to[3], 0 }, { type = mode })
  local text = table.concat(lines, '\n')
  local first, last = line_text(buf, from[2] - 1), line_text(buf, to[2] - 1)
  local answer = {
    path = realpath(api.nvim_buf_get_name(buf)),
    mode = MODES[mode] or 'char',
    start_line = from[2],
    start_column = mode == 'V' and 1 or char_col(first, from[3] - 1),
    end_line = to[2],
    -- the column of the last selected character (a whole line: its last one)
    end_column = math.max(1, mode == 'V' and char_col(last, #last) - 1 or char_col(last, to[3] - 1)),
    text = #text > MAX_SELECTION and text:sub(1, MAX_SELECTION) or text,
    current = current,
    file_id = source_of(buf),
  }
  if #text > MAX_SELECTION then
    answer.truncated = ('%d of %d bytes'):format(MAX_SELECTION, #text)
  end
  return answer
end

local function marks_of(buf)
  local from, to = api.nvim_buf_get_mark(buf, '<'), api.nvim_buf_get_mark(buf, '>')
  if from[1] == 0 or to[1] == 0 then
    return nil
  end
  return { 0, from[1], from[2] + 1 }, { 0, to[1], math.min(to[2], 2147483646) + 1 }
end

--- The visual selection being made now, else the last one (in the buffer where it ended).
function M.selection()
  local buf, mode = api.nvim_get_current_buf(), api.nvim_get_mode().mode
  if mode:match(VISUAL) and is_file_buffer(buf) then
    return region(buf, vim.fn.getpos('v'), vim.fn.getpos('.'), mode:sub(1, 1), true)
  end
  -- where the last selection ended (its mode is visualmode()), else the alternate or current buffer's marks
  local candidates = { last_visual or -1, vim.fn.bufnr('#'), buf }
  for i, candidate in ipairs(candidates) do
    if candidate > 0 and is_file_buffer(candidate) then
      local from, to = marks_of(candidate)
      if from then
        local kind = i == 1 and vim.fn.visualmode() or ''
        return region(candidate, from, to, MODES[kind] and kind or 'v', false)
      end
    end
  end
  return vim.NIL
end

-- LSP ------------------------------------------------------------------------------------

local METHODS = {
  symbols = 'textDocument/documentSymbol',
  definition = 'textDocument/definition',
  references = 'textDocument/references',
}

--- `find_buffer` remembered per path for one answer (hundreds of locations in a few files).
local function buffer_finder()
  local found = {}
  return function(path)
    if found[path] == nil then
      found[path] = find_buffer(path) or false
    end
    return found[path] or nil
  end
end

local function location_entry(item, find)
  local path = realpath(item.filename)
  local entry = { path = path, line = item.lnum, column = char_col(item.text or '', item.col - 1) }
  entry.text = item.text and vim.trim(item.text) or nil
  local buf = find(path)
  entry.file_id = buf and source_of(buf) or nil -- the text came from that buffer
  return entry
end

local function symbol_entry(item, find)
  local kind, name = (item.text or ''):match('^%[(.-)%]%s*(.*)$')
  local entry = location_entry({ filename = item.filename, lnum = item.lnum, col = item.col }, find)
  entry.kind, entry.name = kind or item.kind, name or item.text
  return entry
end

--- The items of every client's answer (locations or symbols).
local function collect(results, kind, buf)
  local items, errors, find = {}, {}, buffer_finder()
  for client_id, response in pairs(results) do
    local client = vim.lsp.get_client_by_id(client_id)
    local encoding = client and client.offset_encoding or 'utf-16'
    if response.err then
      errors[#errors + 1] = ('%s: %s'):format(client and client.name or client_id, response.err.message)
    elseif response.result then
      local result = response.result
      if kind == 'symbols' then
        for _, item in ipairs(vim.lsp.util.symbols_to_items(result, buf, encoding)) do
          items[#items + 1] = symbol_entry(item, find)
        end
      else
        if result.uri or result.targetUri then
          result = { result }
        end
        for _, item in ipairs(vim.lsp.util.locations_to_items(result, encoding)) do
          items[#items + 1] = location_entry(item, find)
        end
      end
    end
  end
  if #items == 0 and #errors > 0 then
    return { error = 'the LSP server answered with an error: ' .. table.concat(errors, '; ') }
  end
  return { items = items }
end

local function position(buf, client, q)
  local text = api.nvim_buf_get_lines(buf, q.line - 1, q.line, false)[1]
  if not text then
    return nil, ('line %d is past the end of the file (%d lines)'):format(q.line, api.nvim_buf_line_count(buf))
  end
  local byte
  if q.symbol and q.symbol ~= '' then
    local start = text:find(q.symbol, 1, true)
    if not start then
      return nil, ('%q is not on line %d: %s'):format(q.symbol, q.line, vim.trim(text))
    end
    byte = start - 1
  else
    local chars = vim.str_utfindex(text, 'utf-32', #text, false)
    byte = vim.str_byteindex(text, 'utf-32', math.min(q.column - 1, chars), false)
  end
  return { line = q.line - 1, character = vim.str_utfindex(text, client.offset_encoding, byte, false) }
end

--- The request's params per client (positions differ by the client's encoding), or why there are none.
local function params_for(buf, q, clients)
  if q.kind ~= 'symbols' then
    local _, problem = position(buf, clients[1], q)
    if problem then
      return nil, problem
    end
  end
  return function(client)
    local p = { textDocument = vim.lsp.util.make_text_document_params(buf) }
    if q.kind ~= 'symbols' then
      p.position = position(buf, client, q)
      p.context = q.kind == 'references' and { includeDeclaration = true } or nil
    end
    return p
  end
end

--- Load a file that no buffer holds, for a query (unlisted, no swap file); wiped again afterwards.
local function load_hidden(path, expect)
  local size = vim.fn.getfsize(path)
  if size > MAX_HIDDEN_LOAD then
    return nil, ('not open, and too large to load for a query (%d bytes, at most %d)'):format(size, MAX_HIDDEN_LOAD)
  end
  if not still_expected(path, expect) then
    return nil, CHANGED
  end
  local buf = vim.fn.bufadd(path)
  vim.bo[buf].swapfile = false
  vim.bo[buf].buflisted = false
  local ok, err = pcall(vim.fn.bufload, buf)
  if not ok then
    return nil, err
  end
  return buf
end

local function forget_hidden(buf)
  if api.nvim_buf_is_valid(buf) and not vim.bo[buf].buflisted and #vim.fn.win_findbuf(buf) == 0 then
    pcall(api.nvim_buf_delete, buf, {})
  end
end

--- Call `callback(clients)` with the clients attached to `buf` that support `method`; for a buffer
--- loaded just now, once a client attached or after ATTACH_WAIT.
local function with_clients(buf, method, loaded_here, callback)
  local clients = vim.lsp.get_clients({ bufnr = buf, method = method })
  if #clients > 0 or not loaded_here then
    return callback(clients)
  end
  local finished = false
  local function finish()
    if not finished then
      finished = true
      callback(vim.lsp.get_clients({ bufnr = buf, method = method }))
    end
  end
  api.nvim_create_autocmd('LspAttach', { buffer = buf, once = true, callback = vim.schedule_wrap(finish) })
  vim.defer_fn(finish, ATTACH_WAIT)
end

local function buffer_query(id, q)
  local method = METHODS[q.kind]
  local buf, loaded_here = find_buffer(q.path), false
  if not buf then
    local err
    buf, err = load_hidden(q.path, q.expect)
    if not buf then
      return { error = ('cannot load %s: %s'):format(q.path, err) }
    end
    loaded_here = true
  end
  with_clients(buf, method, loaded_here, function(clients)
    local params, problem
    if #clients == 0 then
      problem = ('no LSP client attached to %s (supporting %s)'):format(q.path, method)
    else
      params, problem = params_for(buf, q, clients)
    end
    if problem then
      if loaded_here then
        forget_hidden(buf)
      end
      return done(id, { error = problem })
    end
    vim.lsp.buf_request_all(buf, method, params, function(results)
      local answer = collect(results, q.kind, buf)
      if loaded_here then
        forget_hidden(buf)
      end
      done(id, answer)
    end)
  end)
  return true
end

local function workspace_symbols(id, query)
  local clients = vim.lsp.get_clients({ method = 'workspace/symbol' })
  if #clients == 0 then
    return { error = 'no LSP client that supports workspace symbols is running' }
  end
  local results, waiting = {}, #clients
  for _, client in ipairs(clients) do
    client:request('workspace/symbol', { query = query }, function(err, result)
      results[client.id] = { err = err, result = result }
      waiting = waiting - 1
      if waiting == 0 then
        done(id, collect(results, 'symbols', 0))
      end
    end)
  end
  return true
end

--- Start an LSP query; returns an answer now ({ error = ... }) or true: it comes to `host.call.tool_done(id, ...)`.
function M.lsp(id, q)
  if q.kind == 'symbols' and (q.path == nil or q.path == vim.NIL) then
    return workspace_symbols(id, q.query or '')
  end
  if not METHODS[q.kind] then
    return { error = 'unknown LSP query ' .. tostring(q.kind) }
  end
  return buffer_query(id, q)
end

-- open_file ------------------------------------------------------------------------------

local function is_file_window(win)
  local buf = api.nvim_win_get_buf(win)
  return api.nvim_win_get_config(win).relative == ''
    and vim.bo[buf].buftype == ''
    and not api.nvim_buf_get_name(buf):match('^acp://')
end

--- A window to show the file in: never the current one (the user keeps typing where they are).
local function target_window()
  local current = api.nvim_get_current_win()
  local previous = vim.fn.win_getid(vim.fn.winnr('#'))
  if previous ~= 0 and previous ~= current and is_file_window(previous) then
    return previous
  end
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    if win ~= current and is_file_window(win) then
      return win
    end
  end
  return api.nvim_open_win(0, false, { split = 'above', win = current })
end

--- Show `path` at `line` in another window; the current window, mode and cursor stay as they are.
--- A file no buffer holds is loaded only while it is the regular file `expect` ({ dev, ino }).
function M.open_file(path, line, expect)
  local buf = find_buffer(path)
  if not buf then
    if not still_expected(path, expect) then
      return { error = ('cannot show %s: %s'):format(path, CHANGED) }
    end
    buf = vim.fn.bufadd(path)
  end
  vim.bo[buf].buflisted = true
  local current, win = api.nvim_get_current_win(), nil
  for _, candidate in ipairs(vim.fn.win_findbuf(buf)) do
    if candidate ~= current and api.nvim_win_get_tabpage(candidate) == api.nvim_get_current_tabpage() then
      win = candidate
      break
    end
  end
  if not win then
    win = target_window()
    local ok, err = pcall(api.nvim_win_set_buf, win, buf)
    if not ok then
      return { error = ('cannot show %s: %s'):format(path, err) }
    end
  end
  local lnum = math.max(1, math.min(line, api.nvim_buf_line_count(buf)))
  api.nvim_win_set_cursor(win, { lnum, 0 })
  api.nvim_win_call(win, function()
    vim.cmd('normal! zz')
  end)
  return { shown = path, line = lnum }
end

-- :Ai paste ------------------------------------------------------------------------------

--- Add `text` at the end of the prompt of session `key`'s chat (opened by the caller).
function M.add_to_prompt(key, text)
  local chat = require('acp_nvim.chat').chats[key]
  if not chat or not api.nvim_buf_is_valid(chat.prompt_buf) then
    return false
  end
  require('acp_nvim.prompt').append(chat, text)
  return true
end

return M
