"""Log benchmark (issue 6): what the per-session log costs the chat flood, and its memory bound.

The demo agent's ``flood N`` runs through the plugin in a real headless Neovim, with the
log off (capacity 0), at the default level, and at level ``trace`` (every chunk logged),
in alternating rounds in one run (the order rotates); the median round of each counts.
The machine is shared, so wall-clock throughput is noisy: the Python host's CPU time per
chunk (where the log's work happens) is reported too, and is the steadier measure.
Then a ``trace`` flood with the default bounds: the ring's entries and bytes, and the
Python host's resident memory against the same flood with the log off. Finally the
ring alone (no Neovim): its accounted bytes against what Python really holds (tracemalloc).
Costs are medians of per-round ratios against ``off`` (configurations alternate within a
round), and ``off_again`` is an A/A control: the same ``off`` configuration measured again, so
the run shows its own noise beside the costs. Target: logging at the default level costs
<= 10 % of the flood's throughput.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pynvim

ROOT = Path(__file__).resolve().parents[1]
NVIM = str(Path(sys.executable).parent / "nvim")
INIT = str(ROOT / "tests" / "minimal_init.vim")
CHUNKS = int(os.environ.get("ACP_BENCH_CHUNKS", "100000"))
"""The memory flood (and the ring-alone run) use this many messages."""
ROUND_CHUNKS = int(os.environ.get("ACP_BENCH_ROUND_CHUNKS", "30000"))
ROUNDS = int(os.environ.get("ACP_BENCH_ROUNDS", "5"))
"""Throughput: this many alternating rounds of ROUND_CHUNKS per configuration; the median counts."""
TIMEOUT = 600.0
CONFIGS = {"off": {"max_entries": 0}, "default": {}, "trace": {"level": "trace"}, "off_again": {"max_entries": 0}}
"""``off_again`` repeats ``off``: the A/A control that shows this machine's noise in the same run."""

START = """
_G.acp_bench = {}
vim.api.nvim_create_autocmd('User', { pattern = 'AcpNvimTurnEnd', callback = function()
  _G.acp_bench.turn_end = vim.uv.hrtime()
end })
require('acp_nvim').setup({ log = ... })
vim.cmd('Ai new')
"""
STATE = "local s = require('acp_nvim.state').sessions['demo/1']; return s and s.state"
FLOOD = "_G.acp_bench.start = vim.uv.hrtime(); vim.cmd('Ai send flood ' .. ...)"


def line(name: str, value: float, unit: str) -> None:
    print(f"{name}: {value:.6g} {unit}", flush=True)


def wait(probe: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.05)
    raise TimeoutError(f"timed out waiting for {what}")


# -- Neovim with the plugin ----------------------------------------------------------------


@contextlib.contextmanager
def plugin_env() -> Iterator[dict[str, str]]:
    """Isolated XDG dirs and a registered remote plugin, like the test fixture."""
    with tempfile.TemporaryDirectory(prefix="acp-bench-log-") as tmp:
        base = Path(tmp)
        env = {**os.environ, "XDG_CONFIG_HOME": str(base / "config"), "XDG_DATA_HOME": str(base / "data"),
               "XDG_STATE_HOME": str(base / "state"), "XDG_CACHE_HOME": str(base / "cache"),
               "NVIM_RPLUGIN_MANIFEST": str(base / "rplugin.vim"), "ACP_NVIM_TEST_PYTHON": sys.executable}
        subprocess.run([NVIM, "-u", INIT, "--headless", "+UpdateRemotePlugins", "+qa!"],
                       env=env, check=True, timeout=60, capture_output=True)
        (base / "workspace").mkdir()
        env["ACP_BENCH_WORKSPACE"] = str(base / "workspace")
        yield env


@contextlib.contextmanager
def session(env: dict[str, str], log: dict[str, Any]) -> Iterator[pynvim.Nvim]:
    """A fresh Neovim with one started demo session whose log has options ``log``."""
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        nvim = pynvim.attach("child", argv=[NVIM, "-u", INIT, "--embed", "--headless"])
    finally:
        os.environ.clear()
        os.environ.update(saved)
    try:
        nvim.command(f"cd {env['ACP_BENCH_WORKSPACE']}")
        nvim.exec_lua(START, log)
        wait(lambda: nvim.exec_lua(STATE) == "idle", 60, "the demo session to start")
        time.sleep(0.3)  # the agent's commands announcement
        yield nvim
    finally:
        with contextlib.suppress(Exception):
            nvim.command("silent! doautocmd VimLeavePre")
        nvim.close()


def flood(nvim: pynvim.Nvim, chunks: int) -> float:
    """Chunks per second of one ``flood {chunks}`` turn, timed inside Neovim."""
    nvim.exec_lua(FLOOD, str(chunks))
    end = wait(lambda: nvim.exec_lua("return _G.acp_bench.turn_end"), TIMEOUT, "the end of the flood")
    return chunks / ((end - nvim.exec_lua("return _G.acp_bench.start")) / 1e9)


