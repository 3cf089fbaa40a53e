"""`make profile`: where the Python host's time goes during a chat flood.

A fresh Neovim with a UI attached runs the plugin under test (``BENCH_PLUGIN_ROOT``, default
this checkout) with one demo session; only the flood itself is profiled: the demo agent's
``load N 24`` (``ACP_PROFILE_CHUNKS``, default 100k chunks of 24 bytes, as in bench_chat).

- With py-spy (``ACP_PROFILE_TOOL=py-spy``, the default when it is installed and can attach):
  ``py-spy record --nonblocking`` on the host's PID writes a flame graph (``.svg``) and, from a
  second recorder, collapsed stacks from which a text top-30 (self and total) is written.
- Otherwise (``ACP_PROFILE_TOOL=cprofile``): the host runs under cProfile (bench/cprofile_host.py),
  switched on for the flood only; writes ``.pstats`` and a text top-30 (self and cumulative).

Everything goes to ``.cache/profile/`` of this checkout; the paths are printed at the end.
"""

from __future__ import annotations

import collections
import contextlib
import io
import os
import pstats
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from harness import (
    PYTHON,
    ROOT,
    Nvim,
    demo_agent_lua,
    install_bench_lua,
    listening_nvim,
    plugin_label,
    sandbox,
    start_session,
    timed_turn,
    wait_for,
)

CHUNKS = int(os.environ.get("ACP_PROFILE_CHUNKS", "100000"))
OUT = ROOT / ".cache" / "profile"
TOP = 30
RATE = 250
"""py-spy samples per second."""


def py_spy() -> str | None:
    """The py-spy executable (the virtualenv's first), if installed."""
    return shutil.which("py-spy", path=os.pathsep.join([str(Path(PYTHON).parent), os.environ.get("PATH", "")]))


def tool() -> str:
    chosen = os.environ.get("ACP_PROFILE_TOOL")
    if chosen in ("py-spy", "cprofile"):
        return chosen
    if chosen:
        raise SystemExit(f"ACP_PROFILE_TOOL must be py-spy or cprofile, not {chosen!r}")
    return "py-spy" if py_spy() else "cprofile"


def flood(nvim: Nvim) -> float:
    """One flood; returns its seconds."""
    sent, ended = timed_turn(nvim.rpc, f"load {CHUNKS} 24", 600)
    return (ended - sent) / 1e9


def ready_session(nvim: Nvim) -> int:
    """Start the demo session; return the host's PID."""
    install_bench_lua(nvim.rpc)
    start_session(nvim.rpc)
    time.sleep(0.3)
    host = nvim.host_pid()
    if host is None:
        raise RuntimeError("the Python host did not start")
    return host


# -- py-spy ----------------------------------------------------------------------------------


@contextlib.contextmanager
def recording(pid: int, output: Path, fmt: str) -> Iterator[None]:
    """``py-spy record`` of ``pid`` for the duration of the block (stopped with SIGINT)."""
    command = [str(py_spy()), "record", "--pid", str(pid), "--nonblocking", "--function", "--rate", str(RATE),
               "--format", fmt, "--output", str(output)]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(1.0)  # py-spy attaches
    if proc.poll() is not None:
        error = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        raise RuntimeError(f"py-spy could not attach (try ACP_PROFILE_TOOL=cprofile): {error.strip()}")
    try:
        yield
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def top_from_collapsed(text: str, top: int = TOP) -> str:
    """A text top-N by self and by total samples from py-spy's collapsed stacks."""
    self_counts: collections.Counter[str] = collections.Counter()
    total_counts: collections.Counter[str] = collections.Counter()
    samples = 0
    for raw in text.splitlines():
        stack, _, weight = raw.rpartition(" ")
        if not stack or not weight.isdigit():
            continue
        frames = stack.split(";")
        samples += int(weight)
        self_counts[frames[-1]] += int(weight)
        for frame in set(frames):
            total_counts[frame] += int(weight)
    out = io.StringIO()
    for title, counts in (("self", self_counts), ("total (self + callees)", total_counts)):
        out.write(f"top {top} by {title}, of {samples} samples at {RATE}/s\n")
        for frame, count in counts.most_common(top):
            out.write(f"{100 * count / max(samples, 1):6.1f}%  {count:7d}  {frame}\n")
        out.write("\n")
    return out.getvalue()


def profile_py_spy(stem: Path) -> list[Path]:
    svg, raw, txt = stem.with_suffix(".svg"), stem.with_suffix(".collapsed"), stem.with_suffix(".txt")
    with sandbox(f"{{ agents = {demo_agent_lua()} }}") as box, listening_nvim(box) as nvim:
        host = ready_session(nvim)
        with recording(host, svg, "flamegraph"), recording(host, raw, "raw"):
            seconds = flood(nvim)
    wait_for(lambda: svg.exists() and raw.exists(), 30, "py-spy's output")
    txt.write_text(f"{plugin_label()}\nflood of {CHUNKS} chunks: {seconds:.2f} s\n\n"
                   + top_from_collapsed(raw.read_text()))
    return [svg, txt, raw]


# -- cProfile --------------------------------------------------------------------------------


def profile_cprofile(stem: Path) -> list[Path]:
    stats_path, txt = stem.with_suffix(".pstats"), stem.with_suffix(".txt")
    wrapper = stem.with_suffix(".host.sh")
    wrapper.write_text(f'#!/bin/sh\nexec "{PYTHON}" "{Path(__file__).with_name("cprofile_host.py")}" "$@"\n')
    wrapper.chmod(0o755)
    os.environ["ACP_PROFILE_PSTATS"] = str(stats_path)
    with sandbox(f"{{ agents = {demo_agent_lua()} }}", host_prog=str(wrapper)) as box, listening_nvim(box) as nvim:
        host = ready_session(nvim)
        os.kill(host, signal.SIGUSR1)
        seconds = flood(nvim)
        os.kill(host, signal.SIGUSR2)
        wait_for(lambda: stats_path.exists() and stats_path.stat().st_size, 30, "the cProfile stats")
    wrapper.unlink()
    out = io.StringIO()
    out.write(f"{plugin_label()}\nflood of {CHUNKS} chunks: {seconds:.2f} s (under cProfile: slower)\n\n")
    for order in ("tottime", "cumulative"):
        pstats.Stats(str(stats_path), stream=out).strip_dirs().sort_stats(order).print_stats(TOP)
    txt.write_text(out.getvalue())
    return [stats_path, txt]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    chosen = tool()
    stem = OUT / f"flood-{time.strftime('%Y%m%d-%H%M%S')}-{chosen}"
    print(f"profiling the Python host of {plugin_label()} during a flood of {CHUNKS} chunks with {chosen}",
          flush=True)
    written = profile_py_spy(stem) if chosen == "py-spy" else profile_cprofile(stem)
    for path in written:
        print(f"wrote {path}", flush=True)


if __name__ == "__main__":
    main()
