"""Figures as ``name: value unit`` lines, kept for the summary table that ends ``make bench``.

Benchmarks are measurements, not tests: a figure that misses its target is printed as
``not met`` and nothing fails. Every run also writes its figures to ``BENCH_JSON`` (default
``.cache/bench/last.json``); ``BENCH_BEFORE=<an earlier run's json>`` adds a ``before`` column
to the table, e.g. the same lines measured with ``BENCH_PLUGIN_ROOT`` set to an old checkout.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIGURES: dict[str, tuple[float, str]] = {}
"""Every figure printed in this run: name -> (value, unit)."""


@dataclass(frozen=True)
class Target:
    """A figure's target: ``op`` is ``>=`` or ``<=``; ``source`` names the issue that set it."""

    name: str
    op: str
    bound: float
    unit: str
    source: str

    def met(self, value: float) -> bool:
        """Whether ``value`` meets the target (NaN never does)."""
        return value >= self.bound if self.op == ">=" else value <= self.bound


TARGETS = [
    Target("chat_flood_ratio", ">=", 1.0, "x", "issue 13"),
    Target("chat_flood_raw_ratio", ">=", 0.8, "x", "issue 25"),
    Target("host_cpu_us_per_chunk", "<=", 5.0, "us", "issue 25"),
    Target("chat_latency_flood_p99", "<=", 5.0, "ms", "issue 13"),
    Target("startup_added_ms", "<=", 0.3, "ms", "issue 13"),
    Target("ai_ready_ms", "<=", 1000.0, "ms", "issue 13"),
    Target("key_stall_first_ai_ms", "<=", 50.0, "ms", "issues 12, 13"),
    Target("key_stall_first_prompt_ms", "<=", 50.0, "ms", "issues 12, 13"),
    Target("memory_1m_chunks_rss_growth", "<=", 50.0, "MiB", "issue 12"),
    Target("fs_read_dirty_buffer_100k_p50", "<=", 20.0, "ms", "issue 4"),
    Target("fs_read_dirty_buffer_100k_plugin_p50", "<=", 5.0, "ms", "issue 25"),
    Target("key_stall_faults_max_ms", "<=", 16.0, "ms", "issue 25"),
    Target("key_stall_fault_crash_typing_ms", "<=", 16.0, "ms", "issue 35"),
    Target("long_chat_append_key_stall_ms", "<=", 16.0, "ms", "issue 25"),
    Target("idle_cpu_long_chat_pct", "<=", 1.0, "%", "issue 33"),
    Target("long_session_resume_ms", "<=", 500.0, "ms", "issue 25"),
    Target("log_open_1m_ms", "<=", 200.0, "ms", "issue 25"),
    Target("sessions_20_key_stall_ms", "<=", 16.0, "ms", "issue 25"),
    Target("sessions_20_end_lag_ms", "<=", 16.0, "ms", "issue 25"),
    Target("sessions_20_review_open_ms", "<=", 100.0, "ms", "issue 25"),
    Target("log_cost_default", "<=", 10.0, "%", "issue 6"),
    Target("log_cpu_cost_default", "<=", 10.0, "%", "issue 6"),
    Target("review_open_10k_whole_p50", "<=", 200.0, "ms", "issue 5"),
    Target("review_open_10k_snippet_p50", "<=", 200.0, "ms", "issue 5"),
    Target("checkpoint_turn_overhead_ms", "<=", 20.0, "ms", "issue 22"),
    Target("first_chunk_warm_over_open_ms", "<=", 50.0, "ms", "issue 24"),
    Target("board_key_stall_ms", "<=", 50.0, "ms", "issue 24"),
    Target("box_agent_start_ms", "<=", 50.0, "ms", "issue 34"),
    Target("box_terminal_start_ms", "<=", 10.0, "ms", "issue 34"),
]
UNTARGETED = ["first_chunk_ms", "chat_flood_ratio_aa", "chat_flood_raw_ratio_aa", "key_stall_faults_idle_max_ms",
              "rpc_stall_fault_crash_typing_ms",
              "fs_read_dirty_buffer_100k_plugin_aa", "first_chunk_cold_ms", "first_chunk_warm_ms",
              "board_update_cost_ms", "board_main_loop_share_pct", "checkpoint_turn_store_ms"]
"""Shown in the table without a target: figures a reader of the table wants beside the others."""


def line(name: str, value: float, unit: str) -> None:
    """Print one figure as ``name: value unit`` and keep it for the summary."""
    FIGURES[name] = (value, unit)
    print(f"{name}: {value:.6g} {unit}", flush=True)


def _cell(value: float | None) -> str:
    if value is None:
        return "not measured"
    return "nan" if math.isnan(value) else f"{value:.4g}"


def summary_rows(before: dict[str, float]) -> list[list[str]]:
    """One row per target (and untargeted figure): name, value, target, status, source[, before]."""
    rows = []
    for target in TARGETS:
        value = FIGURES.get(target.name, (None, ""))[0]
        status = "not measured" if value is None else ("met" if target.met(value) else "not met")
        row = [target.name, _cell(value), f"{target.op} {target.bound:g} {target.unit}", status, target.source]
        rows.append(row + ([_cell(before.get(target.name))] if before else []))
    for name in UNTARGETED:
        value = FIGURES.get(name, (None, ""))[0]
        row = [name, _cell(value), "(no target)", "-", ""]
        rows.append(row + ([_cell(before.get(name))] if before else []))
    return rows


def print_summary(plugin: str) -> None:
    """The table of figures against targets; met / not met never changes the exit status."""
    before = load_before()
    header = ["figure", "value", "target", "status", "set by", *(["before"] if before else [])]
    rows = [header, *summary_rows(before)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    print(f"\nsummary (plugin under test: {plugin})", flush=True)
    for index, row in enumerate(rows):
        print("  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
        if index == 0:
            print("  " + "  ".join("-" * width for width in widths))
    met = sum(row[3] == "met" for row in rows[1:])
    print(f"  targets met: {met}/{len(TARGETS)}", flush=True)


def load_before() -> dict[str, float]:
    """Figures of the run named by ``BENCH_BEFORE``, if any."""
    path = os.environ.get("BENCH_BEFORE")
    if not path:
        return {}
    data = json.loads(Path(path).read_text())
    return {name: value for name, (value, _unit) in data["figures"].items()}


def save(plugin: str) -> Path:
    """Write this run's figures to ``BENCH_JSON`` (default .cache/bench/last.json)."""
    path = Path(os.environ.get("BENCH_JSON") or ROOT / ".cache" / "bench" / "last.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"plugin": plugin, "time": time.strftime("%Y-%m-%d %H:%M:%S"), "figures": FIGURES}
    path.write_text(json.dumps(data, indent=1, allow_nan=True) + "\n")
    return path
