"""Imports go one way: no circles between modules, no arrow up the layers (ARCHITECTURE.md, "Layers").

Every module of python/acp_nvim (the remote plugin, the Python host's entry point, included) is
parsed, and every import counts:
module level, inside functions, and under ``if TYPE_CHECKING:`` (a type-only import back up
is still a circle: the two modules cannot be understood or changed apart).
"""

from __future__ import annotations

import ast
from pathlib import Path

from helpers.graphs import components

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python"
SHIM_NAME = "acp_nvim.plugin"
"""The remote plugin pynvim's host loads (rplugin/python3/acp_nvim re-exports it): the top rank."""

RANKS: list[tuple[str, ...]] = [
    ("acp_nvim", "acp_nvim.core", "acp_nvim.core.errors", "acp_nvim.core.tasks", "acp_nvim.core.private_files",
     "acp_nvim.core.box"),
    ("acp_nvim.core.questions",),
    ("acp_nvim.core.port",),
    ("acp_nvim.core.log", "acp_nvim.core.media", "acp_nvim.core.transcript"),
    ("acp_nvim.core.history",),
    ("acp_nvim.core.files",),
    ("acp_nvim.core.permissions", "acp_nvim.core.terminal", "acp_nvim.core.checkpoints", "acp_nvim.core.worktrees"),
    ("acp_nvim.core.config",),
    ("acp_nvim.core.agent",),
    ("acp_nvim.core.mcp",),
    ("acp_nvim.core.prompting",),
    ("acp_nvim.core.conversation",),
    ("acp_nvim.core.connection",),
    ("acp_nvim.core.session",),
    ("acp_nvim.nvim",),
    (SHIM_NAME,),
]
"""Bottom to top; a module may import its own rank (without a circle) and the ranks below.
A name stands for the module and, for a package, everything inside it."""

STANDALONE = ("acp_nvim.demo_agent", "acp_nvim.replay")
"""Programs run as agent subprocesses: they import no other part of acp_nvim (nor pynvim)."""
NO_PYNVIM = ("acp_nvim.core", *STANDALONE)

KNOWN_CYCLES: list[frozenset[str]] = []
"""Circles tolerated while being removed elsewhere (none today; the last test fails once one is gone)."""


def _modules() -> dict[str, tuple[Path, bool]]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


MODULES = _modules()


def _targets(name: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = name.split(".")[: len(name.split(".")) - (0 if is_package else 1)]
        base = base[: len(base) - (node.level - 1)]
        prefix = ".".join([*base, *([node.module] if node.module else [])])
    else:
        prefix = node.module or ""
    return [f"{prefix}.{alias.name}" if f"{prefix}.{alias.name}" in MODULES else prefix for alias in node.names]


def _imports(name: str) -> set[str]:
    """Every module of ours (and pynvim) that ``name`` imports, anywhere in its text."""
    path, is_package = MODULES[name]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for target in _targets(name, is_package, node):
                if target.split(".")[0] == "pynvim":
                    found.add("pynvim")
                elif target.split(".")[0] == "acp_nvim":
                    while target not in MODULES and "." in target:
                        target = target.rsplit(".", 1)[0]
                    found.add(target)
    found.discard(name)
    return found


GRAPH = {name: _imports(name) for name in MODULES}


def _rank(name: str) -> int:
    best = max(((len(prefix), rank) for rank, group in enumerate(RANKS) for prefix in group
                if name == prefix or name.startswith(prefix + ".")), default=None)
    assert best is not None, f"{name} has no rank: add it to RANKS (and ARCHITECTURE.md)"
    return best[1]


def _cycles(graph: dict[str, set[str]] = GRAPH) -> list[frozenset[str]]:
    """Strongly connected components of more than one module of ``graph``."""
    return components(graph)


def _gone(known: list[frozenset[str]], graph: dict[str, set[str]] = GRAPH) -> list[list[str]]:
    """The circles of ``known`` that ``graph`` no longer has."""
    cycles = _cycles(graph)
    return [sorted(cycle) for cycle in known if cycle not in cycles]


def test_every_module_is_parsed():
    assert "acp_nvim.core.session.session" in GRAPH and "acp_nvim.nvim.app" in GRAPH[SHIM_NAME]
    assert "acp_nvim.core.tasks" in GRAPH["acp_nvim.core.files.reconcile"], "relative imports resolve"


def test_no_import_goes_up_the_layers():
    upward = [f"{name} (rank {_rank(name)}) imports {target} (rank {_rank(target)})"
              for name in sorted(GRAPH) if not name.startswith(STANDALONE)
              for target in sorted(GRAPH[name] - {"pynvim"}) if _rank(target) > _rank(name)]
    assert upward == []


def test_no_import_circles():
    cycles = [sorted(cycle) for cycle in _cycles() if cycle not in KNOWN_CYCLES]
    assert cycles == []


def test_core_and_the_agents_never_import_pynvim():
    assert [name for name in sorted(GRAPH) if name.startswith(NO_PYNVIM) and "pynvim" in GRAPH[name]] == []


def test_the_agent_programs_stand_alone():
    reaching_out = [f"{name} imports {target}" for name in sorted(GRAPH) if name.startswith(STANDALONE)
                    for target in sorted(GRAPH[name] - {"pynvim"})
                    if not target.startswith(name.split(".")[0] + "." + name.split(".")[1])]
    assert reaching_out == []


def test_the_known_circles_still_exist():
    assert _gone(KNOWN_CYCLES) == [], "a known circle is gone: remove it from KNOWN_CYCLES"
    # KNOWN_CYCLES is empty today, so the line above checks nothing by itself: the check must see
    # a circle that is gone, keep one that is not, and find a circle at all (test_no_import_circles)
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [frozenset("abc")]
    assert _gone([frozenset("abc"), frozenset("ad")], graph) == [["a", "d"]]


def test_a_type_only_import_back_up_counts(tmp_path):
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..session.session import Session\n")
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level)
    assert _targets("acp_nvim.core.permissions.broker", False, node) == ["acp_nvim.core.session.session"]
