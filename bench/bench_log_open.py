"""``:Ai log`` of a session that put 1M lines through the wire, with a UI attached and typed keys.

One Neovim with a UI; one demo session whose log keeps everything (level trace, ``max_entries``
1M, ``max_bytes`` 1 GiB: every streamed chunk is an entry); the demo agent's ``load`` floods it
with ``LINES`` chunks. Then, with a key typed every 10 ms:

- ``log_open_1m_ms``: ``:Ai log`` until the log buffer shows the newest entry (the prompt's
  answer). Target: 200 ms. Then the user scrolls up through ``SCROLL_PAGES`` pages of older
  entries (each drawn above as the window reaches the top).
- ``log_open_1m_again_ms``: the same after the buffer was wiped: the A/A control.
- ``log_tail_lag_ms``: with the log open, another flood of ``TAIL`` chunks: from the turn's end
  until its answer is in the log buffer (the log tails live).
- ``log_open_key_stall_ms`` / ``log_tail_key_stall_ms``: the worst typed key while the log
  opened and filled / while it tailed the flood; ``log_idle_key_stall_ms`` the same typing with
  nothing happening (A/A). Neovim's own longest busy stretch is printed beside each.

``ACP_BENCH_LOG_LINES`` (default 1000000) and ``ACP_BENCH_LOG_TAIL`` (default 100000) size it.
"""

from __future__ import annotations

import os
import time

from harness import (
    KeyTyper,
    RawRpc,
    bench_value,
    demo_agent_lua,
    install_bench_lua,
    listening_nvim,
    sandbox,
    start_session,
    timed_turn,
    wait_for,
)
from report import line

LINES = int(os.environ.get("ACP_BENCH_LOG_LINES", "1000000"))
TAIL = int(os.environ.get("ACP_BENCH_LOG_TAIL", "100000"))
TIMEOUT = 900.0
SCROLL_PAGES = 10
LOG = f"{{ level = 'trace', max_entries = {LINES + 1000}, max_bytes = {1 << 30} }}"
SETUP = f"{{ agents = {demo_agent_lua()}, log = {LOG} }}"

WATCH_LOG = """
-- the time a line holding `needle` appears in a log buffer made from now on
local needle = ...
local B = _G.acp_bench
B.log_seen = nil
B.log_watch = vim.api.nvim_create_autocmd('BufNew', { callback = function(ev)
  vim.api.nvim_buf_attach(ev.buf, false, { on_lines = function(_, buf, _, first, _, last)
    if B.log_seen then return true end
    for _, text in ipairs(vim.api.nvim_buf_get_lines(buf, first, last, false)) do
      if text:find(needle, 1, true) then B.log_seen = vim.uv.hrtime() return true end
    end
  end })
end })
"""


def log_lines(rpc: RawRpc) -> int:
    return int(rpc.lua("local b = vim.fn.bufnr('^acp://log') return b < 0 and 0 or vim.api.nvim_buf_line_count(b)"))


def open_log(rpc: RawRpc, needle: str) -> float:
    """``:Ai log`` until ``needle`` is in the new log buffer: ms."""
    rpc.lua(WATCH_LOG, needle)
    sent = rpc.lua("local t = vim.uv.hrtime(); vim.cmd('Ai log'); return t")
    seen = wait_for(lambda: bench_value(rpc, "log_seen"), 60, "the log's newest entry", 0.01)
    rpc.lua("vim.api.nvim_del_autocmd(_G.acp_bench.log_watch)")
    return (seen - sent) / 1e6


def typing(rpc: RawRpc, address: str, action: object) -> tuple[float, float]:
    """Run ``action()`` with a key typed every 10 ms: (worst key ms, Neovim's longest busy stretch ms)."""
    rpc.lua("_G.acp_bench.keys = {} _G.acp_bench.loop_reset()")
    typer = KeyTyper(address)
    typer.start()
    action()  # type: ignore[operator]
    keys = typer.stop_and_collect(rpc, timeout=120)
    return max(stall for _, stall in keys), float(rpc.lua("return _G.acp_bench.loop.worst"))


def loop_cpu(rpc: RawRpc) -> float:
    return float(rpc.lua("return _G.acp_bench.loop.cpu_worst"))


