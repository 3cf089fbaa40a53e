"""Where a test run's time went, as Markdown tables: the slowest tests and the time per folder,
read from pytest's JUnit XML (``pytest --junitxml=FILE``); given a second file, before and after.

    python scripts/test_times.py after.xml [--before before.xml] [--top 30]

The time of a test is its setup, call and teardown (what JUnit XML records per test case).
``tests/README.md`` holds the tables this printed for the suite's speed-up.
"""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def times(path: Path) -> dict[str, float]:
    """Test id (``folder/module.py::name[params]``) -> seconds, for each test case of the file."""
    found: dict[str, float] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        module = case.get("classname", "").replace(".", "/")
        test_id = f"{module}.py::{case.get('name', '')}"
        found[test_id] = found.get(test_id, 0.0) + float(case.get("time") or 0.0)
    return found


def folder_of(test_id: str) -> str:
    parts = test_id.split("::")[0].split("/")
    return "/".join(parts[:2]) if len(parts) > 2 else parts[0]


def per_folder(found: dict[str, float]) -> dict[str, tuple[int, float]]:
    folders: dict[str, tuple[int, float]] = {}
    for test_id, seconds in found.items():
        count, total = folders.get(folder_of(test_id), (0, 0.0))
        folders[folder_of(test_id)] = (count + 1, total + seconds)
    return folders


def slowest_table(ranked_by: dict[str, float], after: dict[str, float], before: dict[str, float] | None,
                  top: int) -> list[str]:
    """The ``top`` slowest tests of ``ranked_by`` with their times before (when given) and after."""
    rows = ["| test | before (s) | after (s) |\n|---|---:|---:|" if before is not None else "| test | s |\n|---|---:|"]
    for test_id in sorted(ranked_by, key=lambda t: -ranked_by[t])[:top]:
        now = f"{after[test_id]:.1f}" if test_id in after else "—"
        if before is not None:
            then = f"{before[test_id]:.1f}" if test_id in before else "—"
            rows.append(f"| `{test_id}` | {then} | {now} |")
        else:
            rows.append(f"| `{test_id}` | {now} |")
    return rows


def folder_table(after: dict[str, float], before: dict[str, float] | None) -> list[str]:
    now = per_folder(after)
    then = per_folder(before) if before is not None else {}
    rows = ["| folder | tests | before (s) | after (s) |\n|---|---:|---:|---:|" if before is not None
            else "| folder | tests | s |\n|---|---:|---:|"]
    for folder in sorted(set(now) | set(then), key=lambda f: -(then.get(f) or now.get(f) or (0, 0.0))[1]):
        count, seconds = now.get(folder, (0, 0.0))
        if before is not None:
            rows.append(f"| `{folder}` | {count} | {then.get(folder, (0, 0.0))[1]:.0f} | {seconds:.0f} |")
        else:
            rows.append(f"| `{folder}` | {count} | {seconds:.0f} |")
    total_now = sum(after.values())
    if before is not None:
        rows.append(f"| all | {len(after)} | {sum(before.values()):.0f} | {total_now:.0f} |")
    else:
        rows.append(f"| all | {len(after)} | {total_now:.0f} |")
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("after", type=Path)
    parser.add_argument("--before", type=Path)
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args(argv)
    after = times(args.after)
    before = times(args.before) if args.before else None
    if before is not None:
        print(f"The {args.top} slowest tests before:\n")
        print("\n".join(slowest_table(before, after, before, args.top)))
        print()
    print(f"The {args.top} slowest tests{' after' if before is not None else ''}:\n")
    print("\n".join(slowest_table(after, after, before, args.top)))
    print("\nTime per folder (sum of test times; the run is parallel, so wall time is less):\n")
    print("\n".join(folder_table(after, before)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
