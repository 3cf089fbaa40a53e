-- Generated from python/acp_nvim/nvim/commands/entry_points.py by `make docs` (scripts/gen_docs.py): do not edit.
--- The entry points into the Python host: require('acp_nvim.host').call[name](params...) sends `method`.
return {
  list = {
    { name = 'command', method = 'acp_nvim:command', params = { 'request' } },
    { name = 'submit', method = 'acp_nvim:submit', params = { 'key', 'text' } },
    { name = 'answer', method = 'acp_nvim:answer', params = { 'id', 'option' } },
    { name = 'review_done', method = 'acp_nvim:review_done', params = { 'id', 'verdict' } },
    { name = 'chat', method = 'acp_nvim:chat', params = { 'action', 'key', 'arg' } },
    { name = 'tool_done', method = 'acp_nvim:tool_done', params = { 'id', 'answer' } },
    { name = 'terminal', method = 'acp_nvim:terminal', params = { 'event', 'id', 'data' } },
    { name = 'board', method = 'acp_nvim:board', params = { 'event' } },
    { name = 'log_page', method = 'acp_nvim:log_page', params = { 'key' } },
    { name = 'warm', method = 'acp_nvim:warm', params = {} },
    { name = 'idle', method = 'acp_nvim:idle', params = { 'config', 'cwd' } },
    { name = 'shutdown', method = 'acp_nvim:shutdown', params = {}, sync = true },
  },
}
