"""The fault matrix's cases are well-formed (the matrix itself runs with ``make faults``, not here)."""

from __future__ import annotations

from faults import cases
from faults.__main__ import select


def test_every_case_is_documented_and_named_once() -> None:
    registry = cases.load()
    assert len(registry) >= 38
    for name, case in registry.items():
        assert name == case.body.__name__
        assert len(case.doc) > 40, f"{name}: its docstring says what it checks"


def test_cases_are_picked_by_name_or_glob() -> None:
    names = list(cases.load())
    assert select(names, "hang_prompt") == ["hang_prompt"]
    assert set(select(names, "hang_*")) >= {"hang_initialize", "hang_prompt"}
    assert select(names, None) == names
