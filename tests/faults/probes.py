"""What a user would feel while a fault plays out: a UI, typed keys, and the RPC latency.

- ``UiSink`` attaches as a UI (``nvim_ui_attach``), so Neovim renders and redraws as it
  would for a terminal, and discards the redraws.
- ``KeyProbe`` types one key every ``interval`` through ``nvim_input`` from its own
  connection. Each key is mapped (in every mode) to a ``<Cmd>`` that notifies the probe
  back, so the probe knows when the key *landed*; the worst delay is the typed-key stall.
  Keys rotate through F13..F37 so a key swallowed by a prompt (``getchar()``) cannot be
  mistaken for a later one: a landing settles every older key still in flight.
- ``RpcProbe`` calls ``nvim_eval("1")`` every 10 ms and records the round trips.
- ``LoopProbe`` times, inside Neovim, each stretch its event loop spends busy between two waits
  for input (a libuv check handle when it wakes, a prepare handle when it goes back to wait):
  a key stall with no busy stretch of its size was the machine's noise, not Neovim's work.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from .rpc import Rpc, RpcError

KEY_COUNT = 25
KEYS = [f"<F{13 + i}>" for i in range(KEY_COUNT)]
KEY_INTERVAL = 0.010
RPC_INTERVAL = 0.010

MAP_LUA = """
local chan, keys = ...
_G.__fault_probe = { chan = chan, landed = 0 }
for i, lhs in ipairs(keys) do
  local rhs = ('<Cmd>lua __fault_probe_landed(%d)<CR>'):format(i)
  vim.keymap.set({ 'n', 'v', 'o', 'i', 'c', 't', 'l' }, lhs, rhs, { silent = true })
end
function _G.__fault_probe_landed(i)
  _G.__fault_probe.landed = _G.__fault_probe.landed + 1
  vim.rpcnotify(_G.__fault_probe.chan, 'fault_key_landed', i)
end
"""


class UiSink:
    """A UI that attaches with ``nvim_ui_attach`` and throws every redraw away."""

    def __init__(self, address: str, width: int = 160, height: int = 48) -> None:
        self._rpc = Rpc(address, timeout=None)  # type: ignore[arg-type]
        self._rpc.request("nvim_ui_attach", width, height, {"ext_linegrid": True, "rgb": True})
        self._thread = threading.Thread(target=self._drain, daemon=True, name="ui-sink")
        self._thread.start()

    def _drain(self) -> None:
        try:
            while self._rpc.sock.recv(1 << 20):
                pass
        except OSError:
            pass

    def close(self) -> None:
        self._rpc.close()


@dataclass
class KeyStats:
    """The typed-key probe's findings."""

    sent: int = 0
    landed: int = 0
    swallowed: int = 0
    worst_ms: float = 0.0
    worst_at: float = 0.0
    """Seconds since the probe started when the worst stall began."""
    stalls: list[tuple[float, float]] = field(default_factory=list)
    """(start offset s, stall ms) of every key that took longer than 50 ms."""


class KeyProbe:
    """Types a key every ``interval`` and measures how long each takes to land."""

    def __init__(self, address: str, interval: float = KEY_INTERVAL) -> None:
        self._interval = interval
        self._rpc = Rpc(address, timeout=None)  # type: ignore[arg-type]
        self._rpc.lua(MAP_LUA, self._rpc.channel_id(), KEYS)
        self._rpc.on_notification = self._on_notification
        self._lock = threading.Lock()
        self._inflight: deque[tuple[int, float]] = deque()  # (key index, sent at)
        self._stop = threading.Event()
        self._paused = threading.Event()
        self.stats = KeyStats()
        self.started = time.perf_counter()
        self._threads = [threading.Thread(target=self._send_loop, daemon=True, name="key-send"),
                         threading.Thread(target=self._read_loop, daemon=True, name="key-read")]
        for thread in self._threads:
            thread.start()

    def pause(self) -> None:
        """Stop typing (keys in flight still count); ``resume`` types again."""
        self._paused.set()

    def resume(self) -> None:
        self._paused.clear()

    def pending_ms(self) -> float:
        """How long the oldest key in flight has waited so far (0 when none)."""
        with self._lock:
            if not self._inflight:
                return 0.0
            return (time.perf_counter() - self._inflight[0][1]) * 1000

    def _send_loop(self) -> None:
        index = 0
        next_at = time.perf_counter()
        while not self._stop.is_set():
            if not self._paused.is_set():
                with self._lock:
                    self._inflight.append((index % KEY_COUNT, time.perf_counter()))
                    self.stats.sent += 1
                try:
                    self._rpc.notify("nvim_input", KEYS[index % KEY_COUNT])
                except OSError:
                    return
                index += 1
            next_at += self._interval
            time.sleep(max(0.0, next_at - time.perf_counter()))

    def _read_loop(self) -> None:
        try:
            while not self._stop.is_set():
                self._rpc.read_message()
        except (OSError, ConnectionError, ValueError):
            return

    def _on_notification(self, method: str, args: list[Any]) -> None:
        if method != "fault_key_landed" or not args:
            return
        now = time.perf_counter()
        key = int(args[0]) - 1
        with self._lock:
            while self._inflight:
                index, sent = self._inflight.popleft()
                if index == key:
                    self._record(sent, now)
                    return
                self.stats.swallowed += 1  # an older key that never landed: consumed by a prompt

    def _record(self, sent: float, now: float) -> None:
        stall = (now - sent) * 1000
        self.stats.landed += 1
        if stall > 50:
            self.stats.stalls.append((sent - self.started, stall))
        if stall > self.stats.worst_ms:
            self.stats.worst_ms, self.stats.worst_at = stall, sent - self.started

    def stop(self) -> KeyStats:
        """Stop typing; keys still in flight count as stalled until now."""
        self._stop.set()
        self._threads[0].join()
        pending = self.pending_ms()
        if pending > self.stats.worst_ms:
            self.stats.worst_ms = pending
        self._rpc.close()
        return self.stats


