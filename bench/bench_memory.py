"""Memory under a long session: 1M streamed chunks and 10k tool calls in one turn.

A fresh Neovim with a UI attached runs one demo session of the plugin under test. After a
small warm-up turn (so first-use imports and caches are not counted), the Python host's
resident memory is read, then the demo agent's ``load 1000000 24 10000`` streams 1M chunks of
24 bytes with 10k tool calls (each announced, updated in progress, completed) spread among
them. ``memory_1m_chunks_rss_growth`` is the host's RSS once the turn has ended minus before
it; the peak during the turn is printed beside it. Target: growth <= 50 MiB.
``ACP_BENCH_MEMORY_CHUNKS`` / ``ACP_BENCH_MEMORY_TOOLS`` scale the load (the line names stay).
"""

from __future__ import annotations

import os
import time

from harness import (
    PeakRss,
    demo_agent_lua,
    install_bench_lua,
    listening_nvim,
    rss_mib,
    sandbox,
    start_session,
    timed_turn,
)
from report import line

CHUNKS = int(os.environ.get("ACP_BENCH_MEMORY_CHUNKS", "1000000"))
TOOL_CALLS = int(os.environ.get("ACP_BENCH_MEMORY_TOOLS", "10000"))
CHUNK_BYTES = 24
SETTLE_SECONDS = 1.0
TIMEOUT = 600.0


def main() -> None:
    with sandbox(f"{{ agents = {demo_agent_lua()} }}") as box, listening_nvim(box) as nvim:
        rpc = nvim.rpc
        install_bench_lua(rpc)
        start_session(rpc)
        timed_turn(rpc, f"load 2000 {CHUNK_BYTES} 20", 60)
        time.sleep(SETTLE_SECONDS)
        host = nvim.host_pid()
        if host is None:
            raise RuntimeError("no Python host process found")
        before, nvim_before = rss_mib(host), rss_mib(nvim.proc.pid)
        with PeakRss(host) as peak:
            sent, ended = timed_turn(rpc, f"load {CHUNKS} {CHUNK_BYTES} {TOOL_CALLS}", TIMEOUT)
            time.sleep(SETTLE_SECONDS)
        after = rss_mib(host)
        line("memory_load", CHUNKS, f"chunks of {CHUNK_BYTES} bytes and {TOOL_CALLS} tool calls (3 updates each)")
        line("memory_load_seconds", (ended - sent) / 1e9, "s")
        line("memory_host_rss_before", before, "MiB")
        line("memory_1m_chunks_rss_growth", after - before, "MiB (host, after the turn; target <= 50)")
        line("memory_1m_chunks_rss_peak_growth", peak.peak - before, "MiB (host, peak during the turn)")
        line("memory_nvim_rss_growth", rss_mib(nvim.proc.pid) - nvim_before, "MiB (Neovim: buffers, extmarks)")
