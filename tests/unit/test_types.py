"""Typed boundaries: no ``Any`` in the core's public signatures, and the core is checked as --strict."""

from __future__ import annotations

import importlib
import inspect
import tomllib
import typing
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "python" / "acp_nvim" / "core"
STRICT_FLAGS = {
    "disallow_any_generics", "disallow_subclassing_any", "disallow_untyped_calls", "disallow_untyped_defs",
    "disallow_incomplete_defs", "check_untyped_defs", "disallow_untyped_decorators", "warn_unused_ignores",
    "warn_return_any", "strict_equality", "extra_checks",
}
"""What ``mypy --strict`` turns on per module (``warn_redundant_casts`` is global)."""

MODULES = sorted(".".join(("acp_nvim", "core", *p.relative_to(CORE).with_suffix("").parts))
                 for p in CORE.rglob("*.py") if p.name != "__init__.py")


def _mentions_any(hint: object) -> bool:
    if hint is typing.Any:
        return True
    return any(_mentions_any(arg) for arg in typing.get_args(hint))


def _public_callables(module: object) -> list[tuple[str, object]]:
    found: list[tuple[str, object]] = []
    for name, value in vars(module).items():
        if name.startswith("_") or getattr(value, "__module__", None) != module.__name__:  # type: ignore[attr-defined]
            continue
        if inspect.isfunction(value):
            found.append((name, value))
        elif inspect.isclass(value):
            for attr, member in vars(value).items():
                if attr.startswith("_") and attr != "__init__":
                    continue
                target = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
                if inspect.isfunction(target):
                    found.append((f"{name}.{attr}", target))
    return found


@pytest.mark.parametrize("name", MODULES)
def test_no_any_in_public_signatures(name):
    module = importlib.import_module(name)
    loose = [qualname for qualname, fn in _public_callables(module)
             if any(_mentions_any(hint) for hint in typing.get_type_hints(fn).values())]
    assert loose == []


def test_the_check_sees_an_alias_hiding_any():
    alias = dict[str, list[typing.Any]]
    assert _mentions_any(alias) and not _mentions_any(dict[str, list[object]])


def test_the_core_is_checked_strictly():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    core = next(o for o in config["overrides"] if "acp_nvim.core.*" in o["module"])
    assert {flag for flag in STRICT_FLAGS if core.get(flag) is True} == STRICT_FLAGS
    assert core.get("implicit_reexport") is False and config.get("warn_redundant_casts") is True
