"""acp.nvim's own git calls (|acp_nvim-worktrees|) run nothing a repository's config or hooks name.

An agent that once got a ``core.fsmonitor`` command or a hook into a repository's git folder (or
pointed a worktree's ``.git`` file at a folder of its own) would otherwise have it run by the
``git worktree add``, ``git status`` and ``git diff`` acp.nvim starts, in the user's name. Real
Neovim, real git, the demo agent; each planted command would write a marker.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from helpers import NOTIFY, SELECT, buffer_text, notes, wait_for, wait_idle

pytestmark = pytest.mark.timeout(180)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin", "HOME": str(cwd)}).stdout


def planted(folder: Path, marker: Path) -> Path:
    script = folder / "planted.sh"
    script.write_text(f"#!/bin/sh\necho \"$0 $*\" >> {marker}\nexit 0\n")
    script.chmod(0o755)
    return script


def test_a_planted_fsmonitor_and_hooks_never_run_through_acp_nvims_git(nvim, workspace: Path, tmp_path: Path):
    git(workspace, "init", "-q", "-b", "main")
    (workspace / "sample.txt").write_text("one\n")
    git(workspace, "add", ".")
    git(workspace, "commit", "-q", "-m", "start")
    marker = tmp_path / "MARKER-RAN"
    script = planted(tmp_path, marker)
    hooks = workspace / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    for hook in ("post-checkout", "reference-transaction", "post-index-change"):
        (hooks / hook).symlink_to(script)
    git(workspace, "config", "core.fsmonitor", str(script))
    nvim.exec_lua(NOTIFY + SELECT)

    nvim.command("Ai new demo --worktree w")  # git worktree add: a checkout, hooks
    tree = workspace / ".git" / "acp-worktrees" / "w"
    wait_for(lambda: next((n for n in notes(nvim) if f"works in {tree}" in n), None), what="the worktree made")
    wait_idle(nvim)
    (tree / "sample.txt").write_text("two\n")
    nvim.command("Ai worktree diff")  # git diff, ls-files: the index refreshed, fsmonitor asked
    wait_for(lambda: "+two" in buffer_text(nvim, "acp://worktree/w/diff"), what="the diff")
    nvim.command("Ai close")
    wait_for(lambda: not nvim.exec_lua("return require('acp_nvim.state').sessions['demo/1']"), what="closed")
    nvim.exec_lua("_G.choose = { 'remove it' }")
    nvim.command("Ai worktree remove w")  # git status (what removing it would lose), worktree remove
    wait_for(lambda: not tree.exists(), what="the worktree removed", nvim=nvim)
    assert not marker.exists(), marker.read_text()
