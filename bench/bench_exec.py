"""Exec gate benchmark: what the folder check adds to a terminal's start.

A terminal's command starts behind ``core/terminal/place.py``'s ``/bin/sh`` check (enter the
approved folder, compare its device and inode, then ``exec`` the argv). Here ``/bin/true`` is
started bare and behind the check, alternating, ``ACP_BENCH_EXEC_RUNS`` times each (default 200);
the figure is the median of the checked starts minus the median of the bare ones.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time

from report import line

RUNS = int(os.environ.get("ACP_BENCH_EXEC_RUNS", "200"))


def _start(argv: list[str]) -> float:
    began = time.perf_counter()
    subprocess.run(argv, check=True)
    return (time.perf_counter() - began) * 1000


def main() -> None:
    from acp_nvim.core.terminal.place import identify, launch_argv

    with tempfile.TemporaryDirectory() as folder:
        place = identify(folder)
        checked = launch_argv("/bin/true", (), place.path, place.identity)
        bare, behind = [], []
        for _ in range(RUNS):
            bare.append(_start(["/bin/true"]))
            behind.append(_start(checked))
    line("exec_start_bare_p50", statistics.median(bare), "ms")
    line("exec_start_checked_p50", statistics.median(behind), "ms")
    line("exec_folder_check_added_ms", statistics.median(behind) - statistics.median(bare), "ms")
