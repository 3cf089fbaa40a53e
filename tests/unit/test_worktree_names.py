"""The pure part of worktrees (core/worktrees/names.py): names, their folder, and what git prints."""

from __future__ import annotations

import pytest

from acp_nvim.core.worktrees.names import (
    Listed,
    Status,
    WorktreeError,
    check_name,
    default_name,
    folder,
    parse_list,
    parse_name_status,
    parse_status,
    summary,
)


@pytest.mark.parametrize("name", ["feature", "claude-1", "a.b_c", "X" * 64])
def test_good_names(name):
    assert check_name(name) == name


@pytest.mark.parametrize("name", ["", "../evil", "-x", ".hidden", "a/b", "a..b", "x.lock", "x.", "a b", "X" * 65,
                                  "naïve"])
def test_bad_names_are_refused_with_the_rule(name):
    with pytest.raises(WorktreeError, match="cannot name a worktree: use letters, digits"):
        check_name(name)


def test_default_names_count_past_the_taken_ones():
    assert default_name("claude", []) == "claude-1"
    assert default_name("claude", ["claude-1", "claude-2", "gemini-1"]) == "claude-3"
    assert default_name("my agent/x", []) == "my-agent-x-1"
    assert default_name("///", []) == "agent-1"


def test_the_folder_under_git_is_the_common_git_folder():
    assert folder(".git/acp-worktrees", "/repo", "/repo/.git") == "/repo/.git/acp-worktrees"
    assert folder(".git/acp-worktrees", "/repo/.git/acp-worktrees/a", "/repo/.git") == "/repo/.git/acp-worktrees"
    assert folder("../trees", "/repo", "/repo/.git") == "/trees"
    assert folder("/abs/trees", "/repo", "/repo/.git") == "/abs/trees"


def test_git_worktree_list_porcelain():
    text = ("worktree /repo\nHEAD abc\nbranch refs/heads/main\n\n"
            "worktree /repo/.git/acp-worktrees/x\nHEAD def\nbranch refs/heads/acp/x\n\n"
            "worktree /tmp/detached\nHEAD 123\ndetached\n\n")
    assert parse_list(text) == [Listed("/repo", "abc", "main"), Listed("/repo/.git/acp-worktrees/x", "def", "acp/x"),
                                Listed("/tmp/detached", "123", "")]


def test_git_status_z_with_a_rename_and_odd_names():
    raw = b" M a.py\0?? new file.txt\0R  new.py\0old.py\0?? caf\xc3\xa9\0"
    assert parse_status(raw) == [Status(" M", "a.py"), Status("??", "new file.txt"), Status("R ", "new.py"),
                                 Status("??", "café")]
    assert Status("??", "x").untracked and not Status(" M", "x").untracked


def test_git_name_status_z():
    assert parse_name_status(b"M\0a.py\0D\0gone.txt\0A\0sub/new.txt\0") == [
        ("M", "a.py"), ("D", "gone.txt"), ("A", "sub/new.txt")]


def test_summary_names_what_would_be_lost():
    entries = [Status(" M", f"f{n}") for n in range(10)]
    assert summary(entries[:2]) == "M f0, M f1"
    assert summary(entries).endswith(", … (10 in all)")
