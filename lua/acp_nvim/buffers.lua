--- File access through buffers: the text the user sees, unsaved edits included.
local M = {}

local api = vim.api

local function realpath(name)
  return vim.uv.fs_realpath(name) or vim.fn.fnamemodify(name, ':p')
end

--- The loaded, ordinary buffer that holds `path`, if any.
function M.find(path)
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == '' then
      local name = api.nvim_buf_get_name(buf)
      if name ~= '' and (name == path or realpath(name) == path) then
        return buf
      end
    end
  end
end

local function buffer_text(buf)
  local text = table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
  if vim.bo[buf].eol or vim.bo[buf].fixeol then
    text = text .. '\n'
  end
  return text
end

--- The buffer's current text for `path` (nil when no buffer holds it).
function M.text(path)
  local buf = M.find(path)
  return buf and buffer_text(buf) or nil
end

local function split_content(content)
  local lines = vim.split(content, '\n', { plain = true })
  if lines[#lines] == '' then
    lines[#lines] = nil
  end
  return lines
end

--- Apply `content` to the buffer as a minimal edit (only changed hunks), then save it.
--- Returns false when `path` is not loaded. Refuses to overwrite unsaved changes.
function M.write(path, content)
  local buf = M.find(path)
  if not buf then
    return false
  end
  if vim.bo[buf].modified then
    error(('%s has unsaved changes in Neovim; not overwriting them'):format(path), 0)
  end
  local old = buffer_text(buf)
  local new_lines = split_content(content)
  local hunks = vim.diff(old, content, { result_type = 'indices', algorithm = 'histogram' })
  ---@cast hunks integer[][]
  for i = #hunks, 1, -1 do
    local a_start, a_count, b_start, b_count = unpack(hunks[i])
    local first = a_count == 0 and a_start or a_start - 1
    local replacement = vim.list_slice(new_lines, b_start, b_start + b_count - 1)
    if i < #hunks then
      api.nvim_buf_call(buf, function()
        vim.cmd('silent! undojoin')
      end)
    end
    api.nvim_buf_set_lines(buf, first, first + a_count, false, replacement)
  end
  api.nvim_buf_call(buf, function()
    vim.cmd('silent noautocmd write!')
  end)
  return true
end

return M
