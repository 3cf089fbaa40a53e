-- Generated from python/acp_nvim/nvim/subcommands.py by `make docs` (scripts/gen_docs.py): do not edit.
--- The :Ai subcommands: usage, help, completion (literal words, named sources), where each runs.
return {
  default = 'open',
  sources = { 'agents', 'files', 'installed', 'modes', 'registry', 'sessions', 'worktrees' },
  list = {
    {
      name = 'open',
      usage = { '[session]' },
      help = 'open the chat of [session], or of the current session (starting the default agent); `:Ai` alone does this',
      args = { { sources = { 'sessions' } } },
    },
    {
      name = 'toggle',
      usage = { '' },
      help = "hide the tab's chat column, or show it again with the current session's chat; the sessions keep running",
      lua = { 'acp_nvim.chat.toggle', 'toggle' },
    },
    {
      name = 'send',
      usage = { '{text}' },
      help = 'send a prompt; a range attaches the lines as context, `@path` a file, and `%`, `%:p`, `#` expand to file names as for `:edit`',
      range = true,
      expand = true,
    },
    {
      name = 'paste',
      usage = { '[text]' },
      help = "attach the clipboard's image: to the chat's prompt, or sent at once with [text]",
    },
    {
      name = 'cancel',
      usage = { '' },
      help = 'cancel the running turn; pending permission requests are answered `cancelled`',
    },
    {
      name = 'new',
      usage = { '[agent] [--worktree [name]]' },
      help = 'start another session, of [agent] or the default agent; `--worktree` starts it in a new git worktree of its own, on a new branch from HEAD',
      args = {
        { words = { '--worktree' }, sources = { 'agents' }, after = { ['--worktree'] = {} } },
        { words = { '--worktree' }, after = { ['--worktree'] = {} } },
      },
    },
    { name = 'close', usage = { '' }, help = "stop the current session's agent" },
    {
      name = 'restart',
      usage = { '' },
      help = 'a fresh agent process for the current session (after a crash or a hang)',
    },
    {
      name = 'sessions',
      usage = { '' },
      help = 'pick a session (`vim.ui.select`) and open its chat',
    },
    {
      name = 'board',
      usage = { '' },
      help = 'every session in one live buffer: state, what waits for you, activity, tokens, changed files, branch; keys act on the session under the cursor',
    },
    {
      name = 'next',
      usage = { '' },
      help = 'go to the next session waiting for you (a review, prompt or question): what it waits on, else its chat',
      lua = { 'acp_nvim.board', 'next' },
    },
    {
      name = 'prev',
      usage = { '' },
      help = 'go to the previous session waiting for you',
      lua = { 'acp_nvim.board', 'prev' },
    },
    {
      name = 'worktree',
      usage = { '[list]', 'diff [name]', 'merge [name]', 'remove [name]' },
      help = "the session's git worktree: list them, its diff against where it started, merge it into the checkout through a review, remove it (its branch stays)",
      args = {
        {
          words = { 'list', 'diff', 'merge', 'remove' },
          after = {
            diff = { { sources = { 'worktrees' } } },
            merge = { { sources = { 'worktrees' } } },
            remove = { { sources = { 'worktrees' } } },
          },
        },
      },
    },
    {
      name = 'resume',
      usage = { '', 'last', '{session-id}' },
      help = "reopen a past session of this folder (picker of every agent's sessions and the local history), the default agent's last one, or {session-id}",
      args = { { words = { 'last' } } },
    },
    {
      name = 'fork',
      usage = { '' },
      help = 'fork the current session (`session/fork`) into a new chat',
    },
    {
      name = 'delete',
      usage = { '', '{session-id}' },
      help = 'delete a past session: in the agent where it offers it, and from the local history',
    },
    {
      name = 'login',
      usage = { '[agent]' },
      help = "log in to [agent] or the current session's agent with one of its methods (its own, a terminal, an environment variable typed without echo)",
      args = { { sources = { 'agents' } } },
    },
    {
      name = 'logout',
      usage = { '' },
      help = "log out of the current session's agent, where it offers it",
    },
    {
      name = 'mode',
      usage = { '[mode]' },
      help = "pick or switch the agent's mode",
      args = { { sources = { 'modes' } } },
    },
    { name = 'model', usage = { '[value]' }, help = "pick or set the agent's model" },
    {
      name = 'config',
      usage = { '[option [value]]' },
      help = "pick or set any of the agent's config options",
    },
    {
      name = 'queue',
      usage = { '[show|edit|clear]' },
      help = 'the prompts waiting for the running turn to end: list, edit or drop them',
      args = { { words = { 'show', 'edit', 'clear' } } },
    },
    {
      name = 'locations',
      usage = { '' },
      help = 'every tool call location of the session to the quickfix list',
    },
    {
      name = 'export',
      usage = { '{file}' },
      help = "the session's transcript as Markdown, each message under its heading with the agent's message id in an HTML comment (mode 0600, redacted)",
      args = { { sources = { 'files' } } },
    },
    {
      name = 'permissions',
      usage = { '' },
      help = 'show the pending permission requests and reviews again',
      lua = { 'acp_nvim.question.permission', 'show' },
    },
    {
      name = 'questions',
      usage = { '' },
      help = "list the agents' open questions (forms, links to open) and open one",
      lua = { 'acp_nvim.question', 'show' },
    },
    {
      name = 'policy',
      usage = { '[ask|auto-edit|trust]' },
      help = "show or set the session's permission policy",
      args = { { words = { 'ask', 'auto-edit', 'trust' } } },
    },
    {
      name = 'rules',
      usage = { '', 'remove {n}' },
      help = 'list the remembered "always" answers, or forget rule {n}',
      args = { { words = { 'remove' } } },
    },
    {
      name = 'changes',
      usage = { '', 'revert {file}' },
      help = 'the files the agent changed in the turn: diff, revert a hunk or a file; `revert` puts {file} back as it was before the turn',
      args = { { words = { 'revert' }, after = { revert = { { sources = { 'files' } } } } } },
      expand = true,
    },
    {
      name = 'checkpoints',
      usage = { '' },
      help = 'the turns of the session, newest first, each a checkpoint: `<CR>` its diff, `r` rewind to before it, `e` edit its prompt and run it again, `u` undo the last rewind',
    },
    {
      name = 'rewind',
      usage = { '[turn]', 'undo' },
      help = 'files and conversation back to before turn [turn] (the last one without a number); `undo` puts back what the last rewind replaced',
      args = { { words = { 'undo' } } },
    },
    {
      name = 'deps',
      usage = { '' },
      help = 'make or upgrade the private venv of the Python dependencies (`uv`, else `python3 -m venv` and pip), which the Python host then starts from; needs no Python package',
      lua = { 'acp_nvim.host.deps', 'run' },
    },
    {
      name = 'agents',
      usage = { '' },
      help = 'pick an agent of the ACP registry (name, description, version, installed or not, distribution kind); picking one installs it',
      lua = { 'acp_nvim.presets.registry', 'pick' },
    },
    {
      name = 'install',
      usage = { '{id}' },
      help = "install agent {id} of the ACP registry under `stdpath('data')`; `:Ai new {id}` then starts it, no setup() line needed",
      args = { { sources = { 'registry' } } },
      lua = { 'acp_nvim.presets.registry', 'install' },
    },
    {
      name = 'update',
      usage = { '[id]' },
      help = "update the installed agents (or [id]) to the registry's version",
      args = { { sources = { 'installed' } } },
      lua = { 'acp_nvim.presets.registry', 'update' },
    },
    {
      name = 'uninstall',
      usage = { '{id}' },
      help = 'remove agent {id} installed from the registry',
      args = { { sources = { 'installed' } } },
      lua = { 'acp_nvim.presets.registry', 'uninstall' },
    },
    {
      name = 'log',
      usage = { '[session]', 'level [{level}]', 'export {file}' },
      help = "the session's protocol log buffer; show or set its level; export it (replayable)",
      args = {
        {
          words = { 'export', 'level' },
          sources = { 'sessions' },
          after = {
            level = { { words = { 'trace', 'debug', 'info', 'warn', 'error' } } },
            export = { { sources = { 'files' } } },
          },
        },
      },
    },
  },
}
