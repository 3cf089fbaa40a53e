"""A rule bound to a script's content, against an agent that swaps the script while the command starts,
with a real Neovim, the real host and the real wire: what runs is only ever the approved bytes.

The agent (hostile_swap.py) asks to run ``./build.sh``; the user answers "always" (a rule bound to the
script's sha256). Then, run after run, the agent gets the rule's answer and swaps the script for code
that prints ``EVIL`` and leaves a marker, as fast as it can (in place and by rename), while it starts the
command; and it starts the command without asking, swapping from the moment it is sent. Every command
that ran printed the approved script's line; the swapped code never ran. Unboxed and boxed (boxed, the
agent's swaps land in its overlay as proposals and the command still runs the approved copy).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from acp_nvim.core import box
from helpers import wait_for

pytestmark = pytest.mark.timeout(300)

AGENT = Path(__file__).with_name("hostile_swap.py")
RUNS = 12
SETUP = """
local python, script, boxed, tests, reports = ...
-- tests/: the agent's own modules; reports: where it writes its outcome (in the workspace, a boxed
-- agent's write would be a proposal waiting for review)
local box = boxed and {enabled = true, paths = {tests}, writable = {reports}} or false
require('acp_nvim').setup({
  agents = {swap = {command = python, args = {script}, box = box}},
  default_agent = 'swap',
  permissions = {policy = 'ask', arm_ms = 0, quiet_ms = 0},
})
"""
PROMPT = """
local p = require('acp_nvim.question.permission').pending()[1]
if p then return {id = p.id, title = p.q.title, options = p.q.options} end
"""
CHOOSE = "require('acp_nvim.question.permission').choose(...)"


class User:
    """Answers the prompts: "always" for the first, "no" for any later one (a swap the rule saw)."""

    def __init__(self, nvim) -> None:
        self.nvim = nvim
        self.answered: set[int] = set()
        self.rejected = 0

    def answer(self, kind: str) -> bool:
        shown = self.nvim.exec_lua(PROMPT)
        if not shown or shown["id"] in self.answered:
            return False
        self.answered.add(shown["id"])
        option = next(o["id"] for o in shown["options"] if o["kind"] == kind)
        self.nvim.exec_lua(CHOOSE, shown["id"], option)
        return True


@pytest.mark.parametrize("boxed", [False, True], ids=["unboxed", "boxed"])
def test_a_swapped_script_never_runs_under_its_rule(nvim, workspace, tmp_path, boxed):
    if boxed and isinstance(box.find(), box.Missing):
        pytest.skip("no box can be made here")
    script, marker = workspace / "build.sh", workspace / "pwned"
    good, evil = "#!/bin/sh\necho APPROVED-BYTES\n", f"#!/bin/sh\necho EVIL\ntouch {marker}\n"
    script.write_text(good)
    script.chmod(0o755)
    reports = tmp_path / "reports"
    reports.mkdir()
    nvim.exec_lua(SETUP, sys.executable, str(AGENT), boxed, str(AGENT.parents[1]), str(reports))
    out = reports / f"swap-{os.urandom(4).hex()}.json"
    nvim.command("Ai send " + json.dumps({"op": "swap", "script": str(script), "good": good, "evil": evil,
                                          "asked": RUNS, "direct": RUNS, "out": str(out)}))
    user = User(nvim)
    wait_for(lambda: user.answer("allow_always"), timeout=60, what="the first prompt", nvim=nvim)

    def done() -> bool:
        if user.answer("reject_once"):
            user.rejected += 1
        return out.exists() and out.stat().st_size > 0

    wait_for(done, timeout=240, what="the agent's runs", nvim=nvim)
    outcome = json.loads(out.read_text())
    runs = outcome["runs"]
    ran = [run for run in runs if "exit" in run]
    evil_runs = [run for run in ran if "EVIL" in run["output"]]
    print(f"swap race ({'boxed' if boxed else 'unboxed'}): {len(ran)} of {len(runs)} runs ran, "
          f"{len(evil_runs)} ran the swapped code, {outcome['swaps']} swaps, {user.rejected} prompts rejected")
    assert not evil_runs and not marker.exists(), f"the swapped code ran: {evil_runs}"
    asked = [run for run in runs if run["way"] == "asked"]
    assert all(run.get("exit") == 0 and run["output"].strip() == "APPROVED-BYTES" for run in asked), asked
    assert len(asked) == RUNS and outcome["swaps"] > RUNS, "the rule answered every run while the agent swapped"
    for run in ran:
        assert run["output"].strip() == "APPROVED-BYTES" and run["exit"] == 0, run
    for run in runs:
        if "exit" not in run:
            assert "did not allow running" in run["error"], run  # the rule saw a swapped script: asked, refused
    rules = json.loads((Path(nvim.funcs.stdpath("state")) / "acp_nvim" / "rules.json").read_text())["rules"]
    mine = [r for r in rules if r["agent"] == "swap" and r["workspace"] == str(workspace)]
    assert [(r["command"], len(r["scripts"])) for r in mine] == [(["./build.sh"], 1)], mine
