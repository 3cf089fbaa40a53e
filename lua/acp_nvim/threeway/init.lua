--- The three-way view: the base (left), your buffer (middle) and the agent's text (right), in
--- diff mode in a tab of their own. Nothing of yours is replaced until you choose:
---   ga   take the agent's whole text (one undo step in your buffer)
---   gm   keep your buffer as it is now (after any hunks taken with do / dp)
---   do   (in your buffer) take the agent's hunk under the cursor
---   dp   (in the base or agent window) put that hunk into your buffer
---   q    (in the base or agent window) same as gm; closing the tab too
--- The decision goes back to Python (`host.call.answer`) exactly once.
local M = {}

local api = vim.api
local buffers = require('acp_nvim.host.buffers')
local diff = require('acp_nvim.kit.diff')
local scratch = require('acp_nvim.kit.scratch')

---@class acp_nvim.ThreeWay
---@field id integer the request it answers
---@field buf integer the user's buffer (the middle side)
---@field spec table what Python sent (see M.open)
---@field base_buf integer
---@field agent_buf integer
---@field tab integer
---@field wins { base: integer, mine: integer, agent: integer }
---@field group integer its autocommands
---@field saved table[] the user's buffer-local maps its keys replaced
---@field done boolean|nil
local ThreeWay = {}
ThreeWay.__index = ThreeWay

---@type table<integer, acp_nvim.ThreeWay> the open views by request id
M.views = {}

local KEYS = { 'ga', 'gm', 'do' }

--- A read-only side of the view: the base or the agent's text.
local function side(name, text, filetype)
  return (scratch.create({ name = name, kind = 'threeway', buftype = 'nofile', bufhidden = 'wipe',
    lines = text and (buffers.parse(text)) or {}, modifiable = false, filetype = filetype }))
end

local function winbar(text)
  return '%#AcpNvimHeader#' .. text:gsub('%%', '%%%%')
end

function ThreeWay:open_windows()
  local wins = diff.tab({ self.base_buf, self.buf, self.agent_buf })
  self.tab = api.nvim_get_current_tabpage()
  self.wins = { base = wins[1], mine = wins[2], agent = wins[3] }
  local title = self.spec.title ~= '' and self.spec.title or 'agent'
  local theirs = (self.spec.theirs or '') ~= '' and self.spec.theirs or nil
  local bars = {
    base = self.spec.base == nil and 'BASE (unknown)' or ((self.spec.base_title or '') ~= '' and self.spec.base_title or 'BASE'),
    mine = theirs and ('YOURS · ga take the %s text · gm keep yours · do take hunk'):format(theirs)
      or 'YOURS (unsaved) · ga take the agent\'s · gm keep yours · do take hunk',
    agent = theirs and ('%s · dp put hunk into yours · q keep yours'):format(theirs:upper())
      or ('AGENT (%s) · dp put hunk into yours · q keep yours'):format(title),
  }
  for role, win in pairs(self.wins) do
    diff.set(win, { winbar = winbar(bars[role]) })
  end
  api.nvim_set_current_win(self.wins.mine)
end

function ThreeWay:map_scratch(buf)
  local function opts(desc)
    return { buffer = buf, nowait = true, desc = desc }
  end
  vim.keymap.set('n', 'ga', function() M.finish(self.id, 'agent') end, opts('take the agent\'s text'))
  vim.keymap.set('n', 'gm', function() M.finish(self.id, 'mine') end, opts('keep your text'))
  vim.keymap.set('n', 'q', function() M.finish(self.id, 'mine') end, opts('keep your text'))
  vim.keymap.set('n', 'dp', function()
    vim.cmd(('diffput %d'):format(self.buf))
  end, opts('put this hunk into your buffer'))
end

