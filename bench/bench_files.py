"""fs/read_text_file benchmark: a 100,000-line buffer with unsaved changes.

A real headless Neovim runs the plugin; a real agent process (tests/e2e/files_probe_agent.py)
sends ``fs/read_text_file`` requests one after another and times each round trip over
JSON-RPC: agent → rplugin host → Lua (changed lines only) → host → agent. For scale, the
same agent is also timed against a bare ACP SDK client that answers with a ready string
(``sdk_floor``: JSON-RPC alone), and with the plugin's protocol log turned off
(``ACP_BENCH_LOG=0``). ``..._plugin`` is the plugin's own share of each read, from the session
log: the request line read → the response line written; it is measured in paired rounds of
``BATCH`` reads (``plugin`` and ``plugin_again``, the A/A control, in a rotating order), and its
p50 is the median of the rounds' p50s. Printed as ``name: value unit``. Targets: p50 <= 20 ms for
the round trip of the whole dirty buffer, p50 <= 5 ms for the plugin's share (the buffer's
changedtick does not move between the reads: the copy is joined and encoded once).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, cast

from harness import ROOT, Nvim, dismiss_prompt, listening_nvim, percentiles, sandbox, wait_for
from paired import run_rounds, spread
from report import line

PROBE = str(ROOT / "tests" / "e2e" / "files_probe_agent.py")
LINES = 100_000
READS = int(os.environ.get("ACP_BENCH_READS", "100"))
WARMUP = 10
BATCH = 10
"""Reads per round of the plugin's share (the log keeps one batch: each answer holds 6 MB)."""
TIMEOUT = 300.0

SETUP = """
local python, script = ...
require('acp_nvim').setup({
  agents = { probe = { command = python, args = { script } } },
  default_agent = 'probe',
  -- bytes unbounded here so the last batch's times to response stay in the log (plugin_share_ms)
  log = { max_entries = tonumber(os.getenv('ACP_BENCH_LOG') or '60'), max_bytes = 2 ^ 31 },
})
"""


def timed_reads(nvim: Nvim, base: Path, path: Path, count: int = READS, warmup: int = WARMUP,
                **window: int) -> list[float]:
    out = base / f"bench-{time.monotonic_ns()}.json"
    request = {"op": "bench", "path": str(path), "n": count + warmup, "out": str(out), **window}
    nvim.rpc.request("nvim_command", "Ai send " + json.dumps(request))
    wait_for(lambda: out.exists() and out.stat().st_size, TIMEOUT, "the probe agent's report", 0.05)
    return json.loads(out.read_text())["ms"][warmup:]


def report(name: str, samples: list[float], target: str = "") -> None:
    figures = percentiles(samples)
    line(f"{name}_p50", figures["p50"], f"ms{target}")
    line(f"{name}_p99", figures["p99"], "ms")


def finished_export(path: Path) -> str | None:
    """The export's text once it is complete: every line parses (it is written in pieces)."""
    text = path.read_text() if path.exists() else ""
    try:
        return text if text.endswith("\n") and all(json.loads(raw) or True for raw in text.splitlines()) else None
    except json.JSONDecodeError:
        return None


def plugin_share_ms(nvim: Nvim, base: Path, count: int) -> list[float]:
    """The plugin's own share of the last ``count`` reads: request line in → response line out,
    from the session log."""
    export = base / f"log-{time.monotonic_ns()}.jsonl"
    nvim.rpc.request("nvim_command", f"Ai log export {export}")
    text = wait_for(lambda: finished_export(export), 60, "the log export", 0.2)
    export.unlink()
    dismiss_prompt(nvim.rpc)
    entries = [json.loads(raw) for raw in text.splitlines()[1:]]
    answered = [e["elapsed_ms"] for e in entries
                if e.get("method") == "fs/read_text_file" and e.get("elapsed_ms") is not None]
    return answered[-count:]


class PluginShare:
    """One batch of reads of the dirty buffer: its round trips and the plugin's share of each."""

    def __init__(self, nvim: Nvim, base: Path, path: Path) -> None:
        self.nvim, self.base, self.path = nvim, base, path
        self.round_trips: list[float] = []

    def __call__(self, config: str) -> dict[str, float]:
        self.round_trips += timed_reads(self.nvim, self.base, self.path, BATCH, 2)
        share = plugin_share_ms(self.nvim, self.base, BATCH)
        return {"p50": statistics.median(share), "max": max(share)}


async def _sdk_floor(text: str, out: Path) -> None:
    from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
    from acp.schema import ClientCapabilities, FileSystemCapabilities, ReadTextFileResponse

    class Client:
        async def read_text_file(self, *args: object, **kwargs: object) -> ReadTextFileResponse:
            return ReadTextFileResponse(content=text)

        async def session_update(self, *args: object, **kwargs: object) -> None:
            return None

    fs = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))
    request = {"op": "bench", "path": "/floor", "n": READS + WARMUP, "out": str(out)}
    limits = {"limit": 64 << 20}
    async with spawn_agent_process(cast(Any, Client()), sys.executable, PROBE, transport_kwargs=limits) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=fs)
        session = await conn.new_session(cwd=str(out.parent), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block(json.dumps(request))])


def sdk_floor(text: str, base: Path) -> list[float]:
    out = base / "floor.json"
    asyncio.run(_sdk_floor(text, out))
    return json.loads(out.read_text())["ms"][WARMUP:]


def main() -> None:
    with sandbox() as box:
        base, workspace = box.base, box.workspace
        text = "".join(f"line {n:06d}: the quick brown fox jumps over the lazy dog\n" for n in range(LINES))
        (workspace / "big.txt").write_text(text)
        (workspace / "closed.txt").write_text(text)
        with listening_nvim(box, ui=False) as nvim:
            nvim.rpc.lua(SETUP, sys.executable, PROBE)
            nvim.rpc.request("nvim_command", f"edit {workspace / 'big.txt'}")
            nvim.rpc.request("nvim_command", "normal! 50000GAunsaved edit\x1b")
            assert nvim.rpc.request("nvim_get_option_value", "modified", {})
            line("fs_read_buffer_lines", LINES, "lines")
            line("fs_read_buffer_bytes", len(text.encode()) + len("unsaved edit"), "bytes")
            timed_reads(nvim, base, workspace / "big.txt", 0)  # the first read joins and encodes
            share = PluginShare(nvim, base, workspace / "big.txt")
            rounds = run_rounds("fs read", ["plugin", "plugin_again"], share)
            report("fs_read_dirty_buffer_100k", share.round_trips, " (target <= 20)")
            n = rounds.count
            line("fs_read_dirty_buffer_100k_plugin_p50", rounds.median("plugin", "p50"),
                 f"ms (the plugin's share: request read to answer written; median of {n} rounds of {BATCH} "
                 f"reads, {spread(rounds.series('plugin', 'p50'))}; target <= 5)")
            control = rounds.differences("p50", "plugin_again", "plugin")
            line("fs_read_dirty_buffer_100k_plugin_aa", rounds.difference("p50", "plugin_again", "plugin"),
                 f"ms (A/A control: the same reads again minus the first, per round, {spread(control)})")
            report("fs_read_dirty_buffer_100k_line_limit_100", timed_reads(
                nvim, base, workspace / "big.txt", line=50_000, limit=100))
            report("fs_read_disk_100k", timed_reads(nvim, base, workspace / "closed.txt"))
        report("fs_read_sdk_floor_100k", sdk_floor(text, base))
