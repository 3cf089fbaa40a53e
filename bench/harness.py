"""What every benchmark shares: the plugin under test, a sandboxed Neovim, raw RPC, probes, /proc.

The plugin under test is this checkout, or the one named by ``BENCH_PLUGIN_ROOT`` (an old
checkout, for before/after figures in one sitting). Everything else — this harness, the
agents the benchmarks talk to (``AGENT_PYTHONPATH``: the demo agent of *this* checkout, so
both sides of a before/after talk to the same agent), the Neovim binary and the Python
interpreter — stays the same whichever plugin is measured.
"""

from __future__ import annotations

import contextlib
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import msgpack

ROOT = Path(__file__).resolve().parents[1]
PLUGIN_ROOT = Path(os.environ.get("BENCH_PLUGIN_ROOT") or ROOT).resolve()
NVIM = str(Path(sys.executable).parent / "nvim")
PYTHON = sys.executable
AGENT_PYTHONPATH = str(ROOT / "python")
"""PYTHONPATH of the benchmarks' agents: this checkout's demo agent (it has the ``load`` scenario)."""

T = TypeVar("T")
TURN_SETTLE = 0.1
"""After a turn's end: time for rendering still queued to reach the chat buffer."""

INIT = """\
" acp.nvim benchmark init: like tests/minimal_init.vim, for the plugin under test.
let g:python3_host_prog = {python}
let g:acp_nvim_python = {python}
let g:loaded_python_provider = 0
let g:loaded_ruby_provider = 0
let g:loaded_node_provider = 0
let g:loaded_perl_provider = 0
set noswapfile shortmess+=I
filetype plugin on
"""


def init_text(plugin_root: Path | None, host_prog: str, setup: str | None) -> str:
    """The init file: the common settings, the plugin on the runtimepath, and its setup() call."""
    text = INIT.format(python=vim_string(host_prog))
    if plugin_root is not None:
        text += f"execute 'set runtimepath^=' . fnameescape({vim_string(str(plugin_root))})\n"
    if setup is not None:
        text += f"lua require('acp_nvim').setup({setup})\n"
    return text


def vim_string(text: str) -> str:
    """``text`` as a Vim script single-quoted string."""
    return "'" + text.replace("'", "''") + "'"


