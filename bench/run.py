"""`make bench`: run every bench/bench_*.py module; each prints `name: value unit` lines.

Benchmarks are measurements, not tests: they print figures (and the targets beside them)
and never fail on a threshold. Each module exposes ``main() -> None``.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE))


def main(selected: list[str]) -> None:
    for path in sorted(HERE.glob("bench_*.py")):
        if selected and path.stem.removeprefix("bench_") not in selected:
            continue
        importlib.import_module(path.stem).main()


if __name__ == "__main__":
    main(sys.argv[1:])
