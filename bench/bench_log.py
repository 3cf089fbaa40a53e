"""Log benchmark: what the per-session log costs the chat flood, and its memory bound.

The demo agent's ``flood N`` runs through the plugin in a real headless Neovim, with the
log off (capacity 0), at the default level, and at level ``trace`` (every chunk logged),
in paired rounds in one run (``ACP_BENCH_ROUNDS``, default 7).
The machine is shared, so wall-clock throughput is noisy: the Python host's CPU time per
chunk (where the log's work happens) is reported too, and is the steadier measure.
Then a ``trace`` flood with the default bounds: the ring's entries and bytes, and the
Python host's resident memory against the same flood with the log off. Finally the
ring alone (no Neovim): its accounted bytes against what Python really holds (tracemalloc).
Costs are medians of per-round ratios against ``off`` (configurations alternate within a
round, the order rotates: bench/paired.py), and ``off_again`` is an A/A control: the same
``off`` configuration measured again, so the run shows its own noise beside the costs.
Target: logging at the default level costs <= 10 % of the flood's throughput.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness import (
    Nvim,
    PeakRss,
    Sandbox,
    cpu_seconds,
    install_bench_lua,
    listening_nvim,
    rss_mib,
    sandbox,
    start_session,
    timed_turn,
    wait_for,
)
from paired import ROUNDS, Rounds, run_rounds
from report import line

CHUNKS = int(os.environ.get("ACP_BENCH_CHUNKS", "100000"))
"""The memory flood (and the ring-alone run) use this many messages."""
ROUND_CHUNKS = int(os.environ.get("ACP_BENCH_ROUND_CHUNKS", "30000"))
"""Throughput: one flood of ROUND_CHUNKS per configuration and round (ACP_BENCH_ROUNDS rounds)."""
TIMEOUT = 600.0
CONFIGS: dict[str, dict[str, Any]] = {
    "off": {"max_entries": 0}, "default": {}, "trace": {"level": "trace"}, "off_again": {"max_entries": 0}}
"""``off_again`` repeats ``off``: the A/A control that shows this machine's noise in the same run."""


# -- Neovim with the plugin ----------------------------------------------------------------


@contextlib.contextmanager
def session(box: Sandbox, log: dict[str, Any]) -> Iterator[Nvim]:
    """A fresh Neovim (no UI) with one started demo session whose log has options ``log``."""
    with listening_nvim(box, ui=False) as nvim:
        install_bench_lua(nvim.rpc)
        nvim.rpc.lua("require('acp_nvim').setup({ log = ... })", log)
        start_session(nvim.rpc)
        time.sleep(0.3)  # the agent's commands announcement
        yield nvim


def flood(nvim: Nvim, chunks: int) -> float:
    """Chunks per second of one ``flood {chunks}`` turn, timed inside Neovim."""
    sent, ended = timed_turn(nvim.rpc, f"flood {chunks}", TIMEOUT)
    return chunks / ((ended - sent) / 1e9)


def measure(box: Sandbox, name: str) -> dict[str, float]:
    """One round of configuration ``name``: chunks/s and host CPU microseconds per chunk."""
    with session(box, CONFIGS[name]) as nvim:
        pid = nvim.host_pid()
        before = cpu_seconds(pid) if pid else 0.0
        rate = flood(nvim, ROUND_CHUNKS)
        used = (cpu_seconds(pid) - before) / ROUND_CHUNKS * 1e6 if pid else float("nan")
    return {"chunks_per_s": rate, "host_cpu_us": used}


def paired_cost(rounds: Rounds, metric: str, name: str, higher_is_better: bool = True) -> float:
    """Median over rounds of the per-round cost of ``name`` against ``off``, in percent."""
    ratio = rounds.ratio(metric, "off", name) if higher_is_better else rounds.ratio(metric, name, "off")
    return 100 * (ratio - 1)


def _complete_text(path: Path) -> str | None:
    """The file's text once it ends with a newline (the export is complete)."""
    text = path.read_text() if path.exists() else ""
    return text if text.endswith("\n") else None


