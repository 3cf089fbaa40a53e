"""Lua requires go one way: no circle between the modules of lua/acp_nvim (and plugin/).

Every ``require('acp_nvim…')`` counts, at the top of a file and inside functions alike (a lazy
require back up is still a circle: the two modules cannot be understood or changed apart), and so
does one in a string (``"v:lua.require'acp_nvim.prompt'.omnifunc"``); one on a comment line does
not, nor does a module naming itself. Nothing is started: the files are read as text.
"""

from __future__ import annotations

import re
from pathlib import Path

from helpers.graphs import circle, components

ROOT = Path(__file__).resolve().parents[2]
LUA = ROOT / "lua"
REQUIRE = re.compile(r"""require\s*\(?\s*['"](acp_nvim(?:\.[A-Za-z0-9_]+)*)['"]""")
COMMENT_LINE = re.compile(r"^\s*--.*$", re.MULTILINE)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(LUA).with_suffix("").parts)
    if parts[-1] == "init":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(LUA.rglob("*.lua"))}


MODULES = _modules()


def requires(text: str) -> set[str]:
    """The acp_nvim modules ``text`` requires, anywhere in it but on comment lines."""
    return set(REQUIRE.findall(COMMENT_LINE.sub("", text)))


GRAPH: dict[str, set[str]] = {
    name: requires(path.read_text(encoding="utf-8")) - {name} for name, path in MODULES.items()
}

FOREIGN_EDGES: frozenset[tuple[str, str]] = frozenset()
"""Edges tolerated while being removed elsewhere (none today); the last test fails once one is gone."""


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each strongly connected component of more than one module, as one circle through it
    (named in the order its requires go), sorted."""
    return sorted(circle(graph, component) for component in components(graph))


def _without_foreign(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    return {name: {t for t in targets if (name, t) not in FOREIGN_EDGES} for name, targets in graph.items()}


def test_every_module_is_read():
    assert {"acp_nvim", "acp_nvim.chat", "acp_nvim.review.queue", "acp_nvim.kit.scratch"} <= set(GRAPH)
    assert "acp_nvim.kit.scratch" in GRAPH["acp_nvim.chat"], "a top-level require counts"
    assert "acp_nvim.chat.opens" in GRAPH["acp_nvim.prompt"], "a require inside a function counts"


def test_requires_are_found_in_every_spelling():
    text = """local a = require('acp_nvim.kit')
    local b = require "acp_nvim.chat"
    local c = function() return require("acp_nvim").config end
    vim.bo.omnifunc = "v:lua.require'acp_nvim.prompt'.omnifunc"
    local d = require('other.acp_nvim')
    -- require('acp_nvim.log') in a comment
    --- require('acp_nvim.log') in a doc comment"""
    assert requires(text) == {"acp_nvim.kit", "acp_nvim.chat", "acp_nvim", "acp_nvim.prompt"}


def test_no_require_circles():
    circles = [" -> ".join(circle) for circle in cycles(_without_foreign(GRAPH))]
    # one circle is named per knot of modules: fix it and run again for the next
    assert circles == [], "Lua modules require each other in a circle"


def test_the_check_finds_a_circle_and_names_it():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c", "a"]]


def test_tolerated_edges_still_exist():
    gone = sorted(edge for edge in FOREIGN_EDGES if edge[1] not in GRAPH.get(edge[0], set()))
    assert gone == [], "a tolerated edge is gone: remove it from FOREIGN_EDGES"
