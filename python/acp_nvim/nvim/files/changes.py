"""``:Ai changes``: hand the latest turn's changeset to the Lua list (acp_nvim.review.changes), and
``:Ai changes revert {file}`` (``X`` in the list): put a file back as it was before the turn.

A revert goes through the file side like an agent's write (the opener: confined, atomic; a
loaded buffer takes the text as one undo step and is saved). Over unsaved changes it refuses
and says so; asked again for the same unsaved text (a second ``X``) it reverts: nothing is
lost (a revert is one ``u`` away in the buffer), and no modal question blocks typing.
"""

from __future__ import annotations

import os

from acp import RequestError

from ...core.errors import AcpNvimError
from ...core.files.changes import FileChange
from ...core.session.session import Session
from ..commands.command_context import CommandContext, CommandRequest

REVERT = "revert"


def cmd_changes(ctx: CommandContext, request: CommandRequest) -> None:
    """Open the list of files changed in the current session's latest turn that changed any."""
    session = ctx.require_current()
    if request.args[:1] == [REVERT]:
        name = request.text.strip()[len(REVERT):].strip()
        if not name:
            raise AcpNvimError("usage: :Ai changes revert {file}")
        entry = _entry(session, os.path.join(request.cwd or session.cwd, os.path.expanduser(name)))
        ctx.spawn(revert(ctx, session, entry), f"revert of {entry.path}")
        return
    changeset = session.files.changes.latest()
    if changeset is None:
        raise AcpNvimError(f"{session.key}: the agent has not changed any file in its recent turns")
    entries = [{"path": c.path, "before": c.before, "known": c.known, "via": c.via}
               for c in changeset.files.values()]
    ctx.nvim.exec_lua("require('acp_nvim.review.changes').open(...)", session.key, changeset.turn, entries)


def _entry(session: Session, path: str) -> FileChange:
    changeset = session.files.changes.latest()
    wanted = os.path.realpath(path)
    entry = next((c for c in changeset.files.values() if os.path.realpath(c.path) == wanted), None) \
        if changeset is not None else None
    if entry is None:
        raise AcpNvimError(f"{path}: the agent did not change it in its latest turn that changed files")
    if not entry.known:
        raise AcpNvimError(f"{entry.path}: cannot revert, the content before the turn is unknown")
    return entry


async def revert(ctx: CommandContext, session: Session, entry: FileChange) -> None:
    """Put ``entry``'s file back; over unsaved changes only when asked twice for the same text."""
    label = session.transcript.paths.show(entry.path)
    armed = (session.key, entry.path)
    try:
        state = await ctx.editor.read_buffer(entry.path)
        force = state is not None and state.modified and _ARMED.pop(armed, None) == state.tick
        outcome = await session.files.revert(entry.path, entry.before, force=force)
    except RequestError as exc:
        ctx.notify(f"{label}: not reverted: {exc}", "error")
        return
    if outcome == "unsaved":
        if entry.before is None:
            ctx.notify(f"{label}: not deleted: it has unsaved changes (nothing was changed)", "warn")
            return
        if state is not None:
            if len(_ARMED) > 256:
                _ARMED.clear()
            _ARMED[armed] = state.tick
        ctx.notify(f"{label}: not reverted: it has unsaved changes (nothing was changed). Press X again (or run "
                   "the command again) to revert it anyway; u in its buffer then brings your text back.", "warn")
        return
    if outcome == "removed":
        await ctx.editor.drop_buffer(entry.path)
    ctx.notify(f"reverted {label}" + (" (deleted: the agent created it)" if outcome == "removed" else ""))
    ctx.bridge.lua_async("require('acp_nvim.review.changes').refresh()")


_ARMED: dict[tuple[str, str], int] = {}
"""(session, file) → the buffer's changedtick when a revert was refused over its unsaved changes:
asking again for that same text reverts it (a second ``X``; no modal question blocks typing)."""
