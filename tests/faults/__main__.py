"""``python -m faults [--case NAME[,NAME...]] [--list]``: the fault matrix (``make faults``).

Prints ``fault_<case>: pass|fail stall_ms=… usable=… orphans=… lost=…`` per case (with the
reasons of a failure indented below), then ``faults_passed: N/M``. Exit status 0 always:
the matrix is an instrument; read its lines.
"""

from __future__ import annotations

import argparse
import fnmatch
import sys

from . import cases
from .driver import Environment
from .matrix import run


def select(names: list[str], patterns: str | None) -> list[str]:
    if not patterns:
        return names
    chosen = [n for n in names if any(fnmatch.fnmatch(n, p.strip()) for p in patterns.split(","))]
    if not chosen:
        raise SystemExit(f"no case matches {patterns!r}; cases: {', '.join(names)}")
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m faults", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", help="case names or glob patterns, comma-separated (default: all)")
    parser.add_argument("--list", action="store_true", help="list the cases with what each checks")
    parser.add_argument("--keep", action="store_true", help="keep each case's folder (logs, agent diary)")
    args = parser.parse_args(argv)
    registry = cases.load()
    if args.list:
        for name, case in registry.items():
            print(f"{name}: {case.doc}")
        return 0
    env = Environment()
    passed = total = 0
    try:
        for name in select(list(registry), args.case):
            result = run(env, registry[name])
            print(result.line(), flush=True)
            for line in result.details():
                print(line, flush=True)
            passed, total = passed + result.passed, total + 1
    finally:
        if args.keep:
            print(f"# case folders kept in {env.base}")
        else:
            env.cleanup()
    print(f"faults_passed: {passed}/{total}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
