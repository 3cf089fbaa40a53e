"""Warm starts: ``:Ai send`` to the first chunk in the chat, with a demo agent that takes a second to start.

The demo agent of this checkout is made to start slowly (``ACP_DEMO_STARTUP_DELAY=1``: a second
before it reads its input, as a heavy agent loading its code). Each round measures, each in a fresh
Neovim with a UI attached, once its Python host is up and idle:

- ``cold``: no warm start: ``:Ai send flood 1`` spawns the agent, waits for it, opens the session;
- ``warm``: ``warm = 'default'``: the warm agent is ready (started and its session opened while
  Neovim was idle), and ``:Ai send flood 1`` takes it;
- ``open``: a session already started: the agent's own reply time through the plugin, the floor;
- ``warm_again``: ``warm`` once more, the A/A control.

``first_chunk_cold_ms`` and ``first_chunk_warm_ms`` are medians of their rounds; the warm path's
aim is to come within 50 ms of the agent's own reply time: ``first_chunk_warm_over_open_ms`` is the
median of the per-round differences warm - open (target <= 50), beside its A/A control.
"""

from __future__ import annotations

import time

from harness import (
    Nvim,
    Sandbox,
    bench_value,
    demo_spec,
    install_bench_lua,
    listening_nvim,
    sandbox,
    start_session,
    wait_for,
)
from paired import run_rounds, spread
from report import line

STARTUP_DELAY = "1"
SETTLE = 0.5
"""Seconds of quiet before the prompt, once everything the configuration starts has started."""
TIMEOUT = 60.0
FIRST_CHUNK_LUA = """
local B = _G.acp_bench
B.first_chunk = nil
local function watch(buf)
  vim.api.nvim_buf_attach(buf, false, { on_lines = function(_, b, _, first, _, last)
    if B.first_chunk then return true end
    for _, text in ipairs(vim.api.nvim_buf_get_lines(b, first, last, false)) do
      if text:find('chunk00000', 1, true) then B.first_chunk = vim.uv.hrtime() return true end
    end
  end })
end
for _, buf in ipairs(vim.api.nvim_list_bufs()) do  -- a chat open already
  if vim.api.nvim_buf_get_name(buf):match('^acp://chat/') then watch(buf) end
end
vim.api.nvim_create_autocmd('BufWinEnter', { pattern = 'acp://chat/*', once = true, callback = function(ev)
  watch(ev.buf)
end })
"""


def setup_lua(warm: bool) -> str:
    demo = demo_spec(ACP_DEMO_STARTUP_DELAY=str(STARTUP_DELAY))
    mode = "'default'" if warm else "false"
    return f"{{ agents = {{ demo = {demo} }}, warm = {mode} }}"


def host_ready(nvim: Nvim) -> None:
    """The Python host started by the prestart has loaded the protocol (it answers a request)."""
    wait_for(lambda: nvim.rpc.lua("return require('acp_nvim.host').channel ~= nil"), TIMEOUT, "the host")
    nvim.rpc.lua("vim.rpcrequest(require('acp_nvim.host').channel, 'poll')")


def first_chunk(nvim: Nvim) -> float:
    """``:Ai send flood 1`` until its chunk is in a chat buffer, in ms."""
    nvim.rpc.lua(FIRST_CHUNK_LUA)
    sent = nvim.rpc.lua("local t = vim.uv.hrtime(); vim.cmd('Ai send flood 1'); return t")
    seen = wait_for(lambda: bench_value(nvim.rpc, "first_chunk"), TIMEOUT, "the first chunk in the chat")
    wait_for(lambda: bench_value(nvim.rpc, "turns"), TIMEOUT, "the end of the turn")
    return (seen - sent) / 1e6


def measure(box: Sandbox, config: str) -> dict[str, float]:
    with listening_nvim(box) as nvim:
        install_bench_lua(nvim.rpc)
        host_ready(nvim)
        if config.startswith("warm"):
            wait_for(lambda: nvim.rpc.lua("return require('acp_nvim.host.idle').warm.demo") == "ready", TIMEOUT,
                     "the warm agent")
        elif config == "open":
            start_session(nvim.rpc)
            wait_for(lambda: nvim.rpc.lua("local s = require('acp_nvim.state').sessions['demo/1'] "
                                          "return s and s.state == 'idle'"), TIMEOUT, "the session idle")
        time.sleep(SETTLE)
        return {"first_chunk_ms": first_chunk(nvim)}


def main() -> None:
    with sandbox(setup_lua(False)) as cold, sandbox(setup_lua(True)) as warm:
        boxes = {"cold": cold, "warm": warm, "open": cold, "warm_again": warm}
        rounds = run_rounds("warm", list(boxes), lambda config: measure(boxes[config], config))
    n = rounds.count
    over = rounds.differences("first_chunk_ms", "warm", "open")
    control = rounds.differences("first_chunk_ms", "warm_again", "warm")
    line("first_chunk_cold_ms", rounds.median("cold", "first_chunk_ms"),
         f"ms (:Ai send → first chunk, the agent starting in 1 s, median of {n} fresh Neovims)")
    line("first_chunk_warm_ms", rounds.median("warm", "first_chunk_ms"),
         f"ms (the same on the warm agent, median of {n})")
    line("first_chunk_open_ms", rounds.median("open", "first_chunk_ms"),
         f"ms (a session already open: the agent's own reply time, median of {n})")
    line("first_chunk_warm_over_open_ms", rounds.difference("first_chunk_ms", "warm", "open"),
         f"ms (median of per-round warm - open, {spread(over)}; target <= 50)")
    line("first_chunk_warm_aa_ms", rounds.difference("first_chunk_ms", "warm_again", "warm"),
         f"ms (A/A control: warm_again - warm, {spread(control)})")
