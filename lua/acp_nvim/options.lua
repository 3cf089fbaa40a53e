--- setup()'s options and the configuration built from them: merged over the defaults and checked
--- key by key when first read (an invalid option raises, naming its key path); the defaults without
--- setup(). Every module reads the configuration here; acp_nvim.init's `config` forwards to it.
local M = {}

---@type table|nil the options setup() was given
M.opts = nil

setmetatable(M, {
  __index = function(_, key)
    if key == 'config' then
      local built = require('acp_nvim.config').build(M.opts)
      rawset(M, 'config', built)
      return built
    end
  end,
})

--- Record setup()'s options; the configuration is built again when next read.
---@param opts table|nil
function M.set(opts)
  M.opts = opts
  rawset(M, 'config', nil)
end

return M