def memory(box: Sandbox, log: dict[str, Any], export: Path | None) -> dict[str, float]:
    """Host memory during one flood of CHUNKS; with ``export``, the ring's content afterwards."""
    with session(box, log) as nvim:
        pid = nvim.host_pid()
        before = rss_mib(pid) if pid else 0.0
        with PeakRss(pid) if pid else contextlib.nullcontext() as peak:
            flood(nvim, CHUNKS)
        figures = {"rss_before": before, "rss_peak": peak.peak if peak else 0.0}
        if export is not None:
            nvim.rpc.request("nvim_command", f"Ai log export {export}")
            text = wait_for(lambda: _complete_text(export), 30, "the export")
            figures["entries"] = len(text.splitlines()) - 1
            figures["export_bytes"] = len(text.encode())
    return figures


# -- the ring alone ------------------------------------------------------------------------


def ring_alone() -> dict[str, float]:
    """CHUNKS chunk messages into a default-bounded ring at trace: accounted vs real bytes."""
    from acp_nvim.core.log.redact import Redactor
    from acp_nvim.core.log.ring import LogRing

    tracemalloc.start()
    ring = LogRing(level="trace", redact=Redactor.for_env({"API_KEY": "not-a-real-secret"}, inherited={}))
    peak_entries = 0
    for n in range(CHUNKS):
        update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": f"chunk{n} "}}
        message = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "demo-1", "update": update}}
        ring.record_message("in", message, json.dumps(message, separators=(",", ":")).encode())
        peak_entries = max(peak_entries, len(ring))
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"entries": len(ring), "peak_entries": peak_entries, "accounted": ring.total_bytes / 2**20,
            "bound": ring.max_bytes / 2**20, "real": current / 2**20, "real_peak": peak / 2**20}


def main() -> None:
    with sandbox() as box:
        rounds = run_rounds("log", list(CONFIGS), lambda name: measure(box, name))
        line("log_flood_chunks", ROUND_CHUNKS, f"chunks per round, {ROUNDS} paired rounds")
        for name in CONFIGS:
            line(f"log_flood_{name}", rounds.median(name, "chunks_per_s"), "chunks/s (median round)")
        line("log_cost_default", paired_cost(rounds, "chunks_per_s", "default"), "% of throughput (target <= 10)")
        line("log_cost_trace", paired_cost(rounds, "chunks_per_s", "trace"), "% of throughput")
        line("log_noise_off_vs_off", paired_cost(rounds, "chunks_per_s", "off_again"),
             "% of throughput (A/A: identical configs)")
        for name in CONFIGS:
            line(f"log_host_cpu_{name}", rounds.median(name, "host_cpu_us"), "us/chunk")
        line("log_cpu_cost_default", paired_cost(rounds, "host_cpu_us", "default", higher_is_better=False),
             "% host CPU (target <= 10)")
        line("log_cpu_cost_trace", paired_cost(rounds, "host_cpu_us", "trace", higher_is_better=False), "% host CPU")
        line("log_cpu_noise_off_vs_off", paired_cost(rounds, "host_cpu_us", "off_again", higher_is_better=False),
             "% host CPU (A/A: identical configs)")
        with tempfile.TemporaryDirectory() as tmp:
            off = memory(box, CONFIGS["off"], None)
            traced = memory(box, CONFIGS["trace"], Path(tmp) / "flood.jsonl")
        line("log_memory_flood_chunks", CHUNKS, "chunks")
        line("log_trace_ring_entries", traced["entries"], "entries (bound 5000)")
        line("log_trace_export_size", traced["export_bytes"] / 2**20, "MiB")
        line("log_host_rss_peak_off", off["rss_peak"], "MiB")
        line("log_host_rss_peak_trace", traced["rss_peak"], "MiB")
        line("log_host_rss_trace_minus_off", traced["rss_peak"] - off["rss_peak"], "MiB (ring bound 8)")
    alone = ring_alone()
    line("log_ring_entries_after_flood", alone["entries"], "entries")
    line("log_ring_max_entries_seen", alone["peak_entries"], "entries (bound 5000)")
    line("log_ring_accounted", alone["accounted"], f"MiB (bound {alone['bound']:g})")
    line("log_ring_python_memory", alone["real"], "MiB (tracemalloc, after the flood)")
    line("log_ring_python_memory_peak", alone["real_peak"], "MiB (tracemalloc)")