def main() -> None:
    figures: dict[str, float] = {}
    with sandbox(SETUP) as box, listening_nvim(box) as nvim:
        rpc = nvim.rpc
        install_bench_lua(rpc)
        start_session(rpc)
        time.sleep(0.3)
        timed_turn(rpc, f"load {LINES} 24", TIMEOUT)
        host = nvim.host_pid()

        def first_open() -> None:
            figures["open"] = open_log(rpc, "← response session/prompt #2")
            for _ in range(SCROLL_PAGES):  # the user goes up: a page of older entries each time
                shown = log_lines(rpc)
                rpc.lua("vim.api.nvim_set_current_win(vim.fn.bufwinid(vim.fn.bufnr('^acp://log')))")
                rpc.request("nvim_input", "<C-Home>")
                wait_for(lambda n=shown: log_lines(rpc) > n, 30, "a page of older entries", 0.02)

        figures["open_key"], figures["open_loop"] = typing(rpc, nvim.address, first_open)
        figures["open_loop_cpu"] = loop_cpu(rpc)
        figures["log_lines"] = log_lines(rpc)
        rpc.lua("vim.cmd('bwipeout! ' .. vim.fn.bufnr('^acp://log'))")
        figures["again"] = open_log(rpc, "← response session/prompt #2")
        rpc.lua("vim.cmd('wincmd p')")  # back to the chat: the log window stays in sight

        def tail() -> None:
            _sent, ended = timed_turn(rpc, f"load {TAIL} 24", TIMEOUT)
            rpc.lua(WATCH_LOG, "← response session/prompt #3")  # already there, or soon
            shown = wait_for(lambda: "← response session/prompt #3" in "\n".join(rpc.lua(
                "local b = vim.fn.bufnr('^acp://log') return vim.api.nvim_buf_get_lines(b, -80, -1, false)")),
                60, "the flood's answer in the log", 0.005)
            figures["tail_lag"] = (rpc.lua("return vim.uv.hrtime()") - ended) / 1e6 if shown else float("nan")

        figures["tail_key"], figures["tail_loop"] = typing(rpc, nvim.address, tail)
        figures["tail_loop_cpu"] = loop_cpu(rpc)
        figures["idle_key"], figures["idle_loop"] = typing(rpc, nvim.address, lambda: time.sleep(5))
        figures["host_rss"] = float(open(f"/proc/{host}/status").read().split("VmRSS:")[1].split()[0]) / 1024 \
            if host else float("nan")
    report(figures)


def report(figures: dict[str, float]) -> None:
    line("log_open_lines", LINES, "wire lines through the session, every one kept by its log (level trace)")
    line("log_open_1m_ms", figures["open"], "ms (:Ai log to its newest entry drawn; target <= 200)")
    line("log_open_1m_again_ms", figures["again"], "ms (A/A control: the same, the buffer wiped first)")
    line("log_open_buffer_lines", figures["log_lines"], f"lines in the log buffer after {SCROLL_PAGES} pages up")
    line("log_open_key_stall_ms", figures["open_key"], "ms (worst typed key while it opened and the user scrolled up)")
    line("log_open_loop_max_ms", figures["open_loop"], "ms (Neovim's longest busy stretch meanwhile)")
    line("log_open_loop_cpu_max_ms", figures["open_loop_cpu"], "ms (Neovim's CPU time in a busy stretch, worst)")
    line("log_tail_lag_ms", figures["tail_lag"], f"ms (a flood of {TAIL} chunks ended to its answer in the log)")
    line("log_tail_key_stall_ms", figures["tail_key"], "ms (worst typed key while the open log tailed the flood)")
    line("log_tail_loop_max_ms", figures["tail_loop"], "ms (Neovim's longest busy stretch meanwhile)")
    line("log_tail_loop_cpu_max_ms", figures["tail_loop_cpu"], "ms (Neovim's CPU time in a busy stretch, worst)")
    line("log_idle_key_stall_ms", figures["idle_key"], "ms (A/A control: the same typing, nothing happening)")
    line("log_open_host_rss", figures["host_rss"], "MiB (the host holding the 1M entries)")
