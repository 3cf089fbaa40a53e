--- setup()'s options and the configuration built from them: merged over the defaults and checked
--- key by key when first read; the defaults without setup(). A problem (a typo, a bad value) is said
--- once per setup(), in one line naming its key path, and that key keeps its default: nothing raises.
--- Every module reads the configuration here; acp_nvim.init's `config` forwards to it.
local M = {}

---@type table|nil the options setup() was given
M.opts = nil

---@type string[] the problems of the options (`path: what is wrong; what was done`), for :checkhealth
M.problems = {}

--- Say the problems in one line (a second line would stop Neovim at a "Press ENTER" prompt with the
--- default 'cmdheight'); :checkhealth acp_nvim lists them all.
local function say(problems)
  local more = #problems > 1 and (' (+%d more: :checkhealth acp_nvim)'):format(#problems - 1) or ''
  local text = require('acp_nvim.kit.oneline').fit('[acp.nvim] setup: ', problems[1], more)
  vim.notify(text, vim.log.levels.WARN)
end

setmetatable(M, {
  __index = function(_, key)
    if key == 'config' then
      local built, problems = require('acp_nvim.config').build(M.opts)
      rawset(M, 'config', built)
      M.problems = problems
      if #problems > 0 then
        if vim.in_fast_event() then
          vim.schedule(function()
            say(problems)
          end)
        else
          say(problems)
        end
      end
      return built
    end
  end,
})

--- Record setup()'s options; the configuration is built again (and checked) when next read.
---@param opts table|nil
function M.set(opts)
  M.opts = opts
  M.problems = {}
  rawset(M, 'config', nil)
end

return M