def host_pid(nvim: pynvim.Nvim) -> int | None:
    """The Python rplugin host: the child of Neovim that runs Python."""
    nvim_pid = nvim.funcs.getpid()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                stat = Path(f"/proc/{entry}/stat").read_text()
                if int(stat.rsplit(")", 1)[1].split()[1]) == nvim_pid and \
                        b"python" in Path(f"/proc/{entry}/cmdline").read_bytes():
                    return int(entry)
    return None


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    for text in Path(f"/proc/{pid}/status").read_text().splitlines():
        if text.startswith("VmRSS:"):
            return int(text.split()[1]) / 1024
    return 0.0


class PeakRss:
    """Samples a process's resident memory every 20 ms in a thread; keeps the peak."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = rss_mib(pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            with contextlib.suppress(OSError):
                self.peak = max(self.peak, rss_mib(self.pid))

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def throughput(env: dict[str, str]) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Per configuration and round: chunks/s and host CPU microseconds per chunk."""
    rates: dict[str, list[float]] = {name: [] for name in CONFIGS}
    cpu: dict[str, list[float]] = {name: [] for name in CONFIGS}
    names = list(CONFIGS)
    for round_ in range(ROUNDS):
        for name in names[round_ % len(names):] + names[:round_ % len(names)]:  # no config always goes first
            with session(env, CONFIGS[name]) as nvim:
                pid = host_pid(nvim)
                before = cpu_seconds(pid) if pid else 0.0
                rate = flood(nvim, ROUND_CHUNKS)
                used = (cpu_seconds(pid) - before) / ROUND_CHUNKS * 1e6 if pid else float("nan")
            print(f"  round {round_ + 1} {name}: {rate:.0f} chunks/s, {used:.1f} us/chunk host CPU", file=sys.stderr)
            rates[name].append(rate)
            cpu[name].append(used)
    return rates, cpu


def paired_cost(values: dict[str, list[float]], name: str, base: str = "off", higher_is_better: bool = True) -> float:
    """Median over rounds of the per-round cost of ``name`` against ``base`` (rounds cancel slow drifts)."""
    ratios = [(b / n if higher_is_better else n / b) for n, b in zip(values[name], values[base], strict=True)]
    return 100 * (statistics.median(ratios) - 1)


def memory(env: dict[str, str], log: dict[str, Any], export: Path | None) -> dict[str, float]:
    """Host memory during one flood of CHUNKS; with ``export``, the ring's content afterwards."""
    with session(env, log) as nvim:
        pid = host_pid(nvim)
        before = rss_mib(pid) if pid else 0.0
        with PeakRss(pid) if pid else contextlib.nullcontext() as peak:
            flood(nvim, CHUNKS)
        figures = {"rss_before": before, "rss_peak": peak.peak if peak else 0.0}
        if export is not None:
            nvim.command(f"Ai log export {export}")
            text = wait(lambda: export.exists() and export.read_text().endswith("\n") and export.read_text(),
                        30, "the export")
            figures["entries"] = len(text.splitlines()) - 1
            figures["export_bytes"] = len(text.encode())
    return figures


# -- the ring alone ------------------------------------------------------------------------


def ring_alone() -> dict[str, float]:
    """CHUNKS chunk messages into a default-bounded ring at trace: accounted vs real bytes."""
    sys.path.insert(0, str(ROOT / "python"))
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
    with plugin_env() as env:
        rates, cpu = throughput(env)
        line("log_flood_chunks", ROUND_CHUNKS, f"chunks per round, median of {ROUNDS}")
        for name in CONFIGS:
            line(f"log_flood_{name}", statistics.median(rates[name]), "chunks/s")
        line("log_cost_default", paired_cost(rates, "default"), "% of throughput (target <= 10)")
        line("log_cost_trace", paired_cost(rates, "trace"), "% of throughput")
        line("log_noise_off_vs_off", paired_cost(rates, "off_again"), "% of throughput (A/A: identical configs)")
        for name in CONFIGS:
            line(f"log_host_cpu_{name}", statistics.median(cpu[name]), "us/chunk")
        line("log_cpu_cost_default", paired_cost(cpu, "default", higher_is_better=False), "% host CPU (target <= 10)")
        line("log_cpu_cost_trace", paired_cost(cpu, "trace", higher_is_better=False), "% host CPU")
        line("log_cpu_noise_off_vs_off", paired_cost(cpu, "off_again", higher_is_better=False),
             "% host CPU (A/A: identical configs)")
        with tempfile.TemporaryDirectory() as tmp:
            off = memory(env, CONFIGS["off"], None)
            traced = memory(env, CONFIGS["trace"], Path(tmp) / "flood.jsonl")
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


if __name__ == "__main__":
    main()
