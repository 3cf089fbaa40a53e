"""The fault matrix as one figure: the worst typed key over every case (``key_stall_faults_max_ms``).

Each case of ``tests/faults`` (``make faults``: a misbehaving agent, a fresh Neovim with a UI, a key
typed every 10 ms through ``nvim_input`` from another connection) is paired, in the same round, with
an idle control: a fresh Neovim of the same harness, the same probes, the plugin loaded but never
used, for ``IDLE_SECONDS``. The control's worst key is what this
machine's noise alone gives: ``key_stall_faults_idle_max_ms``, the A/A line (a stall no larger than
the control's is not one this run can see). Neovim's own longest busy stretch between two waits for
input (``LoopProbe``) is printed beside them: it does not count the probes' scheduling.

``ACP_BENCH_FAULT_ROUNDS`` (default 1: the matrix takes about five minutes) sets the rounds; the
figures are medians over rounds of each round's worst. ``ACP_BENCH_FAULT_CASES`` picks cases (names
or globs, comma-separated, as ``make faults CASE=…``). Target: ``key_stall_faults_max_ms`` <= 16 ms.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
from pathlib import Path

from harness import PLUGIN_ROOT, ROOT
from paired import rotation
from report import line

sys.path.insert(0, str(ROOT / "tests"))

from faults import cases as fault_cases
from faults import driver, matrix
from faults.__main__ import select
from faults.probes import Probes

ROUNDS = max(1, int(os.environ.get("ACP_BENCH_FAULT_ROUNDS", "1")))
IDLE_SECONDS = 4.0
"""Seconds an idle control lasts (a case takes 3 to 25 s)."""
FRAME_MS = 16.0
CRASH_TYPING = "crash_abrupt_typing"
"""The crash of issue 35 (chunks, a stderr line, ``os._exit(1)`` while the user types in Insert mode):
its own lines, the typed key and the ``nvim_eval`` of the second connection."""


def _use_plugin(root: Path, folder: Path) -> None:
    """Make the fault harness load the plugin under test (its init puts its own checkout first)."""
    init = (ROOT / "tests" / "minimal_init.vim").read_text()
    init = init.replace("let s:root = fnamemodify(expand('<sfile>:p'), ':h:h')",
                        f"let s:root = {_vim_string(str(root))}")
    path = folder / "init.vim"
    path.write_text(init)
    driver.INIT = str(path)


def _vim_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def idle(env: driver.Environment, name: str, seconds: float) -> tuple[float, float]:
    """The control: the probes on a Neovim where the plugin does nothing; (worst key, loop busy) ms."""
    with driver.editor(env, name, {"env": {"FAULT_CONFIG": "{}"}}) as ed:
        probes = Probes(ed.address)
        driver.wait_until(lambda: False, seconds)
        probes.stop()
        assert probes.key_stats is not None
        return probes.key_stats.worst_ms, probes.loop.worst_ms


def main() -> None:
    registry = fault_cases.load()
    names = select(list(registry), os.environ.get("ACP_BENCH_FAULT_CASES"))
    with tempfile.TemporaryDirectory(prefix="acp-bench-faults-") as tmp:
        _use_plugin(PLUGIN_ROOT, Path(tmp))
        env = driver.Environment()
        worst: list[tuple[float, str]] = []
        idle_worst: list[float] = []
        loop_worst: list[float] = []
        over: list[int] = []
        failed: list[int] = []
        typing: list[tuple[float, float]] = []  # (key, rpc) ms of CRASH_TYPING, one per round
        try:
            for round_index in range(ROUNDS):
                keys: dict[str, float] = {}
                idles: list[float] = []
                loops: list[float] = []
                fails = 0
                for name in names:
                    for config in rotation(["case", "idle"], round_index + names.index(name)):
                        if config == "case":
                            result = matrix.run(env, registry[name])
                            keys[name] = result.stall_ms
                            if name == CRASH_TYPING:
                                typing.append((result.stall_ms, _note_ms(result.notes, "rpc probe worst")))
                            loop = _loop_ms(result.notes)
                            loops.append(loop)
                            fails += not result.passed
                            print(f"  faults round {round_index + 1}/{ROUNDS} {name}: key {result.stall_ms:.1f} ms, "
                                  f"loop {loop:.1f} ms{'' if result.passed else ' (the case failed)'}",
                                  file=sys.stderr, flush=True)
                        else:
                            idles.append(idle(env, f"idle-{round_index}-{name}", IDLE_SECONDS)[0])
                name = max(keys, key=lambda n: keys[n])
                worst.append((keys[name], name))
                idle_worst.append(max(idles))
                loop_worst.append(max(loops))
                over.append(sum(stall > FRAME_MS for stall in keys.values()))
                failed.append(fails)
        finally:
            env.cleanup()
    report(names, worst, idle_worst, loop_worst, over, failed)
    if typing:
        line("key_stall_fault_crash_typing_ms", statistics.median(key for key, _ in typing),
             f"ms (worst typed key, {CRASH_TYPING}: an agent dies while the user types in Insert mode; target <= 16)")
        line("rpc_stall_fault_crash_typing_ms", statistics.median(rpc for _, rpc in typing),
             f"ms (worst nvim_eval from a second connection, {CRASH_TYPING})")


def _loop_ms(notes: list[str]) -> float:
    """Neovim's longest busy stretch, from the case's note (matrix._result)."""
    return _note_ms(notes, "loop busy at most")


def _note_ms(notes: list[str], label: str) -> float:
    """The figure after ``label`` in the case's notes (matrix._result), nan without one."""
    for note in notes:
        if label in note:
            return float(note.split(label, 1)[1].split("ms", 1)[0])
    return float("nan")


def report(names: list[str], worst: list[tuple[float, str]], idle_worst: list[float], loop_worst: list[float],
           over: list[int], failed: list[int]) -> None:
    n = len(worst)
    median = statistics.median(value for value, _ in worst)
    where = ", ".join(sorted({name for _, name in worst}))
    line("key_stall_faults_cases", len(names), f"cases, {n} round(s)")
    line("key_stall_faults_max_ms", median,
         f"ms (worst typed key over the matrix, median of {n} round(s); worst in {where}; target <= 16)")
    line("key_stall_faults_idle_max_ms", statistics.median(idle_worst),
         "ms (A/A control: the same probes on a Neovim where the plugin does nothing)")
    line("key_stall_faults_loop_max_ms", statistics.median(loop_worst),
         "ms (Neovim's longest busy stretch between two waits for input, over the matrix)")
    line("key_stall_faults_cases_over_frame", statistics.median(over), "cases whose worst key waited over 16 ms")
    line("key_stall_faults_failed", statistics.median(failed), "cases that failed (make faults says why)")
