"""Warm starts with the real agents (|acp_nvim-warm|): started while Neovim is idle, the warm agent serves
the first ``:Ai send`` (no other agent process starts, the session is the one it opened ahead of time
where the agent offers ``session/close``), and after quitting Neovim no process of the agent is left."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .agents import NAMES, prepare, unavailable
from .driver import CAPTURE_NOTIFY, AgentDriver
from .model_server import ModelServer

pytestmark = [pytest.mark.real_agent, pytest.mark.timeout(240)]

PROMPT = "[scenario=text] say something"


def with_ancestors(pids: set[int]) -> set[int]:
    """``pids`` and every process above them: a boxed agent's spawned pid is its ``bwrap``'s."""
    found = set(pids)
    for pid in pids:
        while pid > 1:
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                break
            pid = int(stat[stat.rindex(")") + 2:].split()[1])
            found.add(pid)
    return found


@pytest.mark.parametrize("name", [n for n in NAMES if n != "codex_legacy"])
def test_the_warm_agent_serves_the_first_prompt(name: str, nvim, workspace: Path, model_server: ModelServer,
                                                agent_home: Path, tmp_path: Path) -> None:
    reason = unavailable(name)
    if reason:
        pytest.skip(f"real agent {name!r} unavailable: {reason}")
    setup = prepare(name, model_server.url, agent_home)
    setup.extra = {"warm": "default"}
    agent = AgentDriver(nvim, setup, model_server, workspace)
    with agent.step("warm: started while Neovim is idle"):
        nvim.exec_lua(CAPTURE_NOTIFY)
        nvim.exec_lua(setup.setup_lua(), json.dumps(setup.env), json.dumps(setup.extra))
        nvim.exec_lua("require('acp_nvim.host.idle').prestart()")
        agent.wait(lambda: nvim.exec_lua("return require('acp_nvim.host.idle').warm[...]", name) == "ready",
                   "the warm agent to be ready", 90)
        warm = set(agent.processes())
        agent.check(bool(warm), "no process of the agent runs")
    with agent.step("warm: the first prompt is served by it"):
        agent.wait_turn_end(agent.send(PROMPT), 90)
        entries = agent.log_entries(tmp_path / "warm-log.jsonl")
        spawned = [e["summary"] for e in entries if (e.get("summary") or "").startswith("spawned pid ")]
        agent.check(len(spawned) == 1 and int(spawned[0].split()[2].rstrip(":")) in with_ancestors(warm),
                    f"the session's agent processes: {spawned}; the warm ones: {warm}")
        took = [e["summary"] for e in entries if "took the warm agent" in (e.get("summary") or "")]
        agent.check(len(took) == 1, f"the session's log says {took}")
        opened = [e for e in entries if e.get("method") == "session/new" and e.get("direction") == "out"]
        agent.check(len(opened) == 1, f"{len(opened)} session/new requests")
    with agent.step("warm: nothing is left after quitting"):
        nvim.command("silent! doautocmd VimLeavePre")
        agent.wait(lambda: not agent.processes(), "every process of the agent to exit", 30)
