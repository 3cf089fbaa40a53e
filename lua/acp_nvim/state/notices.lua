--- "Needs you" and "done" notices (|acp_nvim-notify|): when a session starts waiting for you (a
--- review, a permission prompt, a question, a file conflict) or ends a turn, and you are not looking
--- at it (none of its views is on screen in this tab page), vim.notify says so, once per session and state until you look at it; while Neovim has no
--- focus (FocusLost) the notice also goes to the terminal as a desktop notification (OSC 9 or
--- OSC 777), else as the bell. `User AcpNvimNeedsYou` fires at every such change, looked at or not.
---
--- acp_nvim.state calls `changed` with each new state; the keys ]w / [w are mapped here (in every
--- buffer, once a session exists) to :Ai next / :Ai prev.
local M = {}

local api = vim.api

--- Whether Neovim has the focus (FocusLost / FocusGained; focused until told otherwise).
M.focused = true
---@type table<string, string> per session: the notice given and not looked at since
M.given = {}
---@type string[] what went to the terminal (tests read it)
M.sent = {}

local MAX_TEXT = 200
local group = api.nvim_create_augroup('acp_nvim.state.notices', { clear = true })

local function looked_at()
  local key = vim.b.acp_nvim_session
  if key and M.focused then
    M.given[key] = nil
  end
end

api.nvim_create_autocmd('FocusLost', { group = group, callback = function()
  M.focused = false
end })
api.nvim_create_autocmd('FocusGained', { group = group, callback = function()
  M.focused = true
  looked_at()
end })
api.nvim_create_autocmd({ 'BufEnter', 'WinEnter' }, { group = group, callback = looked_at })

local function config()
  return require('acp_nvim.config.options').config.notify
end

--- Whether you are looking at session `key`: Neovim has the focus and a window of the current tab page
--- shows its chat (or its review, question or permission prompt).
function M.looking(key)
  if not M.focused then
    return false
  end
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    if vim.b[api.nvim_win_get_buf(win)].acp_nvim_session == key then
      return true
    end
  end
  return false
end

-- The terminal -----------------------------------------------------------------------------

--- The kind of sequence the terminal Neovim runs in understands ('osc9', 'osc777' or 'bell').
function M.detect(env)
  env = env or vim.env
  local program, term = env.TERM_PROGRAM or '', env.TERM or ''
  if env.TMUX then
    return 'bell' -- tmux shows the bell as an alert; OSC needs its passthrough (set sequence then)
  elseif program == 'iTerm.app' or program == 'WezTerm' or program == 'ghostty' or env.WT_SESSION
    or env.KITTY_WINDOW_ID or env.ConEmuPID or term:find('kitty', 1, true) or term:find('ghostty', 1, true) then
    return 'osc9'
  elseif term:find('^foot') or term:find('^rxvt%-unicode') or env.VTE_VERSION then
    return 'osc777'
  end
  return 'bell'
end

--- Text an agent may have chosen (a title), made safe inside an escape sequence: no control
--- characters (C0, DEL, C1), no ';' (OSC 777's separator), at most MAX_TEXT characters.
function M.clean(text)
  text = tostring(text or ''):gsub('[%c\127]', ' '):gsub('\194[\128-\159]', ' '):gsub(';', ',')
  if vim.fn.strchars(text) > MAX_TEXT then
    text = vim.fn.strcharpart(text, 0, MAX_TEXT - 1) .. '…'
  end
  return text
end

--- The bytes that tell the terminal: `kind` is 'osc9', 'osc777' or 'bell' (inside tmux the OSC ones
--- are wrapped for its passthrough).
function M.sequence(kind, title, body, env)
  env = env or vim.env
  local seq
  if kind == 'osc9' then
    seq = ('\027]9;%s: %s\007'):format(M.clean(title), M.clean(body))
  elseif kind == 'osc777' then
    seq = ('\027]777;notify;%s;%s\007'):format(M.clean(title), M.clean(body))
  else
    return '\007'
  end
  if env.TMUX then
    seq = '\027Ptmux;' .. seq:gsub('\027', '\027\027') .. '\027\\'
  end
  return seq
end

--- Write `seq` to the terminal Neovim runs in (its UI's stderr; nothing when there is none).
function M.write(seq)
  M.sent[#M.sent + 1] = seq
  if #M.sent > 50 then
    table.remove(M.sent, 1)
  end
  if api.nvim_ui_send then
    pcall(api.nvim_ui_send, seq)
  else
    pcall(api.nvim_chan_send, 2, seq)
  end
end

-- Notices ------------------------------------------------------------------------------------

local STOPS = { end_turn = 'finished its turn', cancelled = 'turn was cancelled', max_tokens = 'hit its token limit',
  max_turn_requests = 'hit its request limit', refusal = 'refused' }

--- What session state `s` waits on ({} when nothing).
function M.needs(s)
  if type(s.waiting) == 'table' and #s.waiting > 0 then
    return s.waiting
  end
  return s.state == 'waiting' and { 'you' } or {}
end

local function label(key, s)
  local title = (s.title or '') ~= '' and (' · ' .. s.title) or ''
  return key .. title
end

--- Tell the user about session `key` (deduplicated: once per session and state until looked at).
function M.notice(key, state, text)
  local cfg = config()
  if cfg.when == 'never' or (cfg.when == 'unfocused' and M.looking(key)) or M.given[key] == state then
    return
  end
  M.given[key] = state
  vim.notify('[acp.nvim] ' .. text, vim.log.levels.INFO)
  if cfg.terminal and (not M.focused or cfg.when == 'always') then
    local kind = cfg.sequence == 'auto' and M.detect() or cfg.sequence
    M.write(M.sequence(kind, 'acp.nvim', text))
  end
end

--- A new state of session `key` (acp_nvim.state): fire AcpNvimNeedsYou, give the notices.
function M.changed(key, old, new)
  M.map_keys()
  local what = M.needs(new)
  local signature = table.concat(what, ',')
  local before = old and table.concat(M.needs(old), ',') or ''
  if #what > 0 and signature ~= before then
    require('acp_nvim.state.events').fire('AcpNvimNeedsYou', key, new, { what = what, looking = M.looking(key) })
    M.notice(key, 'needs:' .. signature, ('%s needs you: %s — %s'):format(label(key, new),
      table.concat(what, ', '), M.reach()))
  elseif #what == 0 and old and (new.turns or 0) > (old.turns or 0) then
    local failed = type(new.failed) == 'string' and new.failed ~= '' and new.failed or nil
    local how = failed and ('failed: ' .. failed) or STOPS[new.stop_reason or ''] or
      ('turn ended: ' .. tostring(new.stop_reason or '?'))
    M.notice(key, 'done', ('%s %s'):format(label(key, new), how))
  end
end

--- How to reach a waiting session, in words.
function M.reach()
  local key = require('acp_nvim.config.options').config.keymaps.next_waiting
  return key ~= '' and (key .. ' or :Ai next goes there') or ':Ai next goes there'
end

--- Map ]w / [w (keymaps.next_waiting / prev_waiting) in every buffer, once, unless you mapped them.
function M.map_keys()
  if M.mapped then
    return
  end
  M.mapped = true
  local keys = require('acp_nvim.config.options').config.keymaps
  for lhs, sub in pairs({ [keys.next_waiting] = 'next', [keys.prev_waiting] = 'prev' }) do
    if lhs ~= '' and vim.fn.maparg(lhs, 'n') == '' then
      vim.keymap.set('n', lhs, function()
        vim.cmd('Ai ' .. sub)
      end, { desc = ('acp.nvim: the %s session waiting for you (:Ai %s)'):format(
        sub == 'next' and 'next' or 'previous', sub) })
    end
  end
end

return M