--- Map ga / gm / do on the user's own buffer, remembering any buffer-local maps they replace.
function ThreeWay:map_mine()
  local buf = self.buf
  self.saved = {}
  api.nvim_buf_call(buf, function()
    for _, lhs in ipairs(KEYS) do
      local old = vim.fn.maparg(lhs, 'n', false, true)
      if old.buffer == 1 then
        self.saved[#self.saved + 1] = old
      end
    end
  end)
  local function opts(desc)
    return { buffer = buf, nowait = true, desc = desc }
  end
  vim.keymap.set('n', 'ga', function() M.finish(self.id, 'agent') end, opts('take the agent\'s text'))
  vim.keymap.set('n', 'gm', function() M.finish(self.id, 'mine') end, opts('keep your text'))
  vim.keymap.set('n', 'do', function()
    vim.cmd(('diffget %d'):format(self.agent_buf))
  end, opts('take the agent\'s hunk'))
end

function ThreeWay:unmap_mine()
  if not api.nvim_buf_is_valid(self.buf) then
    return
  end
  for _, lhs in ipairs(KEYS) do
    pcall(vim.keymap.del, 'n', lhs, { buffer = self.buf })
  end
  api.nvim_buf_call(self.buf, function()
    for _, old in ipairs(self.saved or {}) do
      vim.fn.mapset('n', false, old)
    end
  end)
end

function ThreeWay:watch_close()
  self.group = api.nvim_create_augroup('acp_nvim.threeway.' .. self.id, { clear = true })
  for _, win in pairs(self.wins) do
    api.nvim_create_autocmd('WinClosed', {
      group = self.group,
      pattern = tostring(win),
      callback = function()
        vim.schedule(function()
          M.finish(self.id, 'mine')
        end)
      end,
    })
  end
end

--- Open the view for request `id`. spec: { path, base (nil: unknown), agent, purpose, title, theirs, load }.
--- purpose 'write': the agent's write waits; 'disk': the agent already wrote the disk. `theirs` names
--- the other side when it is not the agent's text (a rewind's "before turn 2"); `load` loads the file
--- into a buffer when none holds it.
function M.open(id, spec)
  if spec.base == vim.NIL then
    spec.base = nil
  end
  local buf = buffers.find(spec.path)
  if not buf and spec.load == true and vim.uv.fs_lstat(spec.path) and vim.uv.fs_lstat(spec.path).type == 'file' then
    buf = vim.fn.bufadd(spec.path) -- a file saved since a rewind's turn: shown in a buffer of its own
    vim.fn.bufload(buf)
    vim.bo[buf].buflisted = true
  end
  if not buf then
    require('acp_nvim.host').call.answer(id, 'gone')
    return
  end
  if spec.purpose == 'disk' then
    -- the user decides here: Neovim's own "changed on disk" question (W12) must not ask again; until
    -- then the buffer is still the view of the file it read, not of the one on disk now
    buffers.sync(buf, nil, { keep_source = true })
  end
  local filetype = vim.bo[buf].filetype
  local view = setmetatable({ id = id, buf = buf, spec = spec }, ThreeWay)
  view.base_buf = side(('acp://base/%d%s'):format(id, spec.path), spec.base, filetype)
  view.agent_buf = side(('acp://agent/%d%s'):format(id, spec.path), spec.agent, filetype)
  M.views[id] = view
  view:open_windows()
  view:map_scratch(view.base_buf)
  view:map_scratch(view.agent_buf)
  view:map_mine()
  view:watch_close()
end

--- The outcome once the user's buffer holds what they chose.
function ThreeWay:settle(outcome)
  local buf, purpose = self.buf, self.spec.purpose
  if outcome == 'mine' and buffers.buffer_text(buf) == self.spec.agent then
    outcome = 'agent' -- every hunk taken: the agent's text is what the user kept
  end
  if outcome == 'agent' then
    if buffers.buffer_text(buf) ~= self.spec.agent then
      buffers.set_text(buf, self.spec.agent)
    end
    if purpose ~= 'write' then -- a write: Python writes the file and marks the buffer saved
      vim.bo[buf].modified = false
      buffers.sync(buf)
    end
  elseif purpose == 'disk' then
    buffers.sync(buf) -- the user's text stands; no "file changed" prompt about the agent's write
  end
  return outcome
end

--- Close its windows and wipe its two sides; the user's buffer stays.
function ThreeWay:close()
  pcall(api.nvim_del_augroup_by_id, self.group)
  diff.close({ self.wins.base, self.wins.mine, self.wins.agent })
  scratch.wipe(self.base_buf)
  scratch.wipe(self.agent_buf)
end

--- Resolve view `id` with 'agent' or 'mine' (its buffer gone: 'gone') and answer Python.
function M.finish(id, outcome)
  local view = M.views[id]
  if not view or view.done then
    return
  end
  view.done = true
  M.views[id] = nil
  if api.nvim_buf_is_valid(view.buf) and api.nvim_buf_is_loaded(view.buf) then
    outcome = view:settle(outcome)
  else
    outcome = 'gone'
  end
  view:unmap_mine()
  view:close()
  require('acp_nvim.host').call.answer(id, outcome)
end

--- Ids of the open views (newest last), for tests and :Ai commands.
function M.ids()
  local ids = vim.tbl_keys(M.views)
  table.sort(ids)
  return ids
end

return M
