"""Unit tests wait for conditions, never for time: tests/helpers.py holds the only polling code."""

from __future__ import annotations

import ast
from pathlib import Path

UNIT = Path(__file__).resolve().parent
CLOCKS = {("asyncio", "sleep"), ("time", "sleep"), ("time", "monotonic"), ("time", "time")}


def _clock_calls(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        owner = node.func.value
        if isinstance(owner, ast.Name) and (owner.id, node.func.attr) in CLOCKS:
            found.append(f"{path.name}:{node.lineno} {owner.id}.{node.func.attr}")
    return found


def test_no_unit_test_sleeps_or_reads_the_clock():
    assert [call for path in sorted(UNIT.glob("*.py")) for call in _clock_calls(path)] == []


def test_the_check_sees_a_sleep(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import asyncio\nasync def f():\n    await asyncio.sleep(0.05)\n")
    assert _clock_calls(sample) == ["sample.py:3 asyncio.sleep"]
