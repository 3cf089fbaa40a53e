"""Lua requires go one way: no circle between the modules of lua/acp_nvim (and plugin/).

Every ``require('acp_nvim…')`` counts, at the top of a file and inside functions alike (a lazy
require back up is still a circle: the two modules cannot be understood or changed apart), and so
does one in a string (``"v:lua.require'acp_nvim.prompt'.omnifunc"``); one on a comment line does
not, nor does a module naming itself. Nothing is started: the files are read as text.

And the modules stay in small folders: each view in a folder of its own, no folder holding more than
15 modules (its .lua files and its subfolders).
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


MOST_MODULES_IN_A_FOLDER = 15


def folder_sizes(root: Path) -> dict[str, int]:
    """How many modules each folder under ``root`` holds: its .lua files (init.lua included) and its
    subfolders (each one module to its parent, whatever it holds)."""
    sizes = {}
    for folder in [root, *sorted(p for p in root.rglob("*") if p.is_dir())]:
        entries = list(folder.iterdir())
        lua_files = [p for p in entries if p.is_file() and p.suffix == ".lua"]
        subfolders = [p for p in entries if p.is_dir() and any(p.rglob("*.lua"))]
        sizes[folder.relative_to(root.parent).as_posix()] = len(lua_files) + len(subfolders)
    return sizes


def test_no_folder_holds_more_than_fifteen_modules():
    crowded = {folder: n for folder, n in folder_sizes(LUA / "acp_nvim").items() if n > MOST_MODULES_IN_A_FOLDER}
    assert crowded == {}, "split a folder of lua/acp_nvim that holds more than 15 modules"


def test_the_count_takes_files_and_subfolders(tmp_path):
    root = tmp_path / "plugin"
    (root / "view").mkdir(parents=True)
    (root / "empty").mkdir()
    for name in ("init.lua", "a.lua", "notes.md", "view/init.lua", "view/keys.lua"):
        (root / name).write_text("", encoding="utf-8")
    assert folder_sizes(root) == {"plugin": 3, "plugin/view": 2, "plugin/empty": 0}


def test_each_view_is_a_folder_of_its_own():
    views = ("chat", "prompt", "review", "threeway", "log", "board", "question", "checkpoints")
    assert [v for v in views if not (LUA / "acp_nvim" / v / "init.lua").is_file()] == []
