"""The box (core/box, bubblewrap) against a hostile agent, with a real Neovim, the real host and the
real wire: the agent process and the commands it runs see the workspace and the system, and nothing
else of the user's.

The agent (hostile_box.py) reads a private key in its HOME, the editor's environment through
``/proc/<nvim pid>/environ``, a folder beside the workspace and, through a workspace symlink, a secret
outside; then runs ``cat``/``ls`` of the same through ``terminal/*``. Boxed, no secret byte reaches
it. The same probe with ``box = false`` finds every one of them: the test sees a leak when there is one.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from acp_nvim.core import box
from helpers import wait_for

pytestmark = [pytest.mark.timeout(300),
              pytest.mark.skipif(isinstance(box.find(), box.Missing), reason="no box can be made here")]

AGENT = Path(__file__).with_name("hostile_box.py")
MARK = "BOXSECRET"
SETUP = """
local python, script, home, boxed, tests = ...
local box = boxed and {enabled = true, paths = {tests}} or false -- tests/: the agent's own modules
require('acp_nvim').setup({
  agents = {box = {command = python, args = {script}, env = {HOME = home}, box = box}},
  default_agent = 'box',
  permissions = {policy = 'trust'},
})
"""


class Secrets:
    """What the agent must not find: each path and where it lies."""

    def __init__(self, tmp: Path, workspace: Path, nvim_pid: int) -> None:
        self.home = tmp / "home"
        (self.home / ".ssh").mkdir(parents=True)
        self.key = self.home / ".ssh" / "id_ed25519"
        self.key.write_text(f"-----BEGIN OPENSSH PRIVATE KEY----- {MARK} key\n")
        self.sibling = tmp / "other-project"
        self.sibling.mkdir()
        (self.sibling / "notes.txt").write_text(f"{MARK} other project\n")
        outside = tmp / "outside.txt"
        outside.write_text(f"{MARK} outside\n")
        self.link = workspace / "docs-link.txt"
        self.link.symlink_to(outside)
        self.environ = f"/proc/{nvim_pid}/environ"
        (workspace / "readme.txt").write_text("hello from the workspace\n")
        self.workspace = workspace

    def request(self, out: Path) -> dict:
        files = [str(self.key), self.environ, str(self.sibling / "notes.txt"), str(self.link)]
        script = " ; ".join(f"cat {path}" for path in files) + f" ; ls {self.sibling} ; cat readme.txt"
        return {"op": "probe", "read": [*files, str(self.workspace / "readme.txt")], "list": [str(self.sibling)],
                "terminals": [{"command": "sh", "args": ["-c", script]}], "out": str(out)}


def probe(nvim, tmp_path: Path, workspace: Path, boxed: bool) -> tuple[Secrets, dict]:
    secrets = Secrets(tmp_path, workspace, nvim.funcs.getpid())
    nvim.exec_lua(SETUP, sys.executable, str(AGENT), str(secrets.home), boxed, str(AGENT.parents[1]))
    out = workspace / f"probe-{os.urandom(4).hex()}.json"  # where the boxed agent can write
    nvim.command("Ai send " + json.dumps(secrets.request(out)))
    wait_for(lambda: out.exists() and out.stat().st_size > 0, timeout=120, what="the agent's probe", nvim=nvim)
    return secrets, json.loads(out.read_text())


def test_a_boxed_agent_and_its_commands_find_no_secret(nvim, workspace, tmp_path):
    secrets, found = probe(nvim, tmp_path, workspace, boxed=True)
    assert MARK not in json.dumps(found), found
    assert found["read"][str(workspace / "readme.txt")] == "hello from the workspace\n", "the workspace is shown"
    assert found["read"][secrets.environ].startswith("ERR"), "no /proc of the editor"
    assert "XDG_CONFIG_HOME" not in json.dumps(found), "nothing of the editor's environment"
    [terminal] = found["terminals"]
    assert "hello from the workspace" in terminal["output"], terminal


def test_without_the_box_the_same_probe_finds_every_secret(nvim, workspace, tmp_path):
    secrets, found = probe(nvim, tmp_path, workspace, boxed=False)
    for path in [str(secrets.key), str(secrets.sibling / "notes.txt"), str(secrets.link)]:
        assert MARK in found["read"][path], path
    assert "XDG_CONFIG_HOME" in found["read"][secrets.environ]
    assert MARK in found["terminals"][0]["output"]
    assert wait_for(lambda: "runs without a box (box = false)" in "\n".join(nvim.funcs.getbufline(
        nvim.exec_lua("return vim.fn.bufnr('acp://chat/box/1')"), 1, "$")), what="the session's start line", nvim=nvim)
