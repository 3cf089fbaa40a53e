--- The view kit: every scratch buffer, diff window and float of acp.nvim is made here.
---   scratch  buffers described by data, with the one leftover policy
---   winopts  window options saved and given back exactly
---   diff     diff tab pages of windows we opened
---   float    centred floats
---   scrolled one WinScrolled autocommand per kind of view
---   parked   many edits to a buffer, one view update per window that follows it
---   oneline  messages that fit the command line (no hit-enter prompt)
---   notify   notices whose errors never make Neovim wait (no error flag)
return {
  scratch = require('acp_nvim.kit.scratch'),
  winopts = require('acp_nvim.kit.winopts'),
  diff = require('acp_nvim.kit.diff'),
  float = require('acp_nvim.kit.float'),
  scrolled = require('acp_nvim.kit.scrolled'),
  parked = require('acp_nvim.kit.parked'),
  oneline = require('acp_nvim.kit.oneline'),
  notify = require('acp_nvim.kit.notify'),
}
