"""No class does too many jobs: every class of python/acp_nvim stays within ``MAX_LINES`` lines and
``MAX_METHODS`` methods (a class that grows past them is split into rooms with one job each)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "acp_nvim"
MAX_LINES = 300
MAX_METHODS = 40
"""Functions defined in the class's body (properties and dunders included)."""

OVER: dict[str, tuple[int, int]] = {}
"""Classes over the bar while they are split elsewhere, with the size they may not exceed. The list
may only shrink: a class leaves it once it is within the bar (the last test fails until it does)."""


def _classes() -> dict[str, tuple[int, int]]:
    """Every class, by ``path:Name``, with its lines and its methods."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ClassDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                methods = sum(isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) for item in node.body)
                found[f"{path.relative_to(PACKAGE)}:{node.name}"] = (lines, methods)
    return found


def _too_big(classes: dict[str, tuple[int, int]]) -> list[str]:
    return [f"{name}: {lines} lines, {methods} methods" for name, (lines, methods) in classes.items()
            if (lines > MAX_LINES or methods > MAX_METHODS)
            and not (name in OVER and lines <= OVER[name][0] and methods <= OVER[name][1])]


def test_no_class_is_over_300_lines_or_40_methods():
    classes = _classes()
    assert len(classes) > 100, "the walk finds the classes"
    assert _too_big(classes) == []


def test_the_allowed_list_only_shrinks():
    classes = _classes()
    within = [name for name in OVER if name not in classes
              or (classes[name][0] <= MAX_LINES and classes[name][1] <= MAX_METHODS)]
    assert within == [], "a class is gone or within the bar: remove it from OVER"


def test_the_check_sees_a_class_over_the_bar():
    assert _too_big({"a.py:Big": (MAX_LINES + 1, 1), "b.py:Many": (10, MAX_METHODS + 1), "c.py:Fine": (300, 40)}) == [
        f"a.py:Big: {MAX_LINES + 1} lines, 1 methods", f"b.py:Many: 10 lines, {MAX_METHODS + 1} methods"]
