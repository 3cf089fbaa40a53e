"""Startup: what the plugin adds to Neovim's start, :Ai to a ready chat, typed-key stalls.

- ``startup_added_ms``: ``nvim --startuptime`` total ("NVIM STARTED") of an init that calls
  ``require('acp_nvim').setup()`` with the plugin on the runtimepath (its plugin/ file and its
  rplugin manifest included) minus the same init without the plugin: the median of per-round
  differences over ``ACP_BENCH_STARTUP_ROUNDS`` (default 40) paired rounds, with the A/A control
  (without vs without); each measurement is the fastest of 3 starts (a start that another
  process preempted says nothing about the plugin). ``startup_plugin_lines_ms`` adds up the
  --startuptime lines that name the plugin (their self time) and the rplugin manifest:
  steadier, but blind to indirect costs.
- ``ai_ready_ms``: in a fresh Neovim with a UI attached, after 1 s idle, ``:Ai`` to the moment
  Neovim draws a chat that shows the bundled demo agent ready (session started, "idle"/"ready"
  on screen); the median of ``ACP_BENCH_ROUNDS`` rounds. ``first_chunk_ms``: then the first
  prompt (``flood 1``) sent → its first chunk's text in the chat buffer.
- ``key_stall_*``: in a fresh Neovim with a UI attached, a key (``<F20>``, mapped in every mode
  to stamp the time) is typed every 10 ms through ``nvim_input`` from another connection, from
  just after startup until the first prompt's turn ends; a key's stall is when Neovim processed
  it minus when it was sent. ``key_stall_first_ai_ms`` is the worst from startup (1 s idle, then
  ``:Ai``, the Python host's start, the session's start) until the first prompt;
  ``key_stall_first_prompt_ms`` the worst during the first prompt (the demo's markdown reply).
  Each is the median over rounds of the round's worst key; ``..._worst_ms`` is the worst round.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from harness import (
    NVIM,
    KeyTyper,
    Nvim,
    Sandbox,
    bench_value,
    install_bench_lua,
    listening_nvim,
    sandbox,
    timed_turn,
    wait_for,
)
from paired import ROUNDS, Rounds, run_rounds, spread
from report import line

STARTUP_ROUNDS = int(os.environ.get("ACP_BENCH_STARTUP_ROUNDS", "40"))
STARTS_PER_MEASURE = 3
IDLE_BEFORE_AI = 1.0
SETTLE_AFTER_READY = 0.5
READY_TIMEOUT = 60.0
STARTED = re.compile(r"^(\d+\.\d+)\s+\d+\.\d+: --- NVIM STARTED ---", re.M)
SOURCED = re.compile(r"^\d+\.\d+\s+(\d+\.\d+)\s+(\d+\.\d+): (.*)$", re.M)


# -- nvim --startuptime, with and without the plugin --------------------------------------------


def startuptime(box: Sandbox) -> str:
    """One ``nvim --startuptime`` log of ``box``'s init (no ShaDa: its disk I/O is noise)."""
    with tempfile.NamedTemporaryFile("r", suffix=".log", dir=box.base) as log:
        subprocess.run([NVIM, "-u", str(box.init), "-i", "NONE", "--headless", "--startuptime", log.name, "+qa!"],
                       env=box.env, cwd=box.workspace, check=True, timeout=30, capture_output=True)
        return log.read()


def started_ms(log: str) -> float:
    """The clock of the "NVIM STARTED" line."""
    found = STARTED.search(log)
    if found is None:
        raise RuntimeError("no NVIM STARTED line in the --startuptime log")
    return float(found.group(1))


def plugin_lines_ms(log: str) -> float:
    """Self time of the lines that name the plugin, plus the rplugin manifest (sourced total)."""
    total = 0.0
    for sourced, self_time, what in SOURCED.findall(log):
        if "acp_nvim" in what:
            total += float(self_time)
        elif what.startswith("sourcing") and what.rstrip().endswith("rplugin.vim") and "runtime/plugin" not in what:
            total += float(sourced)
    return total


def startup_rounds() -> tuple[Rounds, list[float]]:
    lines: list[float] = []
    with sandbox("{}") as with_plugin, sandbox(None, plugin_root=None) as without:
        boxes = {"without": without, "with": with_plugin, "without_again": without}

        def measure(name: str) -> dict[str, float]:
            # the fastest of a few starts: a start that another process preempted says nothing
            log = min((startuptime(boxes[name]) for _ in range(STARTS_PER_MEASURE)), key=started_ms)
            if name == "with":
                lines.append(plugin_lines_ms(log))
            return {"startup_ms": started_ms(log)}

        for name in boxes:  # warm the page cache and the Lua bytecode cache
            measure(name)
        lines.clear()
        return run_rounds("startup", list(boxes), measure, STARTUP_ROUNDS, quiet=True), lines


def report_startup(rounds: Rounds, lines: list[float]) -> None:
    n = rounds.count
    added = rounds.differences("startup_ms", "with", "without")
    control = rounds.differences("startup_ms", "without_again", "without")
    line("startup_without_plugin_ms", rounds.median("without", "startup_ms"), "ms (--startuptime, median)")
    line("startup_added_ms", rounds.difference("startup_ms", "with", "without"),
         f"ms (median of {n} per-round differences, {spread(added)}; target <= 0.3)")
    line("startup_added_aa_ms", rounds.difference("startup_ms", "without_again", "without"),
         f"ms (A/A control: without vs without, {spread(control)})")
    line("startup_plugin_lines_ms", statistics.median(lines), "ms (median; --startuptime lines naming the plugin)")


# -- :Ai to a ready chat, and the first chunk ---------------------------------------------------


