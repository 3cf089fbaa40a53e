"""Review benchmark (issue 5): opening the review of a 10,000-line file. Target: <= 200 ms.

A real headless Neovim with a UI attached (a socket client that drains every ``redraw``
batch, so drawing the two diff windows counts) runs lua/acp_nvim/review.lua. One sample is
what the user waits for between the permission request and the drawn review: the core
builds the whole-file proposal (``core.review``), the table crosses RPC, Lua creates the
buffers, tab page and diff windows, and a forced redraw completes. Two shapes: a whole-file
diff and a one-line snippet that must be located in the file. Printed as ``name: value unit``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import msgpack
import pynvim

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from acp_nvim.core.permissions.review import Current, ProposedEdit, Review, reconstruct  # noqa: E402
from acp_nvim.nvim.review_spec import review_table  # noqa: E402

NVIM = str(Path(sys.executable).parent / "nvim")
INIT = str(ROOT / "tests" / "minimal_init.vim")
LINES = 10_000
RUNS = int(os.environ.get("ACP_BENCH_REVIEW_RUNS", "15"))
RECORDER = "function! AcpNvimReviewDone(id, verdict) abort\nendfunction"


def line(name: str, value: float, unit: str) -> None:
    print(f"{name}: {value:.4g} {unit}", flush=True)


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def drain_ui(address: str) -> None:
    """Attach as a 160x48 UI and throw every redraw away (Neovim still renders for us)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(address)
    sock.sendall(msgpack.packb([0, 1, "nvim_ui_attach", [160, 48, {"ext_linegrid": True, "rgb": True}]]))
    threading.Thread(target=lambda: [None for _ in iter(lambda: sock.recv(1 << 20), b"")], daemon=True).start()


def start(base: Path) -> tuple[subprocess.Popen[bytes], pynvim.Nvim]:
    address = str(base / "nvim.sock")
    env = {**os.environ, "XDG_STATE_HOME": str(base / "state"), "XDG_CONFIG_HOME": str(base / "config"),
           "XDG_DATA_HOME": str(base / "data"), "NVIM_RPLUGIN_MANIFEST": str(base / "rplugin.vim"),
           "ACP_NVIM_TEST_PYTHON": sys.executable}
    proc = subprocess.Popen([NVIM, "-u", INIT, "--headless", "--listen", address], env=env, cwd=base)
    deadline = time.monotonic() + 10
    while not os.path.exists(address):
        if time.monotonic() > deadline:
            raise TimeoutError("nvim did not listen")
        time.sleep(0.02)
    drain_ui(address)
    nvim = pynvim.attach("socket", path=address)
    nvim.command(RECORDER)
    return proc, nvim


def python_source(lines: int) -> str:
    """Ordinary Python: 1,000 ten-line functions (syntax highlighting syncs as in real code)."""
    body = ('def function_{i}(value):\n    """Compute something for {i}."""\n    total = value * {i}\n'
            '    if total > 100:\n        total -= 100\n    for step in range(3):\n        total += step\n'
            '    return total\n\n\n')
    return "".join(body.format(i=i) for i in range(lines // 10))


def sample(nvim: pynvim.Nvim, rid: int, path: str, current: str, edit: ProposedEdit) -> float:
    began = time.perf_counter()
    file = reconstruct(path, Current(current), [edit])
    table = review_table(Review("bench/1", rid, "Edit", "edit", [file]))
    nvim.exec_lua("require('acp_nvim.review').open(...)", rid, table)
    nvim.command("redraw")
    took = (time.perf_counter() - began) * 1000
    nvim.exec_lua("require('acp_nvim.review').dismiss(...)", rid)
    return took


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        path = str(base / "big.py")
        current = python_source(LINES)
        whole = current.replace("    total = value * 1\n", "    total = value * 1.5\n")
        whole = whole.replace("def function_900(", "def function_900_renamed(")
        shapes = {
            "whole": ProposedEdit(path, current, whole),
            "snippet": ProposedEdit(path, "    total = value * 500\n", "    total = value * 500 + 1\n"),
        }
        proc, nvim = start(base)
        try:
            nvim.exec_lua("vim.notify = function() end")
            rid = 0
            for name, edit in shapes.items():
                samples = []
                for _ in range(RUNS + 1):
                    rid += 1
                    samples.append(sample(nvim, rid, path, current, edit))
                samples = samples[1:]  # the first run loads the Lua modules
                line(f"review_open_10k_{name}_p50", percentile(samples, 0.5), "ms")
                line(f"review_open_10k_{name}_max", max(samples), "ms")
            line("review_open_target", 200, "ms")
        finally:
            nvim.close()
            proc.terminate()
            proc.wait(timeout=10)


if __name__ == "__main__":
    main()
