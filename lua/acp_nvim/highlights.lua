--- Highlight groups, all linked with default = true so colorschemes can override them.
local M = {}

M.groups = {
  AcpNvimUser = 'Title',
  AcpNvimAgent = 'Normal',
  AcpNvimThought = 'Comment',
  AcpNvimTool = 'Function',
  AcpNvimToolFailed = 'DiagnosticError',
  AcpNvimToolDone = 'DiagnosticOk',
  AcpNvimPlan = 'Identifier',
  AcpNvimNotice = 'DiagnosticInfo',
  AcpNvimError = 'DiagnosticError',
  AcpNvimTurnEnd = 'NonText',
  AcpNvimPromptSeparator = 'WinSeparator',
  AcpNvimHeader = 'Title',
  AcpNvimInfo = 'Comment',
  AcpNvimPlanDone = 'Comment',
  AcpNvimClip = 'NonText',
  AcpNvimQueue = 'Comment',
}

function M.setup()
  for group, link in pairs(M.groups) do
    vim.api.nvim_set_hl(0, group, { link = link, default = true })
  end
end

return M
