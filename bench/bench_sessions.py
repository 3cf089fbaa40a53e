"""Many sessions at once: 20 demo sessions streaming 1,000 chunks a second each, a review in one.

One Neovim with a UI attached; ``SESSIONS`` demo sessions (each its own agent process), all
streaming with the demo agent's ``pace`` (24-byte chunks at ``RATE`` per second for ``SECONDS``,
then ``END <the agent's wall clock>``); meanwhile one more session asks to edit a file, so a
review waits for the user. A key is typed every 10 ms throughout.

- ``sessions_20_key_stall_ms``: the worst typed key while they stream. Target: 16 ms.
  ``sessions_20_idle_key_stall_ms``: the same typing afterwards, nothing streaming (A/A).
- ``sessions_20_end_lag_ms``: per session, from the agent writing its last chunk to the chat
  showing it; the worst session (each chat current within a frame: 16 ms).
- ``sessions_20_review_open_ms``: the review waits (a question never takes the keys the user
  types); ``:Ai permissions`` until it is drawn in a window, while the others stream. Target:
  100 ms.

Neovim's own longest busy stretch is printed beside the keys. ``ACP_BENCH_SESSIONS`` (default
20), ``ACP_BENCH_SESSION_RATE`` (default 1000) and ``ACP_BENCH_SESSION_SECONDS`` (default 8).
"""

from __future__ import annotations

import os
import time

from harness import (
    KeyTyper,
    demo_spec,
    install_bench_lua,
    listening_nvim,
    sandbox,
    start_session,
    wait_for,
)
from report import line

SESSIONS = int(os.environ.get("ACP_BENCH_SESSIONS", "20"))
RATE = int(os.environ.get("ACP_BENCH_SESSION_RATE", "1000"))
SECONDS = int(os.environ.get("ACP_BENCH_SESSION_SECONDS", "8"))
REVIEW_LINES = 2000

WATCH_LUA = """
-- when each chat shows its END line (wall clock), and when a review is first drawn in a window
local B = _G.acp_bench
B.ends, B.review_shown = {}, nil
for _, buf in ipairs(vim.api.nvim_list_bufs()) do
  if vim.api.nvim_buf_get_name(buf):match('^acp://chat') then
    vim.api.nvim_buf_attach(buf, false, { on_lines = function(_, b, _, first, _, last)
      for _, text in ipairs(vim.api.nvim_buf_get_lines(b, first, last, false)) do
        local sent = text:match('^END (%d+%.%d+)')
        if sent and not B.ends[b] then
          local s, us = vim.uv.gettimeofday()
          B.ends[b] = { tonumber(sent), s + us / 1e6 }
        end
      end
    end })
  end
end
vim.api.nvim_create_autocmd('BufWinEnter', { callback = function(ev)
  if not B.review_shown and vim.api.nvim_buf_get_name(ev.buf):find('review 1 of', 1, true) then
    B.review_shown = vim.uv.hrtime()
  end
end })
"""


def main() -> None:
    figures: dict[str, float] = {}
    # every line of the stream drawn (RATE * SECONDS / 4 lines): a block longer than the chat's
    # default 2,000 lines is cut there and its END line would never show
    setup = f"{{ agents = {{ demo = {demo_spec()} }}, history = false, chat = {{ max_block_lines = 1000000 }} }}"
    with sandbox(setup) as box, listening_nvim(box) as nvim:
        rpc = nvim.rpc
        install_bench_lua(rpc)
        target = box.workspace / "review.txt"
        target.write_text("".join(f"line {n}: the quick brown fox\n" for n in range(REVIEW_LINES)))
        for _ in range(SESSIONS + 1):
            start_session(rpc, "Ai new")
        keys = sorted(rpc.lua("return vim.tbl_keys(require('acp_nvim.state').sessions)"),
                      key=lambda key: int(key.rsplit("/", 1)[1]))
        time.sleep(1.0)  # the agents' command announcements
        rpc.lua(WATCH_LUA)
        rpc.lua("_G.acp_bench.keys = {} _G.acp_bench.loop_reset()")
        typer = KeyTyper(nvim.address)
        typer.start()
        for key in keys[:SESSIONS]:
            rpc.lua("require('acp_nvim.host').call.submit(...)", key, f"pace {RATE} {SECONDS}")
        time.sleep(min(2.0, SECONDS / 3))
        reviewer = keys[SESSIONS]
        rpc.lua("require('acp_nvim.host').call.submit(...)", reviewer, f"edit {target}")
        wait_for(lambda: rpc.lua("return #require('acp_nvim.review').pending()"), 60, "the review to wait", 0.02)
        asked = rpc.lua("local t = vim.uv.hrtime(); vim.cmd('Ai permissions'); return t")
        shown = wait_for(lambda: rpc.lua("return _G.acp_bench.review_shown"), 60, "the review drawn", 0.01)
        figures["review"] = (shown - asked) / 1e6
        wait_for(lambda: len(rpc.lua("return vim.tbl_keys(_G.acp_bench.ends)")) >= SESSIONS, SECONDS + 120,
                 "every session's last chunk in its chat", 0.1)
        stalls = typer.stop_and_collect(rpc, timeout=120)
        figures["key"] = max(stall for _, stall in stalls)
        figures["loop"] = float(rpc.lua("return _G.acp_bench.loop.worst"))
        figures["loop_cpu"] = float(rpc.lua("return _G.acp_bench.loop.cpu_worst"))
        ends = rpc.lua("local out = {} for _, e in pairs(_G.acp_bench.ends) do out[#out + 1] = e end return out")
        lags = [(shown - sent) * 1000 for sent, shown in ends]
        figures["end_lag"], figures["end_lag_median"] = max(lags), sorted(lags)[len(lags) // 2]
        rpc.lua("_G.acp_bench.keys = {} _G.acp_bench.loop_reset()")
        typer = KeyTyper(nvim.address)
        typer.start()
        time.sleep(5)
        figures["idle_key"] = max(stall for _, stall in typer.stop_and_collect(rpc))
        figures["idle_loop"] = float(rpc.lua("return _G.acp_bench.loop.worst"))
    report(figures)


def report(figures: dict[str, float]) -> None:
    line("sessions_20_sessions", SESSIONS,
         f"sessions streaming {RATE} chunks/s each for {SECONDS} s, a review in one more")
    line("sessions_20_key_stall_ms", figures["key"], "ms (worst typed key while they streamed; target <= 16)")
    line("sessions_20_idle_key_stall_ms", figures["idle_key"], "ms (A/A control: the same typing, nothing streaming)")
    line("sessions_20_loop_max_ms", figures["loop"], "ms (Neovim's longest busy stretch while they streamed)")
    line("sessions_20_loop_cpu_max_ms", figures["loop_cpu"],
         "ms (Neovim's CPU time in that stretch's worst: its own work, without the other processes')")
    line("sessions_20_idle_loop_max_ms", figures["idle_loop"], "ms (Neovim's longest busy stretch, nothing streaming)")
    line("sessions_20_end_lag_ms", figures["end_lag"], "ms (the agent wrote its last chunk to its chat showing it, "
         f"worst session; median {figures['end_lag_median']:.1f})")
    line("sessions_20_review_open_ms", figures["review"],
         "ms (:Ai permissions to the waiting review drawn, the others streaming; target <= 100)")
