"""The chat's keys on a "⚠ not reviewed" flag (core/permissions/unreviewed.py): ``keymaps.revert`` reverts the
file as ``:Ai changes``' ``X`` does, the ``open`` key shows its diff against the turn's start."""

from __future__ import annotations

from typing import Any

from ...core.files.changes import FileChange
from ...core.session.session import Session
from ..commands.command_context import CommandContext

REVERT_LUA = """
local entry = ...
if entry.before == vim.NIL then entry.before = nil end
return require('acp_nvim.review.changes').revert(entry)
"""
DIFF_LUA = """
local entry = ...
if entry.before == vim.NIL then entry.before = nil end
require('acp_nvim.review.changes').diff(entry)
"""


def revert_flagged(ctx: CommandContext, session: Session, block_id: int) -> None:
    """Put the flagged file back as it was before the turn (one undo step, saved)."""
    change = session.unreviewed.flags.get(block_id)
    if change is None:
        ctx.notify(f"{session.key}: nothing to revert here: the revert key acts on a '⚠ not reviewed' line of "
                   "the chat")
        return
    if ctx.nvim.exec_lua(REVERT_LUA, _entry(change)):
        session.unreviewed.reverted(block_id)


def diff_flagged(ctx: CommandContext, session: Session, block_id: int) -> bool:
    """Show the flagged file's diff (before the turn | now); False when the block is no flag."""
    change = session.unreviewed.flags.get(block_id)
    if change is None:
        return False
    ctx.nvim.exec_lua(DIFF_LUA, _entry(change))
    return True


def _entry(change: FileChange) -> dict[str, Any]:
    return {"path": change.path, "before": change.before, "known": change.known, "via": change.via}
