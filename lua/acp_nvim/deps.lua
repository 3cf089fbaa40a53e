--- The private venv of acp.nvim's Python dependencies (:Ai deps), under stdpath('data').
local M = {}

--- The venv's folder.
function M.venv()
  return vim.fn.stdpath('data') .. '/acp_nvim/venv'
end

--- The venv's Python (it may not exist yet).
function M.python()
  local windows = vim.fn.has('win32') == 1
  return M.venv() .. (windows and '/Scripts/python.exe' or '/bin/python')
end

return M
