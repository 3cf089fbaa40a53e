"""Review benchmark: opening the review of a 10,000-line file. Target: <= 200 ms.

A real headless Neovim with a UI attached (a socket client that drains every ``redraw``
batch, so drawing the two diff windows counts) runs lua/acp_nvim/review/init.lua. One sample is
what the user waits for between the permission request and the drawn review: the core
builds the whole-file proposal (``core.review``), the table crosses RPC, Lua creates the
buffers, tab page and diff windows, and a forced redraw completes. Two shapes: a whole-file
diff and a one-line snippet that must be located in the file. Printed as ``name: value unit``.
"""

from __future__ import annotations

import os
import time

from harness import Nvim, listening_nvim, percentiles, sandbox
from report import line

from acp_nvim.core.permissions.review import Current, ProposedEdit, Review, reconstruct
from acp_nvim.nvim.permissions.review_spec import review_table

LINES = 10_000
RUNS = int(os.environ.get("ACP_BENCH_REVIEW_RUNS", "15"))
RECORDER = ("lua local host = require('acp_nvim.host'); if host.call then host.call.review_done = function() end end",
            "function! AcpNvimReviewDone(id, verdict) abort\nendfunction")
"""Verdicts go nowhere: this checkout's entry point, and the Vim function an older checkout calls."""


def python_source(lines: int) -> str:
    """Ordinary Python: 1,000 ten-line functions (syntax highlighting syncs as in real code)."""
    body = ('def function_{i}(value):\n    """Compute something for {i}."""\n    total = value * {i}\n'
            '    if total > 100:\n        total -= 100\n    for step in range(3):\n        total += step\n'
            '    return total\n\n\n')
    return "".join(body.format(i=i) for i in range(lines // 10))


def sample(nvim: Nvim, rid: int, path: str, current: str, edit: ProposedEdit) -> float:
    began = time.perf_counter()
    file = reconstruct(path, Current(current), [edit])
    table = review_table(Review("bench/1", rid, "Edit", "edit", [file]))
    nvim.rpc.lua("require('acp_nvim.review').open(...)", rid, table)
    nvim.rpc.request("nvim_command", "redraw")
    took = (time.perf_counter() - began) * 1000
    nvim.rpc.lua("require('acp_nvim.review').dismiss(...)", rid)
    return took


def main() -> None:
    with sandbox() as box, listening_nvim(box) as nvim:
        path = str(box.workspace / "big.py")
        current = python_source(LINES)
        whole = current.replace("    total = value * 1\n", "    total = value * 1.5\n")
        whole = whole.replace("def function_900(", "def function_900_renamed(")
        shapes = {
            "whole": ProposedEdit(path, current, whole),
            "snippet": ProposedEdit(path, "    total = value * 500\n", "    total = value * 500 + 1\n"),
        }
        for recorder in RECORDER:
            nvim.rpc.request("nvim_command", recorder)
        nvim.rpc.lua("vim.notify = function() end")
        rid = 0
        for name, edit in shapes.items():
            samples = []
            for _ in range(RUNS + 1):
                rid += 1
                samples.append(sample(nvim, rid, path, current, edit))
            figures = percentiles(samples[1:])  # the first run loads the Lua modules
            line(f"review_open_10k_{name}_p50", figures["p50"], "ms (target <= 200)")
            line(f"review_open_10k_{name}_max", figures["max"], "ms")
        line("review_open_target", 200, "ms")
