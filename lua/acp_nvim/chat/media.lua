--- What the agent sends besides text (:help acp_nvim-media): on a `▣` line of the chat, `gf` and `<CR>`
--- open a link or resource in a buffer and `gx` opens an image or audio (saved by the Python host) with
--- vim.ui.open. Elsewhere `gf` and `gx` do what Vim does. Python decides what a line opens: Lua sends
--- the block and the line, nothing the line says is trusted here.
local M = {}

local api = vim.api

local MARK = '^%s*▣ '

---@type table<string, acp_nvim.Chat> the chats whose keys are mapped, by session key
local chats = setmetatable({}, { __mode = 'v' })

local function say(text)
  api.nvim_echo({ { '[acp.nvim] ' .. text, 'WarningMsg' } }, false, {})
end

--- The media line under the cursor of `chat` ({ id, line }), or nil.
function M.at_cursor(chat)
  if api.nvim_get_current_buf() ~= chat.buf then
    return nil
  end
  local row = api.nvim_win_get_cursor(0)[1] - 1
  local line = api.nvim_get_current_line()
  if not line:find(MARK) then
    return nil
  end
  local id = chat:block_at(row)
  return id and { id = id, line = line } or nil
end

local function act(chat, action, here)
  require('acp_nvim.host').call.chat(action, chat.key, here)
end

--- `<CR>` on a media line: open it (true), else false (the chat's own <CR> runs).
function M.open_here(chat)
  local here = M.at_cursor(chat)
  if not here then
    return false
  end
  act(chat, 'media_file', here)
  return true
end

--- Map `gf` and `gx` in `chat`'s buffer: on a media line they open it, elsewhere Vim's own run.
function M.attach(chat)
  chats[chat.key] = chat
  for lhs, action in pairs({ gf = 'media_file', gx = 'media_open' }) do
    vim.keymap.set('n', lhs, function()
      local here = M.at_cursor(chat)
      if not here then
        return lhs
      end
      vim.schedule(function()
        act(chat, action, here)
      end)
      return ''
    end, { buffer = chat.buf, expr = true, desc = 'acp.nvim: open the link, resource, image or audio here' })
  end
end

--- A workspace file a link names (the host checked it against the workspace roots).
function M.edit(path)
  require('acp_nvim.chat.opens').jump(path)
end

--- An embedded text resource in a scratch buffer `name` (acp://resource/…), its filetype from its name.
function M.show_text(name, lines)
  local filetype = vim.filetype.match({ filename = name, contents = lines }) or ''
  require('acp_nvim.chat.opens').show(name, lines, filetype)
end

--- Open a saved image or audio, or a web link, with the system's viewer.
function M.ui_open(target)
  local ok, result, err = pcall(vim.ui.open, target)
  if not ok or err then
    say(('could not open %s: %s'):format(target, ok and err or result))
  end
end

-- Inline images -------------------------------------------------------------------------

--- The installed image plugin's way to draw `path` below row `row` of `buf`, or nil without one.
function M.backend()
  local has_snacks, snacks_image = pcall(require, 'snacks.image')
  if has_snacks and type(snacks_image) == 'table' and type(snacks_image.placement) == 'table' then
    return function(buf, row, path)
      snacks_image.placement.new(buf, path, { pos = { row + 1, 0 }, inline = true })
    end
  end
  local has_image, image = pcall(require, 'image')
  if has_image and type(image) == 'table' and type(image.from_file) == 'function' then
    return function(buf, row, path)
      local win = vim.fn.bufwinid(buf)
      local img = image.from_file(path, { buffer = buf, window = win ~= -1 and win or nil, x = 0, y = row + 1,
        with_virtual_padding = true, inline = true })
      if img then
        img:render()
      end
    end
  end
  return nil
end

--- A new block of `chat`: an image the agent sent is drawn inline when an image plugin is installed
--- (the host saves it first, then calls `inline`).
function M.on_new(chat, id, meta)
  if type(meta) ~= 'table' or meta.media ~= 'image' or not M.backend() then
    return
  end
  local row = chat.index[id] and chat:block_range(id)
  local line = row and api.nvim_buf_get_lines(chat.buf, row, row + 1, false)[1]
  if line and line:find(MARK) then
    act(chat, 'media_inline', { id = id, line = line })
  end
end

--- Draw the saved image `path` under block `id` of session `key`'s chat.
function M.inline(key, id, path)
  local chat = chats[key]
  local draw = M.backend()
  local row = chat and api.nvim_buf_is_valid(chat.buf) and chat.index[id] and chat:block_range(id)
  if draw and row then
    local ok, err = pcall(draw, chat.buf, row, path)
    if not ok then
      say('the image plugin could not show the image: ' .. tostring(err):gsub('\n.*', ''))
    end
  end
end

return M
