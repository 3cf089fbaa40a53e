--- :Ai login's terminal methods: the agent's login command in a Neovim terminal.
--- Its exit code goes back to Python (`host.call.answer`) exactly once.
local M = {}

--- Run `argv` (with `env` added to Neovim's) in a terminal split named acp://login/{name}.
function M.terminal(id, argv, env, name)
  vim.cmd('botright new')
  local buf = vim.api.nvim_get_current_buf()
  local ok, job = pcall(vim.fn.jobstart, argv, {
    term = true,
    env = env,
    on_exit = function(_, code)
      vim.schedule(function()
        require('acp_nvim.host').call.answer(id, tostring(code))
      end)
    end,
  })
  if not ok or job <= 0 then
    require('acp_nvim.host').call.answer(id, 'failed to start: ' .. tostring(job))
    return
  end
  pcall(vim.api.nvim_buf_set_name, buf, 'acp://login/' .. name)
  vim.cmd('startinsert')
end

--- The value of one variable, typed without echo (never shown, never logged).
function M.secret(label)
  local ok, value = pcall(vim.fn.inputsecret, label .. ': ')
  return ok and value or ''
end

return M
