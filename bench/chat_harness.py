"""Pieces of the chat benchmark: a bare SDK client, a listening Neovim, a UI sink, a latency probe."""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack

ROOT = Path(__file__).resolve().parents[1]
NVIM = str(Path(sys.executable).parent / "nvim")
INIT = str(ROOT / "tests" / "minimal_init.vim")


# -- (a) the protocol ceiling: a client that does nothing with the chunks -----------------


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
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    async with spawn_agent_process(client, sys.executable, "-m", "acp_nvim.demo_agent", env=env,
                                   transport_kwargs={"limit": 64 << 20}) as (conn, _proc):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(ROOT), mcp_servers=[])
        await asyncio.sleep(0.1)  # let the commands announcement pass
        before = client.updates
        start = time.perf_counter()
        await conn.prompt(session_id=session.session_id, prompt=[text_block(f"flood {count}")])
        elapsed = time.perf_counter() - start
    return elapsed, client.updates - before


def bare_sdk_flood(count: int) -> tuple[float, int, float]:
    """Seconds the bare SDK client needs to receive ``flood count``, the updates it saw, and
    the CPU seconds this (client) process spent meanwhile."""
    before = resource.getrusage(resource.RUSAGE_SELF)
    elapsed, updates = asyncio.run(_bare_flood(count))
    after = resource.getrusage(resource.RUSAGE_SELF)
    return elapsed, updates, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


# -- (b) Neovim with the plugin, listening on a socket --------------------------------------


def _isolated_env(base: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "XDG_CONFIG_HOME": str(base / "config"), "XDG_DATA_HOME": str(base / "data"),
        "XDG_STATE_HOME": str(base / "state"), "XDG_CACHE_HOME": str(base / "cache"),
        "NVIM_RPLUGIN_MANIFEST": str(base / "rplugin.vim"), "ACP_NVIM_TEST_PYTHON": sys.executable,
    })
    return env


@contextlib.contextmanager
def listening_nvim() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A headless Neovim with the plugin (remote plugin registered), listening on a socket."""
    with tempfile.TemporaryDirectory(prefix="acp-bench-") as tmp:
        base = Path(tmp)
        env = _isolated_env(base)
        subprocess.run([NVIM, "-u", INIT, "--headless", "+UpdateRemotePlugins", "+qa!"],
                       env=env, check=True, timeout=60, capture_output=True)
        address = str(base / "nvim.sock")
        workspace = base / "workspace"
        workspace.mkdir()
        proc = subprocess.Popen([NVIM, "-u", INIT, "--headless", "--listen", address], env=env,
                                cwd=workspace, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            _wait_path(address)
            yield address, proc
        finally:
            proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
            if proc.poll() is None:
                proc.kill()


def _wait_path(path: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} did not appear")
        time.sleep(0.02)


@contextlib.contextmanager
def discarding_ui(address: str) -> Iterator[subprocess.Popen[bytes]]:
    """A second process attached with nvim_ui_attach that discards every redraw."""
    proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("ui_sink.py")), address],
                            stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        proc.stdout.readline()
        yield proc
    finally:
        proc.kill()
        proc.wait()


# -- a raw msgpack-rpc connection: the latency probe and simple control ---------------------


class RawRpc:
    """A minimal blocking msgpack-rpc client on its own socket (no pynvim event loop)."""

    def __init__(self, address: str) -> None:
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.connect(address)
        self._unpacker = msgpack.Unpacker(raw=False)
        self._next = 0

    def request(self, method: str, *args: Any) -> Any:
        self._next += 1
        msgid = self._next
        self._sock.sendall(msgpack.packb([0, msgid, method, list(args)]))
        while True:
            for message in self._unpacker:
                if message[0] == 1 and message[1] == msgid:
                    if message[2] is not None:
                        raise RuntimeError(f"{method}: {message[2]}")
                    return message[3]
            data = self._sock.recv(1 << 16)
            if not data:
                raise ConnectionError("nvim closed the socket")
            self._unpacker.feed(data)

    def lua(self, code: str, *args: Any) -> Any:
        return self.request("nvim_exec_lua", code, list(args))

    def close(self) -> None:
        self._sock.close()


class LatencyProbe:
    """``nvim_eval("1")`` every ``interval`` seconds from its own connection, in a thread."""

    def __init__(self, address: str, interval: float = 0.010) -> None:
        self._rpc = RawRpc(address)
        self._interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.samples: list[float] = []

    def _run(self) -> None:
        next_at = time.perf_counter()
        while not self._stop.is_set():
            start = time.perf_counter()
            self._rpc.request("nvim_eval", "1")
            self.samples.append((time.perf_counter() - start) * 1000)
            next_at += self._interval
            time.sleep(max(0.0, next_at - time.perf_counter()))

    def __enter__(self) -> LatencyProbe:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._rpc.close()


def percentiles(samples: list[float]) -> dict[str, float]:
    """p50, p99 and max of latency samples in milliseconds."""
    ordered = sorted(samples)
    if not ordered:
        return {"p50": float("nan"), "p99": float("nan"), "max": float("nan")}
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {"p50": statistics.median(ordered), "p99": p99, "max": ordered[-1]}


# -- the Python host process ---------------------------------------------------------------


def children(pid: int) -> list[int]:
    """Direct child processes of ``pid`` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            stat = Path(f"/proc/{entry}/stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def python_host_pid(nvim_pid: int) -> int | None:
    """The rplugin host: the child of Neovim that runs Python."""
    for child in children(nvim_pid):
        with contextlib.suppress(OSError):
            if b"python" in Path(f"/proc/{child}/cmdline").read_bytes():
                return child
    return None


def rss_kib(pid: int) -> int:
    """Resident set size of ``pid`` in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` so far, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
