--- File access through buffers: the text the user sees, unsaved edits included.
---
--- A buffer's text is the file as the buffer holds it: lines joined by the 'fileformat'
--- newline, a final newline when 'eol' is set (a file read without one has 'noeol', even
--- though 'fixeol' would add it on the next `:write`), a BOM with 'bomb'.
--- Writes are minimal edits (only the changed hunks), one undo step, so cursor, marks and
--- extmarks on unchanged lines stay where they are. Neovim never writes the file for the agent
--- (no `:write!`): Python writes it through its opener (atomically, confined to the workspace)
--- and then marks the buffer saved (`finish`).
---
--- Each file buffer has a known disk state: the stamp { inode, size, mtime s, mtime ns } of the
--- file as the buffer last read, wrote or was synced with it (false: there was no file). A
--- write whose file has another stamp now would overwrite a change the buffer never saw
--- (`git pull`, another editor): `apply` refuses it ('disk_changed').
---
--- Each file buffer also has a source: { dev, ino } of the file its text was last read from or
--- written to, NEW_FILE ({ 0, 0 }: Neovim found no file, the text is the user's own) or false
--- (unknown: renamed with `:file`, or the file could not be stat'ed). Python serves a buffer to
--- the agent as the file at its name only while that file is its source.
local M = {}

local api = vim.api

local NEWLINE = { unix = '\n', dos = '\r\n', mac = '\r' }
local BOM = '\239\187\191'

local function realpath(name)
  return vim.uv.fs_realpath(name) or vim.fn.fnamemodify(name, ':p')
end

local function is_file_buffer(buf)
  return api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == '' and api.nvim_buf_get_name(buf) ~= ''
end

--- The stamp of the file `name` now (false: no file).
local function stamp_of(name)
  local s = vim.uv.fs_stat(name)
  return s and { s.ino, s.size, s.mtime.sec, s.mtime.nsec } or false
end

--- The stamp and the source ({ dev, ino }) of the file `name` now, from one stat (false, false: no file).
local function stat_of(name)
  local s = vim.uv.fs_stat(name)
  if not s then
    return false, false
  end
  return { s.ino, s.size, s.mtime.sec, s.mtime.nsec }, { s.dev, s.ino }
end

local NEW_FILE = { 0, 0 }

---@type table<integer, table|false> the disk state each buffer knows, by buffer number
local known = {}

---@type table<integer, table|false> the file each buffer's text came from, by buffer number
local source = {}

--- Tracker ids of buffers wiped or unloaded since Python last asked (their copies are dropped).
local forgotten = {}

--- The source an event leaves the buffer with, given the file at its name now (`id`).
local function source_after(args, name, id)
  if args.event == 'BufNewFile' then
    return not id and NEW_FILE or false -- a file there now was not what Neovim found
  elseif args.event == 'BufFilePost' then
    return false -- the text is another file's
  elseif args.event == 'FileChangedShellPost' then
    -- Neovim saw the file change and kept the buffer's text (a reload sets the source on BufReadPost
    -- first): the text is still the file it was read from, not whatever is at the name now
    return source[args.buf] or false
  elseif args.event == 'BufWritePost' and vim.fn.fnamemodify(args.file, ':p') ~= vim.fn.fnamemodify(name, ':p') then
    return source[args.buf] or false -- a copy written elsewhere: the buffer's own file is as it was
  end
  return id
end

local function remember_disk(args)
  if is_file_buffer(args.buf) then
    local name = api.nvim_buf_get_name(args.buf)
    local stamp, id = stat_of(name)
    known[args.buf] = stamp
    source[args.buf] = source_after(args, name, id)
  end
end

local group = api.nvim_create_augroup('acp_nvim.host.buffers', { clear = true })
api.nvim_create_autocmd({ 'BufReadPost', 'BufWritePost', 'FileChangedShellPost', 'BufNewFile', 'BufFilePost' },
  { group = group, callback = remember_disk, desc = 'acp.nvim: the disk state the buffer knows' })
api.nvim_create_autocmd({ 'BufUnload', 'BufWipeout' }, {
  group = group,
  callback = function(args)
    known[args.buf] = nil
    source[args.buf] = nil
  end,
  desc = 'acp.nvim: forget the buffer\'s disk state',
})
--- A buffer the autocommands never saw. Loaded before this module (no agent ran yet): its file
--- as it is now is what it knows, a missing one a new file. Loaded later with autocommands off
--- (a plugin's preview): its file now is what it knows, its source is unknown.
local function adopt(buf, early)
  local stamp, id = stat_of(api.nvim_buf_get_name(buf))
  known[buf] = stamp
  source[buf] = early and (id or NEW_FILE) or false
end

for _, buf in ipairs(api.nvim_list_bufs()) do
  if is_file_buffer(buf) then
    adopt(buf, true)
  end
end

--- The disk state `buf` knows (recorded now if it was never seen).
function M.known(buf)
  if known[buf] == nil then
    adopt(buf, false)
  end
  return known[buf]
end

--- The file `buf`'s text came from: { dev, ino }, NEW_FILE ({ 0, 0 }) or vim.NIL (unknown).
function M.source(buf)
  M.known(buf)
  return source[buf] or vim.NIL
end

local function same_stamp(a, b)
  if not a or a == vim.NIL or not b or b == vim.NIL then
    return (not a or a == vim.NIL) and (not b or b == vim.NIL)
  end
  return a[1] == b[1] and a[2] == b[2] and a[3] == b[3] and a[4] == b[4]
end

local function nil_if_false(value)
  return value or vim.NIL
end

--- The loaded, ordinary buffer that holds `path` (a resolved absolute path), if any.
function M.find(path)
  local bufs = api.nvim_list_bufs()
  for _, buf in ipairs(bufs) do
    if is_file_buffer(buf) and api.nvim_buf_get_name(buf) == path then
      return buf
    end
  end
  for _, buf in ipairs(bufs) do
    if is_file_buffer(buf) and realpath(api.nvim_buf_get_name(buf)) == path then
      return buf
    end
  end
end

--- A buffer with no lines at all (an empty file), unlike one holding a single empty line.
local function is_empty(buf)
  if api.nvim_buf_line_count(buf) > 1 or #(api.nvim_buf_get_lines(buf, 0, 1, false)[1]) > 0 then
    return false
  end
  return api.nvim_buf_call(buf, function()
    return vim.fn.wordcount().bytes == 0
  end)
end


local function has_bom(buf)
  local fenc = vim.bo[buf].fileencoding
  return vim.bo[buf].bomb and (fenc == '' or fenc:match('^utf%-?8$') ~= nil)
end

--- The buffer's text (unsaved edits included) in the file's own line endings.
function M.buffer_text(buf)
  local prefix = has_bom(buf) and BOM or ''
  if is_empty(buf) then
    return prefix
  end
  local nl = NEWLINE[vim.bo[buf].fileformat] or '\n'
  local text = table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), nl)
  return prefix .. text .. (vim.bo[buf].eol and nl or '')