def plugin_label() -> str:
    """The plugin under test: its path, and its commit when it is a git checkout."""
    try:
        commit = subprocess.run(["git", "-C", str(PLUGIN_ROOT), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = "not a git checkout"
    return f"{PLUGIN_ROOT} ({commit})"


def demo_spec(**env: str) -> str:
    """This checkout's demo agent as a Lua agent spec, with ``env`` added to its environment."""
    variables = {"PYTHONPATH": AGENT_PYTHONPATH, **env}
    pairs = ", ".join(f"{name} = {lua_string(value)}" for name, value in variables.items())
    return f"{{ command = {lua_string(PYTHON)}, args = {{ '-m', 'acp_nvim.demo_agent' }}, env = {{ {pairs} }} }}"


def demo_agent_lua() -> str:
    """A Lua table for ``setup({agents = ...})``: ``demo`` replaced by this checkout's demo agent."""
    return f"{{ demo = {demo_spec()} }}"


def lua_string(text: str) -> str:
    """``text`` as a Lua single-quoted string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def wait_for(probe: Callable[[], T | None], timeout: float, what: str, interval: float = 0.01) -> T:
    """Poll ``probe`` until it returns something truthy; raise TimeoutError naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


# -- a sandboxed Neovim with the plugin under test --------------------------------------------


@dataclass(frozen=True)
class Sandbox:
    """Isolated XDG dirs, a registered remote plugin, an init file and a workspace."""

    base: Path
    env: dict[str, str]
    init: Path
    workspace: Path


@contextlib.contextmanager
def sandbox(setup: str | None = None, *, plugin_root: Path | None = PLUGIN_ROOT,
            host_prog: str = PYTHON) -> Iterator[Sandbox]:
    """A sandbox whose init loads ``plugin_root`` (None: no plugin) and, given ``setup`` (a Lua
    table), calls ``require('acp_nvim').setup(setup)`` as a user's init would."""
    with tempfile.TemporaryDirectory(prefix="acp-bench-") as tmp:
        base = Path(tmp)
        env = {**os.environ, "XDG_CONFIG_HOME": str(base / "config"), "XDG_DATA_HOME": str(base / "data"),
               "XDG_STATE_HOME": str(base / "state"), "XDG_CACHE_HOME": str(base / "cache"),
               "NVIM_RPLUGIN_MANIFEST": str(base / "rplugin.vim")}
        init = base / "init.vim"
        init.write_text(init_text(plugin_root, host_prog, setup))
        workspace = base / "workspace"
        workspace.mkdir()
        if plugin_root is not None:
            subprocess.run([NVIM, "-u", str(init), "--headless", "+UpdateRemotePlugins", "+qa!"],
                           env=env, check=True, timeout=60, capture_output=True)
        yield Sandbox(base, env, init, workspace)


@dataclass
class Nvim:
    """A running Neovim: its socket, its process and a control connection."""

    address: str
    proc: subprocess.Popen[bytes]
    rpc: RawRpc

    def host_pid(self) -> int | None:
        """The Python rplugin host, once started."""
        return python_host_pid(self.proc.pid)


@contextlib.contextmanager
def listening_nvim(box: Sandbox, *, ui: bool = True) -> Iterator[Nvim]:
    """A fresh headless Neovim on a socket in ``box``; with ``ui``, a UI that discards redraws
    is attached first (so Neovim renders, as for a terminal)."""
    address = str(box.base / f"nvim-{time.monotonic_ns()}.sock")
    proc = subprocess.Popen([NVIM, "-u", str(box.init), "--headless", "--listen", address], env=box.env,
                            cwd=box.workspace, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: os.path.exists(address), 10, "nvim to listen")
        with discarding_ui(address) if ui else contextlib.nullcontext():
            rpc = RawRpc(address)
            try:
                yield Nvim(address, proc, rpc)
            finally:
                with contextlib.suppress(OSError, RuntimeError, ConnectionError):
                    rpc.request("nvim_command", "silent! doautocmd VimLeavePre")
                rpc.close()
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(5)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


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


# -- the Lua side of the measurements ----------------------------------------------------------

BENCH_LUA = """
local B = { keys = {}, turns = 0 }
_G.acp_bench = B
local now = vim.uv.hrtime
local group = vim.api.nvim_create_augroup('acp_bench', { clear = true })
vim.api.nvim_create_autocmd('User', { group = group, pattern = 'AcpNvimSessionStart', callback = function(ev)
  B.session_start = B.session_start or now()
  B.session = B.session or (ev.data and ev.data.session)
end })
vim.api.nvim_create_autocmd('User', { group = group, pattern = 'AcpNvimTurnEnd', callback = function()
  B.turn_end = now()
  B.turns = B.turns + 1
end })
-- a key that lands in any mode: its timestamp is when Neovim processed it
vim.keymap.set({ 'n', 'i', 'v', 'o', 'c', 't' }, '<F20>', function() B.keys[#B.keys + 1] = now() end)

-- Neovim's own view of its loop: each stretch it spends busy between two waits for input (a check
-- handle when it wakes, a prepare handle when it goes back to wait), in wall time and in the CPU
-- time Neovim used meanwhile (a stretch that other processes' work stretched shows little CPU);
-- B.loop_reset() starts a count
B.loop = { worst = 0, over = 0, cpu_worst = 0 }
function B.loop_reset() B.loop = { worst = 0, over = 0, cpu_worst = 0 } end
local function cpu_ns()
  local r = vim.uv.getrusage()
  return (r.utime.sec + r.stime.sec) * 1e9 + (r.utime.usec + r.stime.usec) * 1e3
end
local woke, woke_cpu
B.check, B.prepare = vim.uv.new_check(), vim.uv.new_prepare()
B.check:start(function() woke, woke_cpu = now(), cpu_ns() end)
B.prepare:start(function()
  if not woke then return end
  local busy, cpu = (now() - woke) / 1e6, (cpu_ns() - woke_cpu) / 1e6
  woke = nil
  if busy > B.loop.worst then B.loop.worst = busy end
  if cpu > B.loop.cpu_worst then B.loop.cpu_worst = cpu end
  if busy > 16 then B.loop.over = B.loop.over + 1 end
end)

-- "the chat shows the agent ready": a chat window whose text or virtual text says idle/ready
local function chat_text(buf)
  local parts = vim.api.nvim_buf_get_lines(buf, 0, 50, false)
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(buf, -1, 0, -1, { details = true, limit = 200 })) do
    for _, chunks in ipairs(mark[4].virt_lines or { mark[4].virt_text or {} }) do
      for _, chunk in ipairs(chunks) do parts[#parts + 1] = chunk[1] end
    end
  end
  return table.concat(parts, '\\n'):lower()
end
function B.chat_shows_ready()
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local buf = vim.api.nvim_win_get_buf(win)
    if vim.api.nvim_buf_get_name(buf):match('^acp://chat') then
      local text = chat_text(buf)
      if text:find('%f[%w]idle%f[%W]') or text:find('%f[%w]ready%f[%W]') then return true end
    end
  end
  return false
end
-- checked when Neovim draws: the time the ready chat is first on screen
local ns = vim.api.nvim_create_namespace('acp_bench')
vim.api.nvim_set_decoration_provider(ns, { on_start = function()
  if B.session_start and not B.ready_drawn and B.chat_shows_ready() then B.ready_drawn = now() end
  return false
end })

-- the last change to any chat buffer: a turn is over when its last chunk is in the buffer too
B.tracked = {}
function B.track_chat_changes()
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if not B.tracked[buf] and vim.api.nvim_buf_get_name(buf):match('^acp://chat') then
      B.tracked[buf] = vim.api.nvim_buf_attach(buf, false, { on_lines = function() B.last_change = now() end })
    end
  end
end

-- the first line containing B.marker to appear in any buffer
function B.watch_for(marker)
  B.marker, B.marker_seen = marker, nil
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      vim.api.nvim_buf_attach(buf, false, { on_lines = function(_, b, _, first, _, last)
        if B.marker_seen or B.marker ~= marker then return true end
        for _, text in ipairs(vim.api.nvim_buf_get_lines(b, first, last, false)) do
          if text:find(marker, 1, true) then B.marker_seen = now() return true end
        end
      end })
    end
  end
end
"""


def dismiss_prompt(rpc: RawRpc) -> None:
    """Answer Neovim's hit-enter prompt (a message longer than the command line, such as the one
    ``:Ai log export`` ends with), as a user would: until then Neovim serves no request."""
    mode = rpc.request("nvim_get_mode")  # a fast call: answered even while Neovim waits for a key
    if mode.get("blocking") and str(mode.get("mode", "")).startswith("r"):
        rpc.request("nvim_input", "<CR>")


def install_bench_lua(rpc: RawRpc) -> None:
    """Timestamps of session start, turn ends, drawn readiness, typed keys and watched text."""
    rpc.lua(BENCH_LUA)


def bench_value(rpc: RawRpc, key: str) -> Any:
    """``_G.acp_bench[key]`` in Neovim."""
    return rpc.lua("return _G.acp_bench[...]", key)


def start_session(rpc: RawRpc, command: str = "Ai new", timeout: float = 60.0) -> int:
    """Run ``command`` and wait for the session to start; returns when it started (hrtime ns)."""
    rpc.lua("_G.acp_bench.session_start = nil; vim.cmd(...)", command)
    return wait_for(lambda: bench_value(rpc, "session_start"), timeout, "the session to start")


def timed_turn(rpc: RawRpc, prompt: str, timeout: float) -> tuple[int, int]:
    """Send ``prompt`` with ``:Ai send`` and wait for its turn to end: (sent, ended) in hrtime ns.

    The end is the later of AcpNvimTurnEnd and the chat's last change: a plugin that announced
    the end before its rendering caught up would otherwise look faster than it is."""
    turns = bench_value(rpc, "turns")
    rpc.lua("_G.acp_bench.track_chat_changes()")
    sent = rpc.lua("local t = vim.uv.hrtime(); vim.cmd('Ai send ' .. ...); return t", prompt)
    wait_for(lambda: bench_value(rpc, "turns") > turns, timeout, f"the end of the turn {prompt!r}", 0.02)
    time.sleep(TURN_SETTLE)
    return sent, max(bench_value(rpc, "turn_end"), bench_value(rpc, "last_change") or 0)


# -- a raw msgpack-rpc connection: control, probes, typed keys -------------------------------


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

    def notify(self, method: str, *args: Any) -> None:
        """Send without waiting for Neovim (it never blocks on a busy Neovim)."""
        self._sock.sendall(msgpack.packb([2, method, list(args)]))

    def lua(self, code: str, *args: Any) -> Any:
        return self.request("nvim_exec_lua", code, list(args))

    def close(self) -> None:
        self._sock.close()


class _Ticker:
    """Runs ``tick`` every ``interval`` seconds in a thread, on a steady schedule."""

    def __init__(self, interval: float) -> None:
        self._interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def tick(self) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        next_at = time.perf_counter()
        while not self._stop.is_set():
            self.tick()
            next_at += self._interval
            time.sleep(max(0.0, next_at - time.perf_counter()))

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


class LatencyProbe(_Ticker):
    """``nvim_eval("1")`` every 10 ms from its own connection: what a keystroke's RPC waits for."""

    def __init__(self, address: str, interval: float = 0.010) -> None:
        super().__init__(interval)
        self._rpc = RawRpc(address)
        self.samples: list[float] = []

    def tick(self) -> None:
        start = time.perf_counter()
        self._rpc.request("nvim_eval", "1")
        self.samples.append((time.perf_counter() - start) * 1000)

    def __enter__(self) -> LatencyProbe:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self._rpc.close()


class KeyTyper(_Ticker):
    """Types ``<F20>`` every 10 ms through ``nvim_input`` from its own connection (never waiting
    for Neovim); BENCH_LUA's mapping stamps each key when Neovim processes it."""

    def __init__(self, address: str, interval: float = 0.010) -> None:
        super().__init__(interval)
        self._rpc = RawRpc(address)
        self.sent: list[int] = []

    def tick(self) -> None:
        self.sent.append(time.monotonic_ns())
        self._rpc.notify("nvim_input", "<F20>")

    def stop_and_collect(self, control: RawRpc, timeout: float = 30.0) -> list[tuple[int, float]]:
        """Stop typing, wait for every key to land: (sent ns, stall ms) per key, in order."""
        self.stop()
        wait_for(lambda: len(bench_value(control, "keys")) >= len(self.sent), timeout, "every typed key to land")
        self._rpc.close()
        landed = bench_value(control, "keys")
        return [(sent, (land - sent) / 1e6) for sent, land in zip(self.sent, landed, strict=False)]


def percentiles(samples: list[float]) -> dict[str, float]:
    """p50, p99 and max of latency samples in milliseconds."""
    ordered = sorted(samples)
    if not ordered:
        return {"p50": float("nan"), "p99": float("nan"), "max": float("nan")}
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {"p50": statistics.median(ordered), "p99": p99, "max": ordered[-1]}


# -- processes, from /proc ---------------------------------------------------------------------


def children(pid: int) -> list[int]:
    """Direct child processes of ``pid``."""
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
    """The plugin's Python host: the child of Neovim that runs Python (a remote plugin host in
    checkouts before the plugin started its own)."""
    for child in children(nvim_pid):
        with contextlib.suppress(OSError):
            if b"python" in Path(f"/proc/{child}/cmdline").read_bytes():
                return child
    return None


def rss_mib(pid: int) -> float:
    """Resident set size of ``pid`` in MiB."""
    for text in Path(f"/proc/{pid}/status").read_text().splitlines():
        if text.startswith("VmRSS:"):
            return int(text.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` so far, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class PeakRss(_Ticker):
    """Samples a process's resident memory every 20 ms in a thread; keeps the peak."""

    def __init__(self, pid: int) -> None:
        super().__init__(0.02)
        self.pid = pid
        self.peak = rss_mib(pid)

    def tick(self) -> None:
        with contextlib.suppress(OSError):
            self.peak = max(self.peak, rss_mib(self.pid))

    def __enter__(self) -> PeakRss:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
