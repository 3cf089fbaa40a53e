"""``worktrees`` in ``setup()``: where a session's worktree is made and how its branch is named."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class WorktreeSettings(BaseModel):
    """Where ``:Ai new {agent} --worktree`` puts the worktree and names its branch."""

    model_config = ConfigDict(extra="forbid")

    folder: str = Field(default=".git/acp-worktrees", min_length=1, description=(
        "The folder of the worktrees: `.git/…` is inside the repository's git folder (the checkout never "
        "lists them as untracked files), another relative path is taken from the checkout's top, `~` is "
        "expanded (|acp_nvim-worktrees|)."))
    branch_prefix: str = Field(default="acp/", description=(
        "Put before the worktree's name to name its branch (`acp/claude-1`)."))