class RpcProbe:
    """``nvim_eval("1")`` every 10 ms from its own connection; the worst round trip."""

    def __init__(self, address: str, interval: float = RPC_INTERVAL) -> None:
        self._rpc = Rpc(address, timeout=None)  # type: ignore[arg-type]
        self._interval = interval
        self._stop = threading.Event()
        self.samples: list[float] = []
        self._thread = threading.Thread(target=self._run, daemon=True, name="rpc-probe")
        self._thread.start()

    def _run(self) -> None:
        next_at = time.perf_counter()
        while not self._stop.is_set():
            start = time.perf_counter()
            try:
                self._rpc.request("nvim_eval", "1")
            except (OSError, ConnectionError):
                return
            self.samples.append((time.perf_counter() - start) * 1000)
            next_at += self._interval
            time.sleep(max(0.0, next_at - time.perf_counter()))

    def worst_ms(self) -> float:
        return max(self.samples, default=0.0)

    def stop(self) -> float:
        self._stop.set()
        self._rpc.close()
        return self.worst_ms()


LOOP_LUA = """
local uv = vim.uv
local P = { worst = 0, worst_at = 0, long = {} }
_G.__fault_loop = P
local start = uv.hrtime()
local woke
P.check, P.prepare = uv.new_check(), uv.new_prepare()
P.check:start(function() woke = uv.hrtime() end)
P.prepare:start(function()
  if not woke then return end
  local busy = (uv.hrtime() - woke) / 1e6
  if busy > P.worst then P.worst, P.worst_at = busy, (woke - start) / 1e9 end
  if busy > 16 and #P.long < 200 then P.long[#P.long + 1] = { (woke - start) / 1e9, busy } end
  woke = nil
end)
"""


class LoopProbe:
    """Neovim's own view of its event loop: the longest busy stretch between two waits for input."""

    def __init__(self, address: str) -> None:
        self._rpc = Rpc(address)
        self._rpc.lua(LOOP_LUA)
        self.started = time.perf_counter()
        self.worst_ms = 0.0
        self.worst_at = 0.0
        self.long: list[tuple[float, float]] = []
        """(seconds since the probe started, ms) of every stretch over one frame (16 ms)."""

    def stop(self) -> None:
        try:
            found = self._rpc.lua("local P = _G.__fault_loop; P.check:stop(); P.prepare:stop()"
                                  " return { P.worst, P.worst_at, P.long }")
            self.worst_ms, self.worst_at = float(found[0]), float(found[1])
            self.long = [(float(at), float(ms)) for at, ms in found[2]]
        except (OSError, ConnectionError, RpcError, TimeoutError):
            pass  # Neovim is gone or blocked: the key probe says so
        self._rpc.close()


class DialogWatcher:
    """A user who answers Neovim's blocking questions (``confirm()``-style, mode ``r?``; the
    ``-- More --`` prompt, ``rm``) with <Esc>, the safe answer; each one is recorded."""

    MODES = ("r?", "rm")

    def __init__(self, address: str, started: float, interval: float = 0.05) -> None:
        self._rpc = Rpc(address, timeout=None)  # type: ignore[arg-type]
        self._interval = interval
        self._stop = threading.Event()
        self.seen: list[tuple[float, str]] = []
        self.started = started
        self._thread = threading.Thread(target=self._run, daemon=True, name="dialogs")
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                mode = self._rpc.request("nvim_get_mode")["mode"]  # a fast call: answered even when blocked
                if mode in self.MODES:
                    self.seen.append((time.perf_counter() - self.started, mode))
                    self._rpc.request("nvim_input", "<Esc>")
            except (OSError, ConnectionError, ValueError):
                return

    def stop(self) -> None:
        self._stop.set()
        self._rpc.close()


class Probes:
    """The UI, the typed keys, the RPC probe and the dialog watcher of one case, stopped once."""

    def __init__(self, address: str) -> None:
        self.ui = UiSink(address)
        self.keys = KeyProbe(address)
        self.rpc = RpcProbe(address)
        self.loop = LoopProbe(address)
        self.dialogs = DialogWatcher(address, self.keys.started)
        self.key_stats: KeyStats | None = None
        self.rpc_worst_ms = 0.0

    def stop(self) -> None:
        if self.key_stats is not None:
            return
        self.key_stats = self.keys.stop()
        self.loop.stop()
        self.rpc_worst_ms = self.rpc.stop()
        self.dialogs.stop()
        self.ui.close()
