"""Checkpoint benchmark: what keeping a turn's files costs a turn that changes 100 files of 1,000 lines.

Two measurements, printed as ``name: value unit``:

1. The recorder alone, in this process, on the real disk (``ACP_BENCH_ROUNDS`` x 3 turns of the
   same 100 files, each turn changing every file again), its work timed where it runs:
   ``checkpoint_turn_overhead_ms`` is what a turn waits for: opening its checkpoint before the
   prompt goes, the 100 first touches handed over as the file side hands them, closing it at the
   end (median over turns). Target: <= 20 ms (issue 22). ``checkpoint_turn_store_ms`` is the
   storing that follows in the background, off the turn's path (the contents hashed, compressed,
   packed and written, the manifest written, the store pruned; median), and
   ``checkpoint_turn_store_first_ms`` the first turn's (nothing deduplicated yet).
2. The plugin in a real headless Neovim with the demo agent: one ``multi-edit`` turn of the 100
   files (each written through ``fs/write_text_file``, allowed by the policy ``trust``), in a fresh
   Neovim per configuration and round, checkpoints on, off (``checkpoints = false``) and off again
   (the A/A control), in paired rounds (bench/paired.py): ``checkpoint_turn_neovim_diff_ms`` (the
   turn's time, on - off, beside its A/A control: on this shared machine the noise is larger than
   the cost) and ``checkpoint_host_cpu_ms`` (the Python host's CPU for the turn and its storing,
   on - off, beside its A/A control).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import Nvim, Sandbox, cpu_seconds, install_bench_lua, listening_nvim, sandbox, start_session, timed_turn
from harness import wait_for as poll
from paired import ROUNDS, Rounds, run_rounds
from report import line

FILES = 100
LINES = 1000
TIMEOUT = 300.0
CONFIGS: dict[str, Any] = {"on": {}, "off": False, "off_again": False}
"""``checkpoints`` in setup(); ``off_again`` repeats ``off``: the A/A control."""


def files(workspace: Path, round_mark: str) -> list[Path]:
    """FILES files of LINES lines, new content each round (so nothing is kept from a round before)."""
    paths = []
    for index in range(FILES):
        path = workspace / "src" / f"module_{index:03d}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text("".join(f"value_{n} = {n * 7919 % 104729}  # {round_mark} line {n} of file {index}\n"
                                for n in range(LINES)))
        paths.append(path)
    return paths


def stored(box: Sandbox) -> bool:
    """Whether the turn's checkpoint is complete on disk: its manifest names every file's content after."""
    for manifest in (box.base / "state" / "nvim").rglob("manifests/*turn-1.json"):
        data = json.loads(manifest.read_text() or "{}")
        entries = data.get("files") or []
        return len(entries) == FILES and all(entry.get("after") for entry in entries)
    return False


def measure(box: Sandbox, name: str, round_mark: list[int]) -> dict[str, float]:
    """One turn of configuration ``name`` in a fresh Neovim: its time, the storing after it, host CPU."""
    round_mark[0] += 1
    paths = files(box.workspace, f"r{round_mark[0]}")
    with listening_nvim(box, ui=False) as nvim:
        install_bench_lua(nvim.rpc)
        nvim.rpc.lua("require('acp_nvim').setup({ permissions = { policy = 'trust' }, checkpoints = ... })",
                     CONFIGS[name])
        start_session(nvim.rpc)
        time.sleep(0.3)  # the agent's commands announcement
        pid = nvim.host_pid()
        before = cpu_seconds(pid) if pid else 0.0
        sent, ended = timed_turn(nvim.rpc, "multi-edit " + " ".join(map(str, paths)), TIMEOUT)
        if CONFIGS[name] is not False:  # the host's CPU counts the storing too
            poll(lambda: stored(box), TIMEOUT, "the checkpoint to be stored", 0.005)
        cpu = (cpu_seconds(pid) - before) * 1000 if pid else float("nan")
        _edited(nvim, paths)
    _clean_state(box)
    return {"turn_ms": (ended - sent) / 1e6, "host_cpu_ms": cpu}


def _edited(nvim: Nvim, paths: list[Path]) -> None:
    if not all(p.read_text().endswith("added by the demo agent\n") for p in paths):
        raise RuntimeError("the turn did not edit every file")


def _clean_state(box: Sandbox) -> None:
    """Each round starts from an empty state folder (no store to prune, nothing deduplicated)."""
    import shutil

    shutil.rmtree(box.base / "state", ignore_errors=True)


# -- 1. the recorder alone ---------------------------------------------------------------


class _Editor:
    """The one thing the recorder asks the editor here: its state folder."""

    def __init__(self, state: str) -> None:
        self.state = state

    async def state_dir(self) -> str:
        return self.state


async def _recorder_turns(base: Path, turns: int) -> list[tuple[float, float]]:
    from acp_nvim.core.checkpoints import recorder as recording
    from acp_nvim.core.checkpoints.settings import CheckpointSettings
    from acp_nvim.core.files.opener import Snapshot
    from acp_nvim.core.files.paths import PathPolicy
    from acp_nvim.core.files.side import FileSide
    from acp_nvim.core.questions import Questions
    from acp_nvim.core.transcript.conversation import Conversation

    recording.BATCH_DELAY = 3600.0  # nothing is stored during the changes: all of it is timed at the end
    workspace = base / "workspace"
    editor = _Editor(str(base / "state"))
    side = FileSide.create(editor, PathPolicy([str(workspace)]), questions=Questions(), owner="bench",  # type: ignore[arg-type]
                           log=None, notice=None)
    transcript = Conversation()
    recorder = recording.Recorder("bench/1", str(workspace), CheckpointSettings(), editor, side.service,  # type: ignore[arg-type]
                                  transcript, set, lambda message: print(message, file=sys.stderr))
    paths = files(workspace, "t0")
    texts = {str(p): p.read_text() for p in paths}
    timings = []
    for number in range(1, turns + 1):
        changeset = side.service.changes.begin_turn()
        transcript.user_message(f"turn {number}")
        began = time.perf_counter()
        await recorder.begin(f"turn {number}", transcript.blocks[-1].id, "bench", changeset)
        path_time = time.perf_counter() - began
        for path in map(str, paths):
            after = texts[path].replace("line 1 ", f"line 1 (turn {number}) ", 1)
            Path(path).write_text(after)  # the turn's own write: not the checkpoint's time
            began = time.perf_counter()
            changeset.record(path, after, "fs", Snapshot(True, texts[path]))
            path_time += time.perf_counter() - began
            texts[path] = after
        began = time.perf_counter()
        recorder.end(True)
        path_time += time.perf_counter() - began
        await recorder.flush()
        timings.append((path_time * 1000, (time.perf_counter() - began) * 1000 + path_time * 1000))
    return timings


def recorder_alone(turns: int) -> list[tuple[float, float]]:
    with tempfile.TemporaryDirectory(prefix="acp-bench-") as tmp:
        (Path(tmp) / "workspace").mkdir()
        return asyncio.run(_recorder_turns(Path(tmp), turns))


# -- the report ----------------------------------------------------------------------


def main() -> None:
    timings = recorder_alone(3 * ROUNDS)
    line("checkpoint_turn_files", FILES, f"files of {LINES} lines per turn, {len(timings)} turns")
    line("checkpoint_turn_overhead_ms", statistics.median(p for p, _ in timings),
         "ms a turn waits for its checkpoint (open, first touches, close; median; target <= 20)")
    line("checkpoint_turn_store_ms", statistics.median(t - p for p, t in timings),
         "ms of storing per turn, in the background (median)")
    line("checkpoint_turn_store_first_ms", timings[0][1] - timings[0][0],
         "ms of storing for the first turn (nothing kept yet)")
    with sandbox() as box:
        marks = [0]
        rounds: Rounds = run_rounds("checkpoints", list(CONFIGS), lambda name: measure(box, name, marks))
    for name in CONFIGS:
        line(f"checkpoint_turn_neovim_{name}_ms", rounds.median(name, "turn_ms"), "ms (median round, real Neovim)")
    line("checkpoint_turn_neovim_diff_ms", rounds.difference("turn_ms", "on", "off"),
         f"ms (median of {ROUNDS} per-round on - off, real Neovim)")
    line("checkpoint_turn_neovim_aa_ms", rounds.difference("turn_ms", "off_again", "off"),
         "ms (A/A control: off_again - off)")
    line("checkpoint_host_cpu_ms", rounds.difference("host_cpu_ms", "on", "off"),
         "ms of host CPU per turn, storing included (median of per-round on - off)")
    line("checkpoint_host_cpu_aa_ms", rounds.difference("host_cpu_ms", "off_again", "off"),
         "ms (A/A control)")


if __name__ == "__main__":
    main()
