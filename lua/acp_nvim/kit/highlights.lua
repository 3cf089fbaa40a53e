--- Every highlight group of acp.nvim, defined here and nowhere else. All are linked with
--- `default = true`, so a colorscheme or the user may override them (and `:highlight clear`
--- keeps the default links). |acp_nvim-highlights| lists them; a test checks that every group
--- the Lua code uses is defined here and documented there.
local M = {}

---@type table<string, string> group -> the group it links to
M.groups = {
  -- the chat buffer
  AcpNvimUser = 'Title',
  AcpNvimAgent = 'Normal',
  AcpNvimThought = 'Comment',
  AcpNvimTool = 'Function',
  AcpNvimToolFailed = 'DiagnosticError',
  AcpNvimToolDone = 'DiagnosticOk',
  AcpNvimPlan = 'Identifier',
  AcpNvimPlanDone = 'Comment',
  AcpNvimPlanHigh = 'WarningMsg',
  AcpNvimNotice = 'DiagnosticInfo',
  AcpNvimWarning = 'DiagnosticWarn',
  AcpNvimError = 'DiagnosticError',
  AcpNvimCompaction = 'Comment',
  AcpNvimTurnEnd = 'NonText',
  AcpNvimPromptSeparator = 'WinSeparator',
  AcpNvimHeader = 'Title',
  AcpNvimInfo = 'Comment',
  AcpNvimQueue = 'Comment',
  AcpNvimClip = 'NonText',
  -- the review view
  AcpNvimReviewBar = 'WinBar',
  AcpNvimReviewTitle = 'Title',
  AcpNvimReviewKey = 'Special',
  AcpNvimReviewNote = 'DiagnosticWarn',
  AcpNvimReviewHidden = 'DiagnosticError',
  AcpNvimReviewComment = 'DiagnosticHint',
  -- permission prompts (and the review's winbar while its keys wait)
  AcpNvimPromptLocked = 'DiagnosticWarn',
  AcpNvimPromptHint = 'Comment',
  AcpNvimPromptDisabled = 'NonText',
  -- the board (:Ai board)
  AcpNvimBoardRunning = 'DiagnosticInfo',
  AcpNvimBoardWaiting = 'DiagnosticWarn',
  AcpNvimBoardFailed = 'DiagnosticError',
  AcpNvimBoardIdle = 'DiagnosticOk',
  AcpNvimBoardPast = 'Comment',
  -- log buffers
  AcpNvimLogTime = 'Comment',
  AcpNvimLogOut = 'Function',
  AcpNvimLogIn = 'String',
  AcpNvimLogLocal = 'Identifier',
  AcpNvimLogStderr = 'Comment',
  AcpNvimLogLifecycle = 'Special',
  AcpNvimLogWarn = 'DiagnosticWarn',
  AcpNvimLogError = 'DiagnosticError',
}

--- Define every group (safe to call again: a group the user set stays as they set it).
function M.setup()
  for group, link in pairs(M.groups) do
    vim.api.nvim_set_hl(0, group, { link = link, default = true })
  end
end

return M
