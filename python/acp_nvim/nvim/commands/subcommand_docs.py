"""Files made from the registries: the subcommands' Lua table, README table and vimdoc index; the
Lua table of the entry points into the Python host (``entry_points.py``).

``scripts/gen_docs.py`` (``make docs``) writes them; a test checks they are up to date.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

from .entry_points import ENTRY_POINTS
from .subcommands import DEFAULT, SOURCES, SUBCOMMANDS, Arg, Subcommand

ROOT = Path(__file__).resolve().parents[4]
LUA_FILE = ROOT / "lua" / "acp_nvim" / "host" / "subcommands.lua"
ENTRY_LUA_FILE = ROOT / "lua" / "acp_nvim" / "host" / "entry_points.lua"
README = ROOT / "README.md"
VIMDOC = ROOT / "doc" / "acp_nvim.txt"

README_BEGIN = "<!-- :Ai subcommands, generated from python/acp_nvim/nvim/subcommands.py by `make docs` -->"
README_END = "<!-- end of the generated subcommands -->"
VIMDOC_BEGIN = "*acp_nvim-subcommands*"
"""The index follows the line that holds this tag and ends at the first empty line."""
VIMDOC_WIDTH = 78
VIMDOC_TAG_COLUMN = 20


# -- Lua -----------------------------------------------------------------------------

def lua_table() -> str:
    """``lua/acp_nvim/host/subcommands.lua``: what :Ai needs before the Python host runs."""
    data = {"default": DEFAULT, "sources": sorted(SOURCES), "list": [_lua_entry(s) for s in SUBCOMMANDS]}
    return ("-- Generated from python/acp_nvim/nvim/subcommands.py by `make docs` (scripts/gen_docs.py):"
            " do not edit.\n"
            "--- The :Ai subcommands: usage, help, completion (literal words, named sources), where each runs.\n"
            f"return {lua_literal(data, 0)}\n")


def entry_points_table() -> str:
    """``lua/acp_nvim/host/entry_points.lua``: the calls Lua makes into the Python host."""
    entries = []
    for entry in ENTRY_POINTS:
        item: dict[str, Any] = {"name": entry.name, "method": entry.method, "params": list(entry.params)}
        if entry.sync:
            item["sync"] = True
        entries.append(item)
    return ("-- Generated from python/acp_nvim/nvim/commands/entry_points.py by `make docs` (scripts/gen_docs.py):"
            " do not edit.\n"
            "--- The entry points into the Python host: require('acp_nvim.host').call[name](params...) sends"
            " `method`.\n"
            f"return {lua_literal({'list': entries}, 0)}\n")


def _lua_entry(sub: Subcommand) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": sub.name, "usage": list(sub.usage), "help": sub.help}
    if sub.args:
        entry["args"] = [_lua_arg(a) for a in sub.args]
    if sub.lua is not None:
        entry["lua"] = list(sub.lua)
    if sub.range:
        entry["range"] = True
    if sub.expand:
        entry["expand"] = True
    return entry


def _lua_arg(arg: Arg) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if arg.words:
        out["words"] = list(arg.words)
    if arg.sources:
        out["sources"] = list(arg.sources)
    if arg.then:
        out["after"] = {word: [_lua_arg(a) for a in args] for word, args in arg.then.items()}
    return out


def lua_literal(value: Any, depth: int) -> str:
    """``value`` (None, bools, numbers, strings, lists, dicts) as a Lua literal, indented at ``depth``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "nil"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        quote = '"' if "'" in value and '"' not in value else "'"
        escaped = value.replace("\\", "\\\\").replace(quote, "\\" + quote).replace("\n", "\\n")
        return quote + escaped + quote
    pad, inner = "  " * depth, "  " * (depth + 1)
    if isinstance(value, list):
        items = [lua_literal(v, depth + 1) for v in value]
        flat = "{ " + ", ".join(items) + " }" if items else "{}"
        if len(flat) + len(pad) <= 100 and "\n" not in flat:
            return flat
        return "{\n" + "".join(f"{inner}{item},\n" for item in items) + pad + "}"
    if isinstance(value, dict):
        fields = [f"{_lua_key(k)} = {lua_literal(v, depth + 1)}" for k, v in value.items()]
        flat = "{ " + ", ".join(fields) + " }" if fields else "{}"
        if len(flat) + len(pad) <= 100 and "\n" not in flat:
            return flat
        return "{\n" + "".join(f"{inner}{item},\n" for item in fields) + pad + "}"
    raise TypeError(f"no Lua literal for {value!r}")


def _lua_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) else f"[{lua_literal(key, 0)}]"


# -- README --------------------------------------------------------------------------

def readme_table() -> str:
    """The markdown table of the README's Commands section."""
    rows = ["| command | what it does |", "|---|---|"]
    for sub in SUBCOMMANDS:
        forms = " / ".join(f"`{form}`".replace("|", "\\|") for form in sub.forms())
        help_text = sub.help.replace("|", "\\|")
        rows.append(f"| {forms} | {help_text} |")
    return "\n".join(rows)


def readme(text: str) -> str:
    """``text`` (the README) with its generated table replaced."""
    return _between(text, README_BEGIN, README_END, "\n" + readme_table() + "\n")


# -- vimdoc --------------------------------------------------------------------------

def vimdoc_index() -> list[str]:
    """The command index of section 3: every subcommand's forms, tag link and help line."""
    lines: list[str] = []
    indent = " " * VIMDOC_TAG_COLUMN
    for sub in SUBCOMMANDS:
        tag = f"  |:Ai-{sub.name}|"
        for i, form in enumerate(sub.forms()):
            lines.append((tag if i == 0 else "").ljust(VIMDOC_TAG_COLUMN) + form)
        help_text = sub.help[0].upper() + sub.help[1:] + "."
        lines += textwrap.wrap(help_text, VIMDOC_WIDTH, initial_indent=indent + "  ",
                               subsequent_indent=indent + "  ", break_on_hyphens=False)
    return lines


def vimdoc(text: str) -> str:
    """``text`` (doc/acp_nvim.txt) with its generated index replaced."""
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if VIMDOC_BEGIN in line), None)
    if start is None:
        raise ValueError(f"{VIMDOC.name}: no line with {VIMDOC_BEGIN}")
    end = start + 1
    while end < len(lines) and lines[end].strip():
        end += 1
    return "\n".join([*lines[: start + 1], *vimdoc_index(), *lines[end:]])


def _between(text: str, begin: str, end: str, body: str) -> str:
    head, sep, rest = text.partition(begin)
    _old, sep2, tail = rest.partition(end)
    if not sep or not sep2:
        raise ValueError(f"markers not found: {begin!r} ... {end!r}")
    return head + begin + body + end + tail


# -- all of them ---------------------------------------------------------------------

def generated() -> dict[Path, str]:
    """Every generated file with its up-to-date text."""
    return {
        LUA_FILE: lua_table(),
        ENTRY_LUA_FILE: entry_points_table(),
        README: readme(README.read_text("utf-8")),
        VIMDOC: vimdoc(VIMDOC.read_text("utf-8")),
    }


def stale() -> list[Path]:
    """The generated files whose text differs from what the registry makes."""
    return [path for path, text in generated().items()
            if not path.exists() or path.read_text("utf-8") != text]
