"""``:Ai changes``: hand the latest turn's changeset to the Lua list (acp_nvim.changes)."""

from __future__ import annotations

from ..core.errors import AcpNvimError
from .command_context import CommandContext, CommandRequest


def cmd_changes(ctx: CommandContext, request: CommandRequest) -> None:
    """Open the list of files changed in the current session's latest turn that changed any."""
    session = ctx.require_current()
    changeset = session.files.changes.latest()
    if changeset is None:
        raise AcpNvimError(f"{session.key}: the agent has not changed any file in its recent turns")
    entries = [{"path": c.path, "before": c.before, "known": c.known, "via": c.via}
               for c in changeset.files.values()]
    ctx.nvim.exec_lua("require('acp_nvim.changes').open(...)", session.key, changeset.turn, entries)