end

--- The buffer's current text for `path` (nil when no buffer holds it).
function M.text(path)
  local buf = M.find(path)
  return buf and M.buffer_text(buf) or nil
end

--- { path, text, tick, modified } of the buffer holding `path`, or nil.
function M.read(path)
  local buf = M.find(path)
  if not buf then
    return nil
  end
  return {
    path = path,
    text = M.buffer_text(buf),
    tick = api.nvim_buf_get_changedtick(buf),
    modified = vim.bo[buf].modified,
    disk = nil_if_false(M.known(buf)),
    source = M.source(buf),
  }
end

-- Per-buffer change trackers for read_delta: `first` leading and `tail` trailing lines are
-- unchanged since the last delta was taken (version `version` of tracker `id`).
local trackers = {}
local next_tracker = 0

local function track(buf)
  local t = trackers[buf]
  if t then
    return t
  end
  next_tracker = next_tracker + 1
  t = { id = next_tracker, version = 0, first = 0, tail = 0 }
  trackers[buf] = t
  api.nvim_buf_attach(buf, false, {
    on_lines = function(_, b, _, first, _, new_last)
      if trackers[b] ~= t then
        return true -- replaced or forgotten: detach
      end
      t.first = math.min(t.first, first)
      t.tail = math.min(t.tail, api.nvim_buf_line_count(b) - new_last)
    end,
    on_reload = function()
      t.first, t.tail = 0, 0
    end,
    on_detach = function(_, b)
      if trackers[b] == t then
        trackers[b] = nil
      end
      if #forgotten < 10000 then -- Python asks at every turn; past this its LRU bound does the job
        forgotten[#forgotten + 1] = t.id
      end
    end,
  })
  return t
end

--- The buffer of `path` as lines changed since the caller's copy (tracker `id`, `version`):
--- { tracker, version, first, tail, lines, count, newline, eol, bom, empty, tick, modified, disk, source },
--- where `lines` replace all but the `first` and `tail` lines of the caller's copy. A caller
--- with another tracker or version gets every line (first = tail = 0). nil: not loaded.
function M.read_delta(path, id, version)
  local buf = M.find(path)
  if not buf then
    return nil
  end
  local t = track(buf)
  local count = api.nvim_buf_line_count(buf)
  local first, tail = t.first, t.tail
  if t.id ~= id or t.version ~= version then
    first, tail = 0, 0
  end
  tail = math.max(0, math.min(tail, count - first))
  t.version, t.first, t.tail = t.version + 1, count, count
  return {
    tracker = t.id,
    version = t.version,
    first = first,
    tail = tail,
    lines = api.nvim_buf_get_lines(buf, first, count - tail, false),
    count = count,
    newline = NEWLINE[vim.bo[buf].fileformat] or '\n',
    eol = vim.bo[buf].eol,
    bom = has_bom(buf),
    empty = is_empty(buf),
    tick = api.nvim_buf_get_changedtick(buf),
    modified = vim.bo[buf].modified,
    disk = nil_if_false(M.known(buf)),
    source = M.source(buf),
  }
end

--- Tracker ids of the buffers wiped or unloaded since the last call (their copies can go).
function M.take_forgotten()
  local ids = forgotten
  forgotten = {}
  return ids
end

--- Split file content into lines plus the options that reproduce it on write.
---@return string[] lines, table opts { fileformat, eol, bomb }
function M.parse(content)
  local bom = content:sub(1, 3) == BOM
  if bom then
    content = content:sub(4)
  end
  local crlf = content:find('\r\n', 1, true) ~= nil and not content:find('[^\r]\n') and content:sub(1, 1) ~= '\n'
  local body = crlf and content:gsub('\r\n', '\n') or content
  local eol = body:sub(-1) == '\n'
  if eol then
    body = body:sub(1, -2)
  end
  local lines = (body == '' and not eol) and {} or vim.split(body, '\n', { plain = true })
  return lines, { fileformat = crlf and 'dos' or 'unix', eol = eol, bomb = bom }
end

--- Stop the next change from joining the user's last undo block.
local function break_undo(buf)
  api.nvim_buf_call(buf, function()
    vim.cmd('let &l:undolevels = &l:undolevels')
  end)
end

local function apply_hunks(buf, old_lines, new_lines)
  local old = table.concat(old_lines, '\n') .. '\n'
  local new = table.concat(new_lines, '\n') .. '\n'
  local hunks = vim.diff(old, new, { result_type = 'indices', algorithm = 'histogram' })
  ---@cast hunks integer[][]
  for i = #hunks, 1, -1 do
    local a_start, a_count, b_start, b_count = unpack(hunks[i])
    local first = a_count == 0 and a_start or a_start - 1
    local replacement = vim.list_slice(new_lines, b_start, b_start + b_count - 1)
    api.nvim_buf_set_lines(buf, first, first + a_count, false, replacement)
  end
end

--- Make the buffer hold `content` with the smallest edit, as one undo step.
function M.set_text(buf, content)
  local new_lines, opts = M.parse(content)
  break_undo(buf)
  if is_empty(buf) or #new_lines == 0 then
    api.nvim_buf_set_lines(buf, 0, -1, false, new_lines)
  else
    apply_hunks(buf, api.nvim_buf_get_lines(buf, 0, -1, false), new_lines)
  end
  local bo = vim.bo[buf]
  if bo.fileformat ~= opts.fileformat then
    bo.fileformat = opts.fileformat
  end
  bo.bomb = opts.bomb
  bo.eol = opts.eol
  if not opts.eol then
    bo.fixeol = false
  end
end

--- Neovim's "file changed" check, answered silently for a buffer that has unsaved changes
--- (Neovim stores the file's new time; nothing is reloaded, no W12 question).
local function check_quietly(buf)
  local group = api.nvim_create_augroup('acp_nvim.host.buffers.sync', { clear = true })
  api.nvim_create_autocmd('FileChangedShell', {
    group = group,
    buffer = buf,
    callback = function()
      vim.v.fcs_choice = ''
    end,
  })
  pcall(vim.cmd, ('silent %dchecktime'):format(buf))
  api.nvim_del_augroup_by_id(group)
end

--- Make Neovim take the file on disk (the buffer's own text, unmodified) as the one it read, so
--- that a later `:w` does not ask "changed since reading it". Neovim stores a new read time only
--- when it sees a file whose time alone changed (same size, same text): after `check_quietly`
--- stored the size, the file's time is stepped 2 s ahead and back (no symlink is followed; only
--- the file `stamp` names), each step checked without autocommands. The stamp it ends with (the
--- time comes back to within a microsecond), or nil when the file is not the one expected.
local function adopt_read_time(buf, stamp)
  local name = api.nvim_buf_get_name(buf)
  local lutime = vim.uv.fs_lutime
  for _, step in ipairs({ 2, 0 }) do
    local st = vim.uv.fs_lstat(name)
    if not lutime or not st or st.type ~= 'file' or st.ino ~= stamp[1] then
      return nil
    end
    local base = stamp[3] + stamp[4] / 1e9
    if not lutime(name, st.atime.sec + st.atime.nsec / 1e9, base + step) then
      return nil
    end
    pcall(vim.cmd, ('silent noautocmd %dchecktime'):format(buf))
  end
  return stamp_of(name)
end

--- Record the file as the one the buffer knows, so Neovim neither offers to reload it nor, on
--- the next `:w`, warns that it changed since reading (the caller brought the buffer up to date).
--- `stamp`: the file as the caller wrote or read it (nil: as it is now). If the file changed again
--- since, Neovim is left to notice that itself.
--- `opts.keep_source`: the buffer's text is not (yet) that file's, only Neovim must not ask about it
--- (a three-way view of a disk change, before the user decides): its source stays as it was.
function M.sync(buf, stamp, opts)
  local now, id = stat_of(api.nvim_buf_get_name(buf))
  local wanted = (stamp and stamp ~= vim.NIL) and stamp or now
  known[buf] = wanted
  if now and wanted and now[1] == wanted[1] and not (opts and opts.keep_source) then
    source[buf] = id -- the buffer holds that file's text (an atomic replace made a new inode)
  end
  if not same_stamp(now, wanted) then
    return
  end
  api.nvim_buf_call(buf, function()
    local autoread = vim.fn.getbufvar(buf, '&l:autoread')
    vim.cmd('setlocal noautoread')
    check_quietly(buf)
    if type(wanted) == 'table' and not vim.bo[buf].modified then
      known[buf] = adopt_read_time(buf, wanted) or known[buf]
    end
    if autoread == -1 then
      vim.cmd('set autoread<')
    else
      vim.bo[buf].autoread = autoread == 1
    end
  end)
end

--- Put the agent's `content` into the buffer of `path` (one undo step); the caller writes the file.
--- Returns { status = 'applied' | 'not_loaded' | 'conflict' | 'disk_changed' | 'error', tick, text,
--- encoding }. A buffer with unsaved changes takes the write only when its changedtick is
--- `expected_tick` (the agent read exactly that text), else 'conflict' with the buffer's text;
--- `disk` is the file's stamp now (nil: no file): another than the one the buffer knows means
--- the file changed behind the buffer: 'disk_changed' with the buffer's text. 'applied' carries
--- the text before with `with_before` and the buffer's 'fileencoding'; 'error' the reason.
function M.apply(path, content, expected_tick, with_before, disk)
  local buf = M.find(path)
  if not buf then
    return { status = 'not_loaded' }
  end
  local tick = api.nvim_buf_get_changedtick(buf)
  if vim.bo[buf].modified and tick ~= expected_tick then
    return { status = 'conflict', tick = tick, text = M.buffer_text(buf) }
  end
  if not vim.bo[buf].modifiable then
    return { status = 'error', text = 'the buffer is not modifiable' }
  end
  if vim.bo[buf].readonly then
    return { status = 'error', text = "the buffer is read-only in Neovim ('readonly')" }
  end
  if not same_stamp(M.known(buf), disk) then
    return { status = 'disk_changed', tick = tick, text = M.buffer_text(buf) }
  end
  local before = with_before and M.buffer_text(buf) or ''
  M.set_text(buf, content)
  return { status = 'applied', tick = api.nvim_buf_get_changedtick(buf), text = before,
    encoding = vim.bo[buf].fileencoding }
end

--- After 'applied' at `tick`: `stamp` is the file Python wrote with the buffer's text (the buffer
--- is saved and knows it); nil: the write failed and the edit is taken back. Returns 'saved',
--- 'undone', 'kept' (the user typed since: their text stays, unsaved) or 'not_loaded'.
function M.finish(path, tick, stamp)
  local buf = M.find(path)
  if not buf then
    return 'not_loaded'
  end
  local untouched = api.nvim_buf_get_changedtick(buf) == tick
  if stamp == nil or stamp == vim.NIL then
    if not untouched then
      return 'kept'
    end
    api.nvim_buf_call(buf, function()
      vim.cmd('silent undo') -- the agent's edit is one undo step: take it back whole
    end)
    return 'undone'
  end
  if untouched then
    vim.bo[buf].modified = false
  end
  M.sync(buf, stamp)
  return untouched and 'saved' or 'kept'
end

--- A file removed on disk (a revert of a file the agent created): its buffer goes too, unless
--- it has unsaved changes. Returns whether a buffer was deleted.
function M.drop(path)
  local buf = M.find(path)
  if not buf or vim.bo[buf].modified then
    return false
  end
  api.nvim_buf_delete(buf, { force = true })
  return true
end

--- The file changed on disk: a clean buffer takes `content` (one undo step, view kept); it then
--- knows the disk as `stamp` (nil: as it is now).
--- Returns 'reloaded', 'modified' (unsaved changes: untouched) or 'not_loaded'.
function M.reload(path, content, stamp)
  local buf = M.find(path)
  if not buf then
    return 'not_loaded'
  end
  if vim.bo[buf].modified then
    return 'modified'
  end
  M.set_text(buf, content)
  vim.bo[buf].modified = false
  M.sync(buf, stamp)
  return 'reloaded'
end

--- Mark the buffer of `path` as agreeing with the file on disk (`stamp`; nil: as it is now).
function M.sync_path(path, stamp)
  local buf = M.find(path)
  if buf then
    M.sync(buf, stamp)
  end
end

--- { { path, modified, tick } } of every loaded file buffer (paths resolved).
function M.loaded()
  local result = {}
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if is_file_buffer(buf) then
      result[#result + 1] = {
        realpath(api.nvim_buf_get_name(buf)),
        vim.bo[buf].modified,
        api.nvim_buf_get_changedtick(buf),
      }
    end
  end
  return result
end

return M
