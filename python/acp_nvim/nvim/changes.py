"""``:Ai changes``: hand the latest turn's changeset to the Lua list (acp_nvim.changes)."""

from __future__ import annotations

import pynvim

from ..core.errors import AcpNvimError
from ..core.session.session import Session


def show_changes(nvim: pynvim.Nvim, session: Session) -> None:
    """Open the list of files changed in the session's latest turn that changed any."""
    changeset = session.files.changes.latest()
    if changeset is None:
        raise AcpNvimError(f"{session.key}: the agent has not changed any file in its recent turns")
    entries = [{"path": c.path, "before": c.before, "known": c.known, "via": c.via}
               for c in changeset.files.values()]
    nvim.exec_lua("require('acp_nvim.changes').open(...)", session.key, changeset.turn, entries)
