--- File names in :Ai send's text: `%`, `#` and `#n` expand as for :edit (:help acp_nvim-expand).
---
--- Only a word that is nothing but the special (with modifiers, an `@` before it and
--- punctuation after it) expands, so prose such as "50% faster" or "#include" stays as typed.
local M = {}

local TRAILING = '^[.,;:!?)%]}\'"]*$'

--- The parts of `word` when it names a file: at, escaped, special, modifiers, tail; else nil.
local function parse(word)
  local at, rest = word:match('^(@?)(.*)$')
  local escaped = rest:sub(1, 1) == '\\'
  if escaped then
    rest = rest:sub(2)
  end
  local special, after = rest:match('^(%%)(.*)$')
  if not special then
    special, after = rest:match('^(#%d*)(.*)$')
  end
  if not special then
    return nil
  end
  local mods = ''
  while after:match('^:[phtre~.]') do
    mods, after = mods .. after:sub(1, 2), after:sub(3)
  end
  if not after:match(TRAILING) then
    return nil
  end
  return at, escaped, special, mods, after
end

local function no_file(special)
  if special == '%' then
    return '`%` names no file: the current buffer has no name (write \\% for a literal %)'
  elseif special == '#' then
    return '`#` names no file: there is no alternate file (write \\# for a literal #)'
  end
  return ('`%s` names no file: buffer %s does not exist or has no name (write \\%s for a literal %s)'):format(
    special, special:sub(2), special, special)
end

--- `text` with every file-name word expanded, relative to the current buffer; nil and a
--- message when a word names no file (nothing is sent then).
---@return string|nil, string|nil
function M.expand(text)
  local problem
  local out = text:gsub('%S+', function(word)
    local at, escaped, special, mods, tail = parse(word)
    if not at or problem then
      return nil
    elseif escaped then
      return at .. special .. mods .. tail
    end
    local name = vim.fn.expand(special .. mods)
    if name == '' then
      problem = no_file(special)
      return nil
    end
    return at .. name .. tail
  end)
  if problem then
    return nil, problem
  end
  return out
end

return M
