"""The box's cost (core/box, bubblewrap): what it adds to an agent's start and to a command's start.

Paired rounds (``paired.py``): each round starts the agent's program and a command bare, boxed, and
bare again (the A/A control), ``ACP_BENCH_BOX_RUNS`` times each (default 20), and keeps the median.
The agent is this checkout's Python running ``-c pass`` from its virtual environment, started the
way ``AgentProcess`` starts it (``boxing.prepare``: the box worked out, then bwrap); the command is
``/bin/true`` behind the folder check (``place.launch_argv``), with the agent's box around it as the
session puts it (``Boxing.command_prefix``). The figures are the median per-round differences.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

from paired import run_rounds
from report import line

RUNS = int(os.environ.get("ACP_BENCH_BOX_RUNS", "20"))


def _elapsed(start: object) -> float:
    began = time.perf_counter()
    start()  # type: ignore[operator]
    return (time.perf_counter() - began) * 1000


def main() -> None:
    from acp_nvim.core import box
    from acp_nvim.core.agent import boxing
    from acp_nvim.core.config import AgentSpec
    from acp_nvim.core.terminal.place import identify, launch_argv

    found = box.find()
    if isinstance(found, box.Missing):
        raise RuntimeError(f"no box can be made here: {found.reason}")
    with tempfile.TemporaryDirectory() as folder:
        spec = AgentSpec(command=sys.executable, args=["-S", "-c", "pass"])
        place = identify(folder)
        checked = launch_argv("/bin/true", (), place.path, place.identity)
        boxed_spec = AgentSpec(command=sys.executable, box={"enabled": True})
        boxed_agent = boxing.prepare("bench", boxed_spec, folder, [folder], os.environ)

        def agent(enabled: bool) -> None:
            chosen = AgentSpec(command=sys.executable, args=spec.args, box={"enabled": enabled})
            start = boxing.prepare("bench", chosen, folder, [folder], os.environ)
            subprocess.run(start.argv, env=start.env, cwd=folder, check=True)

        def command(enabled: bool) -> None:
            prefix = boxed_agent.command_prefix("/bin/true", (), place.path) if enabled else ()
            subprocess.run([*prefix, *checked], check=True)

        def measure(config: str) -> dict[str, float]:
            enabled = config == "boxed"
            return {"agent_ms": statistics.median(_elapsed(lambda: agent(enabled)) for _ in range(RUNS)),
                    "command_ms": statistics.median(_elapsed(lambda: command(enabled)) for _ in range(RUNS))}

        rounds = run_rounds("box", ["bare", "boxed", "bare_again"], measure)
    print(f"box made by {found.label}", flush=True)
    line("box_agent_bare_ms", rounds.median("bare", "agent_ms"), "ms")
    line("box_agent_start_ms", rounds.difference("agent_ms", "boxed", "bare"), "ms")
    line("box_agent_start_aa_ms", rounds.difference("agent_ms", "bare_again", "bare"), "ms")
    line("box_terminal_bare_ms", rounds.median("bare", "command_ms"), "ms")
    line("box_terminal_start_ms", rounds.difference("command_ms", "boxed", "bare"), "ms")
    line("box_terminal_start_aa_ms", rounds.difference("command_ms", "bare_again", "bare"), "ms")
