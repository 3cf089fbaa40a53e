"""fs/read_text_file benchmark (issue 4): a 100,000-line buffer with unsaved changes.

A real headless Neovim runs the plugin; a real agent process (tests/e2e/files_probe_agent.py)
sends ``fs/read_text_file`` requests one after another and times each round trip over
JSON-RPC: agent → rplugin host → Lua (changed lines only) → host → agent. For scale, the
same agent is also timed against a bare ACP SDK client that answers with a ready string
(``sdk_floor``: JSON-RPC alone), and with the plugin's protocol log turned off
(``ACP_BENCH_LOG=0``). ``..._client_side`` is the plugin's own share of each read, from
the session log: the request line read → the response line written. Printed as
``name: value unit``. Target: p50 <= 20 ms for the whole dirty buffer.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pynvim

ROOT = Path(__file__).resolve().parents[1]
NVIM = str(Path(sys.executable).parent / "nvim")
INIT = str(ROOT / "tests" / "minimal_init.vim")
PROBE = str(ROOT / "tests" / "e2e" / "files_probe_agent.py")
LINES = 100_000
READS = int(os.environ.get("ACP_BENCH_READS", "100"))
WARMUP = 10
TIMEOUT = 300.0

SETUP = """
local python, script = ...
require('acp_nvim').setup({
  agents = { probe = { command = python, args = { script } } },
  default_agent = 'probe',
  -- bytes unbounded here so every read's time to response stays in the log (client_side_ms)
  log = { max_entries = tonumber(os.getenv('ACP_BENCH_LOG') or '5000'), max_bytes = 2 ^ 31 },
})
"""


def line(name: str, value: float, unit: str) -> None:
    print(f"{name}: {value:.4g} {unit}", flush=True)


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def start_nvim(base: Path) -> pynvim.Nvim:
    env = {"XDG_CONFIG_HOME": base / "config", "XDG_DATA_HOME": base / "data", "XDG_STATE_HOME": base / "state",
           "XDG_CACHE_HOME": base / "cache", "NVIM_RPLUGIN_MANIFEST": base / "rplugin.vim"}
    os.environ.update({key: str(value) for key, value in env.items()})
    os.environ["ACP_NVIM_TEST_PYTHON"] = sys.executable
    subprocess.run([NVIM, "-u", INIT, "--headless", "+UpdateRemotePlugins", "+qa!"], check=True, timeout=60,
                   capture_output=True)
    return pynvim.attach("child", argv=[NVIM, "-u", INIT, "--embed", "--headless"])


def timed_reads(nvim: pynvim.Nvim, base: Path, path: Path, **window: int) -> list[float]:
    out = base / f"bench-{time.monotonic_ns()}.json"
    request = {"op": "bench", "path": str(path), "n": READS + WARMUP, "out": str(out), **window}
    nvim.command("Ai send " + json.dumps(request))
    deadline = time.monotonic() + TIMEOUT
    while not (out.exists() and out.stat().st_size):
        if time.monotonic() > deadline:
            raise TimeoutError("the probe agent did not report")
        time.sleep(0.05)
    return json.loads(out.read_text())["ms"][WARMUP:]


def report(name: str, samples: list[float]) -> None:
    line(f"{name}_p50", percentile(samples, 0.50), "ms")
    line(f"{name}_p99", percentile(samples, 0.99), "ms")


def client_side_ms(nvim: pynvim.Nvim, base: Path) -> list[float]:
    """The plugin's own share of each read: request line in → response line out, from the session log."""
    export = base / "log.jsonl"
    nvim.command(f"Ai log export {export}")
    deadline = time.monotonic() + 30
    while not (export.exists() and export.stat().st_size):
        if time.monotonic() > deadline:
            raise TimeoutError("the log export did not appear")
        time.sleep(0.05)
    time.sleep(0.2)
    entries = [json.loads(raw) for raw in export.read_text().splitlines()[1:]]
    answered = [e["elapsed_ms"] for e in entries
                if e.get("method") == "fs/read_text_file" and e.get("elapsed_ms") is not None]
    return answered[WARMUP:]


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
    async with spawn_agent_process(Client(), sys.executable, PROBE, transport_kwargs={"limit": 64 << 20}) as (
            conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=fs)
        session = await conn.new_session(cwd=str(out.parent), mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block(json.dumps(request))])


def sdk_floor(text: str, base: Path) -> list[float]:
    out = base / "floor.json"
    asyncio.run(_sdk_floor(text, out))
    return json.loads(out.read_text())["ms"][WARMUP:]


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="acp-bench-files-") as tmp:
        base = Path(tmp)
        workspace = base / "workspace"
        workspace.mkdir()
        text = "".join(f"line {n:06d}: the quick brown fox jumps over the lazy dog\n" for n in range(LINES))
        (workspace / "big.txt").write_text(text)
        (workspace / "closed.txt").write_text(text)
        nvim = start_nvim(base)
        try:
            nvim.command(f"cd {workspace}")
            nvim.exec_lua(SETUP, sys.executable, PROBE)
            nvim.command(f"edit {workspace / 'big.txt'}")
            nvim.command("normal! 50000GAunsaved edit\x1b")
            assert nvim.current.buffer.options["modified"]
            line("fs_read_buffer_lines", LINES, "lines")
            line("fs_read_buffer_bytes", len(text.encode()) + len("unsaved edit"), "bytes")
            report("fs_read_dirty_buffer_100k", timed_reads(nvim, base, workspace / "big.txt"))
            report("fs_read_dirty_buffer_100k_client_side", client_side_ms(nvim, base))
            report("fs_read_dirty_buffer_100k_line_limit_100", timed_reads(
                nvim, base, workspace / "big.txt", line=50_000, limit=100))
            report("fs_read_disk_100k", timed_reads(nvim, base, workspace / "closed.txt"))
        finally:
            nvim.command("silent! doautocmd VimLeavePre")
            nvim.close()
        report("fs_read_sdk_floor_100k", sdk_floor(text, base))


if __name__ == "__main__":
    main()
