--- Views the chat opens: a block's full text or diff in a scratch buffer, a location, the
--- quickfix list, and the editable queue of prompts.
local M = {}

local api = vim.api
local scratch = require('acp_nvim.kit.scratch')

--- A window to open things in: the previous one when the current window shows a chat.
local function leave_chat()
  if vim.bo.filetype ~= 'acp_chat' then
    return
  end
  local previous = vim.fn.win_getid(vim.fn.winnr('#'))
  if previous ~= 0 and previous ~= api.nvim_get_current_win() then
    api.nvim_set_current_win(previous)
  else
    vim.cmd('aboveleft vsplit')
  end
end

local function display(buf)
  local win = vim.fn.bufwinid(buf)
  if win ~= -1 then
    api.nvim_set_current_win(win)
    return
  end
  leave_chat()
  vim.cmd('split')
  api.nvim_win_set_buf(0, buf)
end

--- Show `lines` read-only in the scratch buffer `name` (ft `filetype`), in a split.
function M.show(name, lines, filetype)
  local buf = scratch.create({ name = name, kind = 'views', buftype = 'nofile', bufhidden = 'wipe', lines = lines,
    modifiable = false, filetype = filetype or '', reuse = true })
  display(buf)
  api.nvim_win_set_cursor(0, { 1, 0 })
  return buf
end

--- Open `path` at `lnum` in a window other than the chat.
function M.jump(path, lnum)
  leave_chat()
  vim.cmd.edit(vim.fn.fnameescape(path))
  if lnum then
    pcall(api.nvim_win_set_cursor, 0, { lnum, 0 })
  end
end

--- Fill the quickfix list with `items` and open it.
function M.quickfix(title, items)
  vim.fn.setqflist({}, ' ', { title = title, items = items })
  vim.cmd('botright copen')
end

-- The queue editor --------------------------------------------------------------------

local SECTION = '^──── prompt%s*(%d*)'
local HELP = {
  '# Queued prompts: edit them, then :w. Delete a section to drop that prompt; a new section',
  '# "──── prompt" adds one. Lines starting with "# " at the top are ignored.',
}

local function queue_lines(items)
  local lines = vim.list_slice(HELP)
  for _, item in ipairs(items) do
    local extra = item.context ~= '' and (' (with ' .. item.context .. ')') or ''
    lines[#lines + 1] = ('──── prompt %d%s'):format(item.id, extra)
    vim.list_extend(lines, vim.split(item.text, '\n', { plain = true }))
  end
  return lines
end

--- The sections of an edited queue buffer: { { id = n or 0, text = ... }, ... }.
function M.parse_queue(lines)
  local items, current = {}, nil
  for _, line in ipairs(lines) do
    local id = line:match(SECTION)
    if id then
      current = { id = tonumber(id) or 0, lines = {} }
      items[#items + 1] = current
    elseif current then
      current.lines[#current.lines + 1] = line
    end
  end
  return vim.tbl_map(function(item)
    return { id = item.id, text = vim.trim(table.concat(item.lines, '\n')) }
  end, items)
end

--- Open the queue of session `key` for editing; :w sends it back.
function M.edit_queue(key, items)
  local buf = scratch.create({ name = 'acp://queue/' .. key, kind = 'queue', buftype = 'acwrite',
    bufhidden = 'wipe', lines = queue_lines(items), reuse = true })
  api.nvim_clear_autocmds({ buffer = buf, event = 'BufWriteCmd' })
  api.nvim_create_autocmd('BufWriteCmd', {
    buffer = buf,
    callback = function()
      require('acp_nvim.host').call.chat('queue_set', key, M.parse_queue(api.nvim_buf_get_lines(buf, 0, -1, false)))
      vim.bo[buf].modified = false
    end,
  })
  display(buf)
  return buf
end

return M
