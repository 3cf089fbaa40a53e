"""A git worktree per session (|acp_nvim-worktrees|), in a real Neovim against the demo agent and real
git: the session's edits land only in its worktree, the board shows its branch, ``:Ai worktree diff``
shows them, ``:Ai worktree merge`` brings them into the checkout through a review; bad input (no
repository, a name that is taken, a removal that would lose changes) is refused with nothing lost."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from helpers import NOTIFY, SELECT, answer_keys, buffer_text, notes, session_state, wait_for, wait_idle

pytestmark = pytest.mark.timeout(120)

EDIT_MARK = " edited by demo"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin", "HOME": str(cwd)}).stdout


@pytest.fixture
def repo(nvim, workspace: Path) -> Path:
    git(workspace, "init", "-q", "-b", "main")
    (workspace / "sample.txt").write_text("".join(f"line {i}\n" for i in range(1, 9)))
    (workspace / "gone.txt").write_text("to be deleted\n")
    git(workspace, "add", ".")
    git(workspace, "commit", "-q", "-m", "start")
    nvim.exec_lua(NOTIFY + SELECT)
    return workspace


def wait_note(nvim, text: str, timeout: float = 30) -> str:
    return wait_for(lambda: next((n for n in notes(nvim) if text in n), None), timeout=timeout, what=repr(text))


def review_title(nvim) -> str:
    return nvim.exec_lua("local r = require('acp_nvim.review').pending()[1]; "
                         "return r and r.state == 'open' and r.spec.title or ''")


def test_edits_land_in_the_worktree_and_merge_through_a_review(nvim, repo: Path):
    nvim.command("Ai new demo --worktree feature")
    tree = repo / ".git" / "acp-worktrees" / "feature"
    wait_note(nvim, f"demo/1 works in {tree} on branch acp/feature")
    wait_idle(nvim)
    assert git(tree, "rev-parse", "--abbrev-ref", "HEAD").strip() == "acp/feature"
    assert git(repo, "status", "--porcelain") == ""  # the checkout does not see the worktree

    nvim.command(f"Ai send edit {tree / 'sample.txt'}")
    wait_for(lambda: review_title(nvim), timeout=20, what="the agent's review")
    answer_keys(nvim, "ga")
    wait_for(lambda: session_state(nvim).get("turns") == 1, timeout=30, what="the turn's end")
    (tree / "gone.txt").unlink()
    (tree / "new.txt").write_text("a new file\n")
    assert EDIT_MARK in (tree / "sample.txt").read_text()
    assert EDIT_MARK not in (repo / "sample.txt").read_text()  # only in the worktree

    nvim.command("tabfirst")
    nvim.command("Ai board")
    wait_for(lambda: "⎇ acp/feature" in buffer_text(nvim, "acp://board"), timeout=10, what="the branch on the board")

    nvim.command("Ai worktree diff")
    diff = wait_for(lambda: buffer_text(nvim, "acp://worktree/feature/diff"), timeout=20, what="the diff")
    assert f"+line 1{EDIT_MARK}" in diff and "+a new file" in diff and "-to be deleted" in diff

    nvim.command("Ai worktree merge")
    title = wait_for(lambda: review_title(nvim), timeout=20, what="the merge review")
    assert title == f"merge acp/feature into {repo}: 3 file(s)"
    answer_keys(nvim, "gA")  # every file accepted
    wait_note(nvim, "merged 3 file(s) of acp/feature into the checkout (not committed)")
    assert EDIT_MARK in (repo / "sample.txt").read_text()
    assert (repo / "new.txt").read_text() == "a new file\n"
    assert not (repo / "gone.txt").exists()
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"  # nothing committed
    assert sorted(git(repo, "status", "--porcelain").splitlines()) == [" D gone.txt", " M sample.txt", "?? new.txt"]


def test_a_rejected_merge_writes_nothing(nvim, repo: Path):
    nvim.command("Ai new demo --worktree solo")
    tree = repo / ".git" / "acp-worktrees" / "solo"
    wait_idle(nvim)
    (tree / "sample.txt").write_text("changed in the worktree\n")
    nvim.command("Ai worktree merge solo")
    wait_for(lambda: review_title(nvim), timeout=20, what="the merge review")
    answer_keys(nvim, "gR")
    wait_note(nvim, "merged 0 file(s) of acp/solo into the checkout (not committed); 1 rejected")
    assert (repo / "sample.txt").read_text().startswith("line 1\n")


def test_outside_a_repository_nothing_starts(nvim, workspace: Path):
    nvim.exec_lua(NOTIFY)
    nvim.command("Ai new demo --worktree")
    wait_note(nvim, "is not in a git repository: a worktree needs one")
    assert nvim.exec_lua("return vim.tbl_count(require('acp_nvim.state').sessions)") == 0


def test_a_taken_name_or_a_bad_one_is_refused(nvim, repo: Path):
    nvim.command("Ai new demo --worktree twice")
    wait_idle(nvim)
    nvim.command("Ai new demo --worktree twice")
    wait_note(nvim, "a worktree named twice exists already")
    nvim.command("Ai new demo --worktree ../evil")
    wait_note(nvim, "'../evil' cannot name a worktree")
    assert git(repo, "worktree", "list").count("acp-worktrees") == 1
    assert nvim.exec_lua("return vim.tbl_keys(require('acp_nvim.state').sessions)") == ["demo/1"]


def test_remove_refuses_to_lose_changes_unless_confirmed(nvim, repo: Path):
    nvim.command("Ai new demo --worktree w1")
    tree = repo / ".git" / "acp-worktrees" / "w1"
    wait_idle(nvim)
    nvim.command("Ai worktree remove w1")
    wait_note(nvim, "demo/1 works in w1: close it first")
    nvim.command("Ai close")
    wait_for(lambda: not nvim.exec_lua("return require('acp_nvim.state').sessions['demo/1']"), timeout=20,
             what="the session closed")
    assert tree.is_dir()  # closing the session never deletes its worktree

    (tree / "sample.txt").write_text("unsaved work\n")
    (tree / "notes.txt").write_text("mine\n")
    nvim.exec_lua("_G.choose = { 'keep it' }")
    nvim.command("Ai worktree remove w1")
    wait_note(nvim, "w1 kept: it has uncommitted changes (M sample.txt, ?? notes.txt)")
    assert (tree / "sample.txt").read_text() == "unsaved work\n" and (tree / "notes.txt").exists()

    nvim.exec_lua("_G.choose = { 'remove it' }")
    nvim.command("Ai worktree remove w1")
    wait_note(nvim, "removed the worktree w1; its branch acp/w1 stays")
    assert not tree.exists()
    assert "acp/w1" in git(repo, "branch", "--list", "acp/w1")


def test_a_file_both_changed_is_merged_three_ways_and_its_conflict_marked(nvim, repo: Path):
    nvim.command("Ai new demo --worktree both")
    tree = repo / ".git" / "acp-worktrees" / "both"
    wait_idle(nvim)
    (tree / "sample.txt").write_text((tree / "sample.txt").read_text().replace("line 1\n", "line one (worktree)\n")
                                     .replace("line 8\n", "line 8, tail from the worktree\n"))
    (repo / "sample.txt").write_text((repo / "sample.txt").read_text().replace("line 1\n", "line one (mine)\n"))
    nvim.command("Ai worktree merge both")
    title = wait_for(lambda: review_title(nvim), timeout=20, what="the merge review")
    assert title.endswith(": 1 file(s), 1 with conflicts")
    proposal = nvim.exec_lua("local r = require('acp_nvim.review').pending()[1]; "
                             "return vim.api.nvim_buf_get_lines(r.files[1].prop, 0, -1, false)")
    assert proposal[0] == "<<<<<<< checkout: sample.txt" and "line one (mine)" in proposal
    assert "line one (worktree)" in proposal and proposal[-1] == "line 8, tail from the worktree"
    answer_keys(nvim, "gR")
    wait_note(nvim, "1 rejected")
    assert (repo / "sample.txt").read_text().startswith("line one (mine)\n")  # nothing lost
