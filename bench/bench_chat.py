"""Chat flood: the plugin against a bare ACP SDK client, in paired rounds.

The demo agent's ``load N 24`` (N = 100k chunks of exactly 24 bytes, pre-serialized so the
agent is never the bottleneck) goes, in every round, to:

- ``raw``: a raw line reader (asyncio ``readuntil`` per line, a prefix check, no parsing): the
  wire's own speed, the ceiling of any client of this agent;
- ``bare``: a bare ACP SDK client that drops every chunk (the SDK's parsing, validation and
  dispatch, nothing else): the protocol ceiling;
- ``plugin``: the plugin under test rendering into the chat buffer of a fresh headless Neovim
  with a UI attached (a process that discards the redraws), so redraw cost counts;
- ``bare_again`` and ``raw_again``: the bare client and the raw reader again — the A/A controls.

``chat_flood_ratio`` is the median over rounds of plugin / bare chunks per second in the same
round (bench/paired.py); ``chat_flood_ratio_aa`` is bare_again / bare. ``chat_flood_raw_ratio``
is plugin / raw, with ``chat_flood_raw_ratio_aa`` (raw_again / raw). ``host_cpu_us_per_chunk`` is
the Python host's CPU time during the flood (/proc) over the chunks, median round. During every
plugin flood ``nvim_eval("1")`` runs every 10 ms from another connection (what a keystroke's RPC
waits for); its percentiles pool every round. Targets: ratio >= 1.0, raw ratio >= 0.8, probe
p99 <= 5 ms, host CPU <= 5 us per chunk.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import time
from collections.abc import Callable
from typing import Any, cast

from harness import (
    AGENT_PYTHONPATH,
    PYTHON,
    LatencyProbe,
    children,
    cpu_seconds,
    demo_agent_lua,
    install_bench_lua,
    listening_nvim,
    percentiles,
    rss_mib,
    sandbox,
    start_session,
    timed_turn,
)
from paired import Rounds, run_rounds, spread
from report import line

CHUNKS = int(os.environ.get("ACP_BENCH_CHUNKS", "100000"))
CHUNK_BYTES = 24
MESSAGE_IDS = os.environ.get("ACP_BENCH_MESSAGE_IDS") == "1"
"""Every chunk carries a ``messageId`` (claude-agent-acp's shape), for bare client and plugin alike."""
LOAD = f"load {{count}} {CHUNK_BYTES}{' 0 ids' if MESSAGE_IDS else ''}"
IDLE_SECONDS = 1.0
TIMEOUT = 300.0
CHAT_STATS = """
for _, buf in ipairs(vim.api.nvim_list_bufs()) do
  if vim.api.nvim_buf_get_name(buf):match('^acp://chat') then
    local lines, chars = vim.api.nvim_buf_get_lines(buf, 0, -1, false), 0
    for _, l in ipairs(lines) do chars = chars + #l end
    return { lines = #lines, chars = chars }
  end
end
return { lines = 0, chars = 0 }
"""


# -- the bare SDK client ---------------------------------------------------------------------


class NullClient:
    """An ACP client that accepts every session update and does nothing with it."""

    def __init__(self) -> None:
        self.updates = 0

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates += 1

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


async def _bare_flood(count: int) -> tuple[float, int]:
    from acp import PROTOCOL_VERSION, spawn_agent_process, text_block

    client = NullClient()
    env = {**os.environ, "PYTHONPATH": AGENT_PYTHONPATH}
    async with spawn_agent_process(cast(Any, client), PYTHON, "-m", "acp_nvim.demo_agent", env=env,
                                   transport_kwargs={"limit": 64 << 20}) as (conn, _proc):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
        await asyncio.sleep(0.1)  # let the commands announcement pass
        before = client.updates
        start = time.perf_counter()
        await conn.prompt(session_id=session.session_id, prompt=[text_block(LOAD.format(count=count))])
        elapsed = time.perf_counter() - start
    return elapsed, client.updates - before


def bare_flood(count: int = CHUNKS) -> dict[str, float]:
    """Chunks/s of the bare client and the CPU seconds it spent (this process, SDK start included)."""
    before = resource.getrusage(resource.RUSAGE_SELF)
    elapsed, updates = asyncio.run(_bare_flood(count))
    after = resource.getrusage(resource.RUSAGE_SELF)
    if updates < count:
        raise RuntimeError(f"the bare client saw {updates} of {count} updates")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {"chunks_per_s": count / elapsed, "cpu_client": cpu}


# -- the raw line reader ---------------------------------------------------------------------

UPDATE_PREFIX = b'{"jsonrpc":"2.0","method":"session/update"'


async def _raw_flood(count: int) -> tuple[float, int]:
    env = {**os.environ, "PYTHONPATH": AGENT_PYTHONPATH}
    proc = await asyncio.create_subprocess_exec(PYTHON, "-m", "acp_nvim.demo_agent", env=env, limit=64 << 20,
                                                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    reader, writer = proc.stdout, proc.stdin

    async def ask(msg_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        writer.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode() + b"\n")
        await writer.drain()
        while True:
            message = json.loads(await reader.readuntil(b"\n"))
            if message.get("id") == msg_id:
                return cast(dict[str, Any], message.get("result") or {})

    try:
        await ask(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        session = await ask(2, "session/new", {"cwd": os.getcwd(), "mcpServers": []})
        await asyncio.sleep(0.1)  # the commands announcement, as for the bare client
        while len(reader._buffer):  # what came meanwhile is not part of the flood
            await reader.readuntil(b"\n")
        text = f"load {count} {CHUNK_BYTES}"
        prompt = {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": text}]}
        start = time.perf_counter()
        writer.write(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt}).encode()
                     + b"\n")
        lines = 0
        while True:
            line = await reader.readuntil(b"\n")
            if line.startswith(UPDATE_PREFIX):
                lines += 1
            elif b'"id":3' in line[:40]:
                break
        return time.perf_counter() - start, lines
    finally:
        writer.close()
        proc.kill()
        await proc.wait()


def raw_flood(count: int = CHUNKS) -> dict[str, float]:
    """Chunks/s a raw line reader takes from the agent (the wire's speed)."""
    elapsed, lines = asyncio.run(_raw_flood(count))
    if lines < count:
        raise RuntimeError(f"the raw reader saw {lines} of {count} lines")
    return {"chunks_per_s": count / elapsed}


# -- the plugin ------------------------------------------------------------------------------


class PluginFlood:
    """One plugin round: a fresh Neovim with a UI, one demo session, one flood; probes pooled."""

    def __init__(self, box: Any) -> None:
        self.box = box
        self.idle: list[float] = []
        self.flood: list[float] = []

    def __call__(self) -> dict[str, float]:
        with listening_nvim(self.box) as nvim:
            rpc = nvim.rpc
            install_bench_lua(rpc)
            start_session(rpc)
            time.sleep(0.3)  # the agent's commands announcement
            host = nvim.host_pid()
            with LatencyProbe(nvim.address) as idle:
                time.sleep(IDLE_SECONDS)
            pids = {"nvim": nvim.proc.pid, **({"host": host} if host else {})}
            if host and children(host):
                pids["agent"] = children(host)[0]
            cpu_before = {name: cpu_seconds(pid) for name, pid in pids.items()}
            rss_before = rss_mib(host) if host else float("nan")
            with LatencyProbe(nvim.address) as busy:
                sent, ended = timed_turn(rpc, LOAD.format(count=CHUNKS), TIMEOUT)
            figures = {"chunks_per_s": CHUNKS / ((ended - sent) / 1e9)}
            figures.update({f"cpu_{name}": cpu_seconds(pids[name]) - before for name, before in cpu_before.items()})
            if "cpu_host" in figures:
                figures["host_us_per_chunk"] = figures["cpu_host"] / CHUNKS * 1e6
            figures["rss_growth"] = (rss_mib(host) if host else float("nan")) - rss_before
            stats = rpc.lua(CHAT_STATS)
            figures["chat_lines"], figures["chat_chars"] = stats["lines"], stats["chars"]
        self.idle += idle.samples
        self.flood += busy.samples
        figures["probe_p99"] = percentiles(busy.samples)["p99"]
        return figures


def report(rounds: Rounds, plugin: PluginFlood) -> None:
    n = rounds.count
    ids = ", each with its messageId" if MESSAGE_IDS else ""
    line("chat_flood_chunks", CHUNKS, f"chunks of {CHUNK_BYTES} bytes{ids} per flood, {n} paired rounds")
    line("chat_flood_bare_sdk", rounds.median("bare", "chunks_per_s"), "chunks/s (median round)")
    line("chat_flood_nvim", rounds.median("plugin", "chunks_per_s"), "chunks/s (median round)")
    ratios = rounds.ratios("chunks_per_s", "plugin", "bare")
    line("chat_flood_ratio", rounds.ratio("chunks_per_s", "plugin", "bare"),
         f"x bare SDK client (median of {n} per-round ratios, {spread(ratios)}; target >= 1.0)")
    control = rounds.ratios("chunks_per_s", "bare_again", "bare")
    line("chat_flood_ratio_aa", rounds.ratio("chunks_per_s", "bare_again", "bare"),
         f"x (A/A control: bare client vs itself, {spread(control)})")
    line("chat_flood_raw_reader", rounds.median("raw", "chunks_per_s"), "chunks/s (median round)")
    raw = rounds.ratios("chunks_per_s", "plugin", "raw")
    line("chat_flood_raw_ratio", rounds.ratio("chunks_per_s", "plugin", "raw"),
         f"x raw line reader (median of {n} per-round ratios, {spread(raw)}; target >= 0.8)")
    raw_control = rounds.ratios("chunks_per_s", "raw_again", "raw")
    line("chat_flood_raw_ratio_aa", rounds.ratio("chunks_per_s", "raw_again", "raw"),
         f"x (A/A control: raw reader vs itself, {spread(raw_control)})")
    if "host_us_per_chunk" in rounds.values["plugin"]:
        per_chunk = rounds.series("plugin", "host_us_per_chunk")
        line("host_cpu_us_per_chunk", rounds.median("plugin", "host_us_per_chunk"),
             f"us of the Python host's CPU per chunk during the flood (median round, {spread(per_chunk)}; target <= 5)")
    idle, flood = percentiles(plugin.idle), percentiles(plugin.flood)
    for stat in ("p50", "p99", "max"):
        line(f"chat_latency_idle_{stat}", idle[stat], "ms")
    for stat in ("p50", "p99", "max"):
        target = "; target <= 5" if stat == "p99" else ""
        line(f"chat_latency_flood_{stat}", flood[stat], f"ms (nvim_eval every 10 ms, all rounds pooled{target})")
    line("chat_latency_flood_p99_median_round", rounds.median("plugin", "probe_p99"), "ms")
    line("chat_flood_cpu_bare_client", rounds.median("bare", "cpu_client"), "s (median round)")
    for name in ("nvim", "host", "agent"):
        if f"cpu_{name}" in rounds.values["plugin"]:
            line(f"chat_flood_cpu_{name}", rounds.median("plugin", f"cpu_{name}"), "s (median round)")
    line("chat_host_rss_growth", rounds.median("plugin", "rss_growth"), "MiB (median round)")
    line("chat_buffer_lines", rounds.median("plugin", "chat_lines"), "lines")
    line("chat_buffer_chars", rounds.median("plugin", "chat_chars"), "chars")


def main() -> None:
    with sandbox(f"{{ agents = {demo_agent_lua()} }}") as box:
        plugin = PluginFlood(box)
        measures: dict[str, Callable[[], dict[str, float]]] = {
            "raw": raw_flood, "bare": bare_flood, "plugin": plugin, "bare_again": bare_flood, "raw_again": raw_flood}
        rounds = run_rounds("chat flood", list(measures), lambda name: measures[name]())
        report(rounds, plugin)