def open_chat(nvim: Nvim) -> dict[str, float]:
    """Run the first ``:Ai``; return how long the command blocked and when the chat was ready."""
    began, returned = nvim.rpc.lua("local t = vim.uv.hrtime(); vim.cmd('Ai'); return { t, vim.uv.hrtime() }")
    started = wait_for(lambda: bench_value(nvim.rpc, "session_start"), READY_TIMEOUT, "the session to start")
    try:
        drawn = wait_for(lambda: bench_value(nvim.rpc, "ready_drawn"), 10, "a drawn chat showing the agent ready")
    except TimeoutError:
        print("  (the chat never showed idle/ready on screen: ai_ready_ms is the session start)", file=sys.stderr)
        drawn = started
    return {"began": began, "ai_command_ms": (returned - began) / 1e6,
            "session_start_ms": (started - began) / 1e6, "ai_ready_ms": (drawn - began) / 1e6}


def first_chunk_ms(nvim: Nvim) -> float:
    """First prompt sent → its first chunk's text in a buffer."""
    nvim.rpc.lua("_G.acp_bench.watch_for('chunk00000')")
    sent = nvim.rpc.lua("local t = vim.uv.hrtime(); vim.cmd('Ai send flood 1'); return t")
    seen = wait_for(lambda: bench_value(nvim.rpc, "marker_seen"), 30, "the first chunk in the chat")
    wait_for(lambda: bench_value(nvim.rpc, "turns"), 30, "the end of the first turn")
    return (seen - sent) / 1e6


def ready_round(box: Sandbox) -> dict[str, float]:
    with listening_nvim(box) as nvim:
        install_bench_lua(nvim.rpc)
        time.sleep(IDLE_BEFORE_AI)
        figures = open_chat(nvim)
        time.sleep(SETTLE_AFTER_READY)
        figures["first_chunk_ms"] = first_chunk_ms(nvim)
    del figures["began"]
    return figures


# -- typed-key stalls ---------------------------------------------------------------------------


def worst(stalls: list[tuple[int, float]], start: float, end: float) -> float:
    """The worst stall of the keys sent in [start, end) (hrtime ns)."""
    return max((stall for sent, stall in stalls if start <= sent < end), default=float("nan"))


def stall_round(box: Sandbox) -> dict[str, float]:
    with listening_nvim(box) as nvim:
        install_bench_lua(nvim.rpc)
        typer = KeyTyper(nvim.address)
        typer.start()
        try:
            first_key = time.monotonic_ns()
            time.sleep(IDLE_BEFORE_AI)
            chat = open_chat(nvim)
            time.sleep(SETTLE_AFTER_READY)
            sent, ended = timed_turn(nvim.rpc, "hello from the key-stall benchmark", 60)
        finally:
            stalls = typer.stop_and_collect(nvim.rpc)
    began = chat["began"]
    returned = began + chat["ai_command_ms"] * 1e6
    return {"first_ai": worst(stalls, first_key, sent), "idle": worst(stalls, first_key, began),
            "ai_command": worst(stalls, began, returned), "session_start": worst(stalls, returned, sent),
            "first_prompt": worst(stalls, sent, ended + 1), "keys": len(stalls)}


def report_ready(ready: list[dict[str, float]], stalls: list[dict[str, float]]) -> None:
    def median(rows: list[dict[str, float]], key: str) -> float:
        return statistics.median(row[key] for row in rows)

    n = len(ready)
    line("ai_ready_ms", median(ready, "ai_ready_ms"),
         f"ms (:Ai → chat drawn ready, demo agent, median of {n} fresh Neovims; target <= 1000)")
    line("ai_ready_spread_ms", max(r["ai_ready_ms"] for r in ready) - min(r["ai_ready_ms"] for r in ready),
         "ms (slowest minus fastest round)")
    line("ai_session_start_ms", median(ready, "session_start_ms"), "ms (:Ai → AcpNvimSessionStart, median)")
    line("ai_command_blocks_ms", median(ready, "ai_command_ms"), "ms (the :Ai command itself, median)")
    line("first_chunk_ms", median(ready, "first_chunk_ms"), "ms (first prompt sent → first chunk in the chat)")
    n = len(stalls)
    for key, what in [("first_ai", "startup, :Ai and the session's start; target <= 50"),
                      ("first_prompt", "the first prompt; target <= 50"), ("idle", "1 s idle after startup"),
                      ("ai_command", "while the :Ai command runs"), ("session_start", ":Ai returned → first prompt")]:
        line(f"key_stall_{key}_ms", median(stalls, key), f"ms (worst key, median of {n} rounds; {what})")
        line(f"key_stall_{key}_worst_ms", max(row[key] for row in stalls), "ms (worst key of all rounds)")
    line("key_stall_keys_per_round", median(stalls, "keys"), "keys (one every 10 ms)")


def main() -> None:
    report_startup(*startup_rounds())
    with sandbox("{}") as box:
        ready: list[dict[str, Any]] = []
        stalls: list[dict[str, Any]] = []
        for index in range(ROUNDS):  # alternated, so a slow spell of the machine hits both
            ready.append(ready_round(box))
            stalls.append(stall_round(box))
            print(f"  startup round {index + 1}/{ROUNDS}: ai_ready {ready[-1]['ai_ready_ms']:.0f} ms, first chunk "
                  f"{ready[-1]['first_chunk_ms']:.1f} ms, key stall first :Ai {stalls[-1]['first_ai']:.1f} ms, "
                  f"first prompt {stalls[-1]['first_prompt']:.1f} ms", file=sys.stderr, flush=True)
        report_ready(ready, stalls)
