"""Warm starts (|acp_nvim-warm|) in a real Neovim with demo agents that keep their sessions on disk: the
warm process serves the first prompt (the same PID, no new process), a new one starts only when Neovim
is idle again, and after ``:qa!`` no warm process is left, nor its unused session in the agent's list."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path

import pynvim
import pytest

from acp_nvim.core.config import parse_settings
from acp_nvim.core.connection.past import listed_by
from conftest import ROOT, start_nvim
from helpers import NOTIFY, buffer_text, chat, wait_for, wait_idle

pytestmark = pytest.mark.timeout(120)

SETUP = """
local dir, pythonpath, warm = ...
require('acp_nvim').setup({ default_agent = 'saved', warm = warm, agents = { saved = {
  command = vim.g.python3_host_prog, args = { '-m', 'acp_nvim.demo_agent' },
  env = { ACP_DEMO_SESSIONS_DIR = dir, PYTHONPATH = pythonpath } } } })
"""


def agent_pids(nvim_pid: int) -> set[int]:
    """The demo agents running under this Neovim (its Python host's children)."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            if b"acp_nvim.demo_agent" in Path(f"/proc/{entry}/cmdline").read_bytes() \
                    and nvim_pid in _ancestors(int(entry)):
                found.add(int(entry))
    return found


def _ancestors(pid: int) -> list[int]:
    chain = []
    while pid > 1:
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError):
            break
        chain.append(pid)
    return chain


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def saved_ids(folder: Path) -> list[str]:
    """The agent's own list of its sessions of ``folder``'s workspace (``session/list``, a fresh demo agent)."""
    spec = parse_settings({"agents": {"saved": {
        "command": sys.executable, "args": ["-m", "acp_nvim.demo_agent"],
        "env": {"ACP_DEMO_SESSIONS_DIR": str(folder / "agent-sessions"), "PYTHONPATH": str(ROOT / "python")}}}})
    listed = asyncio.run(listed_by("saved", spec.agents["saved"], str(folder / "workspace"), None, spec))
    return [info.session_id for info in listed]


@pytest.fixture
def warm_nvim(nvim_env: dict[str, str], tmp_path: Path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    nvim = start_nvim(workspace, cold=True)  # counts agent processes under Neovim
    nvim.exec_lua(NOTIFY)
    nvim.exec_lua(SETUP, str(tmp_path / "agent-sessions"), str(ROOT / "python"), "default")
    try:
        yield nvim, tmp_path
    finally:
        with contextlib.suppress(Exception):
            nvim.command("silent! doautocmd VimLeavePre")
            nvim.close()


def quit_all(nvim: pynvim.Nvim) -> None:
    with contextlib.suppress(Exception):
        nvim.command("qa!")
    with contextlib.suppress(Exception):
        nvim.close()


def test_the_warm_agent_serves_the_first_prompt_and_nothing_is_left_after_quitting(warm_nvim):
    nvim, folder = warm_nvim
    pid = nvim.funcs.getpid()
    nvim.exec_lua("require('acp_nvim.host.idle').prestart()")  # what the first UI's idle moment runs
    warm = wait_for(lambda: agent_pids(pid), timeout=30, what="the warm agent")
    assert len(warm) == 1
    warm_pid = next(iter(warm))
    wait_for(lambda: nvim.exec_lua("return require('acp_nvim.host.idle').warm.saved") == "ready", timeout=30,
             what="the warm agent ready")
    assert len(saved_ids(folder)) == 1  # its session, opened ahead of time
    nvim.command("Ai board")
    wait_for(lambda: "warm: saved (ready)" in buffer_text(nvim, "acp://board").split("\n")[0], timeout=10,
             what="the board's header naming the warm agent")

    nvim.command("wincmd p")
    nvim.command("Ai send hello warm")
    wait_for(lambda: "You said: hello warm" in chat(nvim, "saved/1"), timeout=30, what="the reply")
    wait_idle(nvim, "saved/1")
    assert agent_pids(pid) == {warm_pid}  # no new process: the warm one answered
    nvim.command("Ai log saved/1")
    log = wait_for(lambda: buffer_text(nvim, "acp://log/saved/1"), timeout=10, what="the log")
    assert f"took the warm agent (pid {warm_pid}" in log and f"spawned pid {warm_pid}" in log

    nvim.command("doautocmd CursorHold")  # idle again: the taken agent is replaced
    replaced = wait_for(lambda: agent_pids(pid) - {warm_pid}, timeout=30, what="the replacement")
    wait_for(lambda: len(saved_ids(folder)) == 2, timeout=30, what="the replacement's warm session")
    used = [i for i in saved_ids(folder)]

    quit_all(nvim)
    wait_for(lambda: not any(alive(p) for p in {warm_pid, *replaced}), timeout=20, what="every agent gone")
    left = saved_ids(folder)
    assert len(left) == 1 and left[0] in used  # the used session stays, the unused warm one was closed


def test_without_warm_nothing_starts_ahead(nvim_env: dict[str, str], tmp_path: Path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    nvim = start_nvim(workspace, cold=True)  # counts agent processes under Neovim
    try:
        nvim.exec_lua(SETUP, str(tmp_path / "agent-sessions"), str(ROOT / "python"), False)
        nvim.exec_lua("require('acp_nvim.host.idle').prestart()")
        wait_for(lambda: nvim.exec_lua("return require('acp_nvim.host').channel ~= nil"), timeout=10, what="the host")
        nvim.command("Ai new")
        wait_idle(nvim, "saved/1")
        assert len(agent_pids(nvim.funcs.getpid())) == 1  # the session's own, no warm one beside it
    finally:
        quit_all(nvim)
