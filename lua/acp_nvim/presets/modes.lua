-- Generated from the mode table of python/acp_nvim/core/connection/mode_policy.py by `make docs` (scripts/gen_docs.py): do not edit.
--- The mode each preset selects under each permission policy (acp_nvim.presets).
return {
  claude = { ask = 'default', ['auto-edit'] = 'acceptEdits', trust = 'bypassPermissions' },
  codex = { ask = 'read-only', ['auto-edit'] = 'workspace-write', trust = 'agent-full-access' },
  gemini = { ask = 'default', ['auto-edit'] = 'autoEdit', trust = 'yolo' },
}
