""""Needs you" and "done" notices (|acp_nvim-notify|) from a Neovim whose terminal UI runs in a pty:
while Neovim has the focus a turn's end is only a message; after ``FocusLost`` (typed as a terminal
sends it) it also goes to the terminal as OSC 9, read back from the pty."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import INIT, NVIM
from helpers import NOTIFY, notes, session_state, wait_for, wait_idle
from helpers.terminal import FOCUS_GAINED, FOCUS_LOST, nvim_in_terminal
from shell_env import shell_env

pytestmark = pytest.mark.timeout(120)

OSC9_DONE = b"\x1b]9;acp.nvim: demo/1 finished its turn\x07"


@pytest.fixture
def tui(nvim_env: dict[str, str], tmp_path: Path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    env = {**os.environ, **nvim_env, **shell_env(workspace), "TERM_PROGRAM": "WezTerm"}
    env.pop("TMUX", None)
    with nvim_in_terminal([NVIM, "-u", INIT], env, workspace, tmp_path / "nvim.sock", focus_events=True) as (nvim,
                                                                                                             terminal):
        nvim.exec_lua(NOTIFY)
        yield nvim, terminal, workspace


def turn(nvim, turns: int, workspace: Path) -> None:
    """A prompt to demo/1 (its chat opens beside you), then a tab page of your own before the turn
    ends (its chat is no longer on screen); wait for the turn's end."""
    nvim.exec_lua("require('acp_nvim.host.ai').run_for('demo/1', { 'send', 'slow', '10' })")
    wait_for(lambda: session_state(nvim).get("state") == "running", timeout=10, what="the turn to start")
    nvim.command(f"tabnew {workspace / f'elsewhere{turns}.txt'}")
    wait_for(lambda: session_state(nvim).get("turns", 0) >= turns and session_state(nvim).get("state") == "idle",
             timeout=30, what=f"turn {turns} to end")


def test_a_turn_end_goes_to_the_terminal_only_while_neovim_has_no_focus(tui):
    nvim, terminal, workspace = tui
    nvim.command("Ai new")
    wait_idle(nvim)

    mark = terminal.mark()
    turn(nvim, 1, workspace)
    wait_for(lambda: any("demo/1 finished its turn" in n for n in notes(nvim)), timeout=10, what="the message")
    assert b"\x1b]9;" not in terminal.since(mark)

    nvim.command("tabfirst")  # the chat is looked at: the notice may be given again
    terminal.type(FOCUS_LOST)
    wait_for(lambda: nvim.exec_lua("return require('acp_nvim.state.notices').focused") is False, timeout=10,
             what="FocusLost")
    mark = terminal.mark()
    turn(nvim, 2, workspace)
    wait_for(lambda: OSC9_DONE in terminal.since(mark), timeout=10, what="OSC 9 in the terminal")
    assert sum("finished its turn" in n for n in notes(nvim)) == 2

    terminal.type(FOCUS_GAINED)
    wait_for(lambda: nvim.exec_lua("return require('acp_nvim.state.notices').focused") is True, timeout=10,
             what="FocusGained")


def test_the_same_state_is_told_once_until_looked_at(tui):
    nvim, terminal, workspace = tui
    nvim.command("Ai new")
    wait_idle(nvim)
    terminal.type(FOCUS_LOST)
    wait_for(lambda: nvim.exec_lua("return require('acp_nvim.state.notices').focused") is False, timeout=10,
             what="FocusLost")
    mark = terminal.mark()
    for count in (1, 2, 3):
        turn(nvim, count, workspace)
    wait_for(lambda: OSC9_DONE in terminal.since(mark), timeout=10, what="OSC 9 in the terminal")
    assert terminal.since(mark).count(b"\x1b]9;") == 1
    assert sum("finished its turn" in n for n in notes(nvim)) == 1
