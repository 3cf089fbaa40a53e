"""Runs Neovim's Python host under cProfile (``make profile`` when py-spy is absent).

acp.nvim starts pynvim's host as ``{python} -c '...pynvim.start_host()' {plugin path}``
(an older checkout: ``-c '...acp_nvim.host...main()' {python dir}``); bench/profile_flood.py
points ``g:python3_host_prog`` at a wrapper that runs this file instead.
For that one command line the host runs here with a profiler that is off until SIGUSR1 and
is written to ``$ACP_PROFILE_PSTATS`` (and switched off) on SIGUSR2, so the profile holds
only the flood. Every other command line (Neovim's provider checks) runs Python unchanged.
"""

from __future__ import annotations

import cProfile
import os
import signal
import sys
from types import FrameType


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[0] != "-c" or not any(entry in argv[1] for entry in ("start_host", "acp_nvim.host")):
        os.execv(sys.executable, [sys.executable, *argv])
    code, out = argv[1], os.environ["ACP_PROFILE_PSTATS"]
    profiler = cProfile.Profile()

    def start(_signum: int, _frame: FrameType | None) -> None:
        profiler.enable()

    def stop(_signum: int, _frame: FrameType | None) -> None:
        profiler.disable()
        profiler.dump_stats(out)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    sys.argv = ["-c", *argv[2:]]
    sys.path.remove(os.path.dirname(os.path.abspath(__file__)))
    exec(compile(code, "<python3 host>", "exec"), {"__name__": "__main__"})


if __name__ == "__main__":
    main(sys.argv[1:])
