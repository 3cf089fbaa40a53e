"""The board with 20 sessions streaming at once: its share of Neovim's main loop, and typed keys.

One Neovim with a UI attached runs 20 demo sessions. Each round sends every session a burst of
short turns (``slow 10``, several queued: 20 chunks a second per session and a state change at
every turn's start and end, so the board has rows to update all the time) and measures, in
paired configurations:

- ``board``: the board open in a window (``:Ai board``), updated in place;
- ``no_board``: the same burst without the board;
- ``no_board_again``: once more, the A/A control.

Inside Neovim, every call of the board's code (``board.update``, ``Board:draw``, also the redraws
of its own clock) is timed with ``vim.uv.hrtime``. ``board_update_cost_ms`` is the median over
rounds of the mean time of one board update (Python's update, drawn); ``board_main_loop_share_pct``
the board's time over the burst's wall time. During every burst a key (``<F20>``) is typed every
10 ms from another connection: ``board_key_stall_ms`` is the median over rounds of the worst key's
stall with the board open (target <= 50), beside the same without it. ``board_host_cpu_ratio``:
the Python host's CPU time with / without the board, per round (A/A: ``no_board_again``).
"""

from __future__ import annotations

import statistics
import sys
import time

from harness import (
    KeyTyper,
    Nvim,
    bench_value,
    cpu_seconds,
    demo_agent_lua,
    install_bench_lua,
    listening_nvim,
    sandbox,
    wait_for,
)
from paired import run_rounds, spread
from report import line

SESSIONS = 20
TURNS = 4
"""Turns queued per session and burst (``slow 10``: about half a second each)."""
TIMEOUT = 120.0
TIMED_LUA = """
local B = _G.acp_bench
local board = require('acp_nvim.board')
B.board_ns, B.board_updates = 0, 0
local function timed(fn, count)
  return function(...)
    local t = vim.uv.hrtime()
    local a, b = fn(...)
    B.board_ns = B.board_ns + (vim.uv.hrtime() - t)
    if count then B.board_updates = B.board_updates + 1 end
    return a, b
  end
end
board.update = timed(board.update, true)
board.Board.draw = timed(board.Board.draw, false)
"""
TURNS_LUA = """
local n = 0
for _, s in pairs(require('acp_nvim.state').sessions) do n = n + (s.turns or 0) end
return n
"""
IDLE_LUA = """
local n = 0
for _, s in pairs(require('acp_nvim.state').sessions) do
  if s.state == 'idle' and (s.queued or 0) == 0 then n = n + 1 end
end
return n
"""


def start_sessions(nvim: Nvim) -> None:
    for _ in range(SESSIONS):
        nvim.rpc.lua("vim.cmd('Ai new') vim.cmd('only')")  # one window: 20 chats do not fit on screen
    wait_for(lambda: nvim.rpc.lua(IDLE_LUA) == SESSIONS, TIMEOUT, f"{SESSIONS} idle sessions")


def burst(nvim: Nvim, board: bool) -> dict[str, float]:
    if board:
        nvim.rpc.lua("vim.cmd('Ai board')")
        wait_for(lambda: nvim.rpc.lua("return require('acp_nvim.board').board ~= nil"), 10, "the board")
    nvim.rpc.lua("_G.acp_bench.board_ns, _G.acp_bench.board_updates, _G.acp_bench.keys = 0, 0, {}")
    host = nvim.host_pid()
    assert host is not None
    cpu = cpu_seconds(host)
    turns = nvim.rpc.lua(TURNS_LUA) + SESSIONS * TURNS
    typer = KeyTyper(nvim.address)
    typer.start()
    began = time.monotonic()
    try:
        for index in range(1, SESSIONS + 1):
            for _ in range(TURNS):
                nvim.rpc.lua("require('acp_nvim.host').call.submit(...)", f"demo/{index}", "slow 10")
        wait_for(lambda: nvim.rpc.lua(TURNS_LUA) >= turns, TIMEOUT, "every turn of the burst to end", 0.05)
        wall = time.monotonic() - began
    finally:
        stalls = typer.stop_and_collect(nvim.rpc)
    figures = {"wall_s": wall, "host_cpu_s": cpu_seconds(host) - cpu, "worst_key_ms": max(s for _, s in stalls),
               "board_ms": bench_value(nvim.rpc, "board_ns") / 1e6,
               "board_updates": float(bench_value(nvim.rpc, "board_updates"))}
    if board:
        nvim.rpc.lua("vim.cmd('silent! bwipe acp://board')")
    return figures


def main() -> None:
    with sandbox(f"{{ agents = {demo_agent_lua()} }}") as box, listening_nvim(box) as nvim:
        install_bench_lua(nvim.rpc)
        start_sessions(nvim)
        nvim.rpc.lua("vim.cmd('Ai board') vim.cmd('silent! bwipe acp://board')")  # loads the board's code
        nvim.rpc.lua(TIMED_LUA)
        rounds = run_rounds("board", ["board", "no_board", "no_board_again"],
                            lambda config: burst(nvim, config == "board"))
    n = rounds.count
    per_update = [ms / max(updates, 1) for ms, updates in
                  zip(rounds.series("board", "board_ms"), rounds.series("board", "board_updates"), strict=True)]
    share = [100 * ms / (wall * 1000) for ms, wall in
             zip(rounds.series("board", "board_ms"), rounds.series("board", "wall_s"), strict=True)]
    cpu = rounds.ratios("host_cpu_s", "board", "no_board")
    control = rounds.ratios("host_cpu_s", "no_board_again", "no_board")
    line("board_update_cost_ms", statistics.median(per_update),
         f"ms (one board update in Neovim, {SESSIONS} sessions streaming; median of {n} rounds, {spread(per_update)})")
    line("board_updates_per_s", statistics.median(
        u / w for u, w in zip(rounds.series("board", "board_updates"), rounds.series("board", "wall_s"), strict=True)),
        "updates/s (at most 4 by design)")
    line("board_main_loop_share_pct", statistics.median(share),
         f"% (the board's time in Neovim's main loop over the burst, {spread(share)})")
    line("board_key_stall_ms", rounds.median("board", "worst_key_ms"),
         f"ms (worst typed key with the board open, median of {n} rounds; target <= 50)")
    line("board_key_stall_without_ms", rounds.median("no_board", "worst_key_ms"),
         "ms (the same without the board)")
    line("board_host_cpu_ratio", statistics.median(cpu), f"x (host CPU with / without the board, {spread(cpu)})")
    line("board_host_cpu_ratio_aa", statistics.median(control), f"x (A/A control, {spread(control)})")
    print(f"  (burst: {SESSIONS} sessions × {TURNS} turns of slow 10, median "
          f"{rounds.median('board', 'wall_s'):.1f} s)", file=sys.stderr)
