"""`make bench`: run the bench/bench_*.py modules, then print a table of figures against targets.

Benchmarks are measurements, not tests: they print ``name: value unit`` lines (targets beside
them) and never fail on a threshold. Each module exposes ``main() -> None``. Arguments select
modules by name (``run.py chat startup``). A module that cannot measure (an error, a timeout)
is reported, the others still run, and the exit status is 1. See bench/README.md.
"""

from __future__ import annotations

import importlib
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402
import report  # noqa: E402

sys.path.insert(0, str(harness.PLUGIN_ROOT / "python"))


def main(selected: list[str]) -> int:
    plugin = harness.plugin_label()
    print(f"plugin under test: {plugin}", flush=True)
    failed = []
    for path in sorted(HERE.glob("bench_*.py")):
        name = path.stem.removeprefix("bench_")
        if selected and name not in selected:
            continue
        began = time.monotonic()
        try:
            importlib.import_module(path.stem).main()
        except Exception:
            traceback.print_exc()
            print(f"bench_{name}: could not measure (see the error above)", flush=True)
            failed.append(name)
        print(f"  (bench_{name}: {time.monotonic() - began:.0f} s)", file=sys.stderr, flush=True)
    report.print_summary(plugin)
    print(f"figures written to {report.save(plugin)}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
