--- Scratch buffers described by data.
---
--- A spec says what the buffer is; the buffer is named before it is filled:
--- >lua
---   { name = 'acp://…',        -- its identity (see "Leftovers" below); nil: unnamed (floats)
---     kind = 'review',          -- which view made it (kept in b:acp_nvim_scratch)
---     buftype = 'nofile',       -- 'nofile' | 'acwrite' | 'nowrite'
---     bufhidden = 'wipe', swapfile = false,
---     filetype = 'diff',        -- or filetype_from = '/path/of/the/file' (vim.filetype.match)
---     modifiable = true,
---     undolevels = nil,         -- -1: no undo at all (streamed views)
---     lines = { … },            -- the text; its filling is never an undo step
---     reuse = false }           -- see below
--- <
--- Leftovers: one policy, here. When a buffer called `name` already exists:
---   - not one of ours (no b:acp_nvim_scratch: a file you edit, another plugin's buffer):
---     nothing is touched and create() fails with a clear error;
---   - ours, still loaded, and the spec says `reuse` (a view refreshed in place): it is
---     reused; its options and text are set again from the spec, the maps and autocmds its
---     view put on it stay (create() returns false as its second value);
---   - ours otherwise (left by a view that ended with an error, unloaded, or a view that
---     always starts fresh): it is wiped, and a new buffer takes the name.
--- A buffer that cannot be set up is wiped before the error goes on: nothing half-made stays.
local M = {}

local api = vim.api

--- The buffer variable that marks our scratch buffers; its value is the spec's kind.
M.MARK = 'acp_nvim_scratch'

--- The name Neovim stores for `name` (a URL as it is, a path made absolute).
local function full_name(name)
  if name:match('^%a[%w+.-]*://') then
    return name
  end
  return vim.fn.fnamemodify(name, ':p')
end

--- The buffer called exactly `name` (no pattern matching, unlike bufnr()), or nil.
function M.find(name)
  local full = full_name(name)
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_get_name(buf) == full then
      return buf
    end
  end
end

--- Whether `buf` is a scratch buffer made here (of `kind`, when given).
function M.is_ours(buf, kind)
  if not api.nvim_buf_is_valid(buf) then
    return false
  end
  local mark = vim.b[buf][M.MARK]
  return mark ~= nil and (kind == nil or mark == kind)
end

--- Replace the text of `buf` (modifiable or not) without an undo step; it is left unmodified.
function M.fill(buf, lines)
  local bo = vim.bo[buf]
  local modifiable, levels = bo.modifiable, bo.undolevels
  bo.modifiable, bo.undolevels = true, -1
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  bo.modifiable, bo.undolevels = modifiable, levels
  bo.modified = false
end

local function filetype_of(buf, spec)
  if spec.filetype_from then
    return vim.filetype.match({ filename = spec.filetype_from, buf = buf }) or ''
  end
  return spec.filetype
end

--- Options and text from the spec, in this order: options, text, filetype, modifiable.
local function configure(buf, spec)
  local bo = vim.bo[buf]
  bo.buftype = spec.buftype or 'nofile'
  bo.bufhidden = spec.bufhidden or 'wipe'
  bo.swapfile = spec.swapfile or false
  if spec.lines then
    M.fill(buf, spec.lines)
  end
  if spec.undolevels then
    bo.undolevels = spec.undolevels
  end
  local filetype = filetype_of(buf, spec)
  if filetype and bo.filetype ~= filetype then
    bo.filetype = filetype
  end
  bo.modifiable = spec.modifiable ~= false
end

local function setup(buf, spec)
  if spec.name then
    api.nvim_buf_set_name(buf, spec.name)
  end
  vim.b[buf][M.MARK] = spec.kind or true
  configure(buf, spec)
end

--- The leftover policy (see the top of this file): the buffer to reuse, or nil once it is gone.
local function settle_leftover(buf, spec)
  if not M.is_ours(buf) then
    error(('acp.nvim: a buffer named %s already exists and is not a view of acp.nvim'):format(spec.name), 0)
  end
  if spec.reuse and api.nvim_buf_is_loaded(buf) then
    return buf
  end
  api.nvim_buf_delete(buf, { force = true })
end

--- Make (or, per the leftover policy, reuse) the scratch buffer `spec` describes.
---@return integer buf
---@return boolean created false when an existing buffer was reused
function M.create(spec)
  local existing = spec.name and M.find(spec.name)
  local reused = existing and settle_leftover(existing, spec)
  if reused then
    configure(reused, spec)
    return reused, false
  end
  local buf = api.nvim_create_buf(false, true)
  local ok, err = pcall(setup, buf, spec)
  if not ok then
    pcall(api.nvim_buf_delete, buf, { force = true })
    error(err, 0)
  end
  return buf, true
end

--- Wipe `buf` if it is still a scratch buffer of ours (a no-op otherwise).
function M.wipe(buf)
  if buf and M.is_ours(buf) then
    pcall(api.nvim_buf_delete, buf, { force = true })
  end
end

return M
