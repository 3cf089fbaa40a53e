"""The write gate's tables: which files configure code execution, which files a request showed."""

from __future__ import annotations

from pathlib import Path

from acp.helpers import tool_diff_content
from acp.schema import ToolCallUpdate

from acp_nvim.core.permissions.approvals import Shown
from acp_nvim.core.permissions.exec_files import configures_execution
from acp_nvim.core.permissions.write_gate import shown_paths
from acp_nvim.core.transcript.tool_calls import ToolCallState


def test_files_that_configure_code_execution(tmp_path):
    roots = [tmp_path]
    for name in (".git/config", ".git/hooks/pre-commit", "sub/.envrc", ".nvim.lua", "a/.exrc", ".vscode/tasks.json",
                 ".idea/workspace.xml"):
        assert configures_execution(tmp_path / name, roots), name
    for name in ("main.py", "git/config", ".gitignore", "docs/.envrc.md", "vscode/tasks.json"):
        assert not configures_execution(tmp_path / name, roots), name
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n")
    assert not configures_execution(script, roots)
    script.chmod(0o744)
    assert configures_execution(script, roots)


def test_the_workspace_root_itself_may_lie_below_a_dot_folder(tmp_path):
    root = tmp_path / ".git" / "ws"  # only the folders below the root count
    assert not configures_execution(root / "main.py", [root])


def test_shown_paths_are_the_diffs_the_raw_input_edits_and_the_locations(tmp_path):
    state = ToolCallState("t1", kind="edit", title="Edit")
    state.raw_input = {"file_path": "b.txt", "old_string": "x", "new_string": "y"}
    state.locations = [(str(tmp_path / "c.txt"), None)]
    state.merge(ToolCallUpdate(tool_call_id="t1", content=[tool_diff_content("sub/../a.txt", "new\n", "old\n")]))
    paths = shown_paths(Shown.of(state), str(tmp_path))
    assert paths == [str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), str(Path(tmp_path / "c.txt"))]


def test_a_request_without_files_shows_none(tmp_path):
    assert shown_paths(Shown.of(ToolCallState("t1", kind="think", title="Think")), str(tmp_path)) == []


def test_a_dot_git_file_and_the_git_folder_it_names_configure_execution(tmp_path):
    roots = [tmp_path]
    (tmp_path / ".git").write_text("gitdir: meta\n")
    (tmp_path / "meta").mkdir()
    assert configures_execution(tmp_path / ".git", roots)
    assert configures_execution(tmp_path / "meta" / "config", roots)
    assert configures_execution(tmp_path / "meta" / "hooks" / "post-checkout", roots)
    assert not configures_execution(tmp_path / "metal" / "config", roots)
    shaped = tmp_path / "lib"
    (shaped / "objects").mkdir(parents=True)
    (shaped / "HEAD").write_text("ref: refs/heads/main\n")
    assert configures_execution(shaped / "config", roots)
    assert not configures_execution(tmp_path / "src" / "main.py", roots)
