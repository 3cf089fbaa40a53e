"""Files made from the configuration schema (``core/config.py``) and the agents' mode table.

``lua/acp_nvim/config/schema.lua`` holds what Lua needs before the Python host runs: every default
and the checks ``setup()``'s options get on first use (types, bounds, choices, their messages, the
keys each closed table knows). ``lua/acp_nvim/presets/modes.lua`` holds the mode each preset selects
per policy. ``:help acp_nvim-config`` lists every key with its type, default and meaning.
``scripts/gen_docs.py`` (``make docs``) writes them; a test checks they are up to date.
"""

from __future__ import annotations

import textwrap
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from ...core.config import AgentSpec, McpRemoteSpec, McpStdioSpec, Settings
from ...core.connection.mode_policy import MODE_TABLE
from .subcommand_docs import ROOT, VIMDOC, lua_literal

SCHEMA_LUA = ROOT / "lua" / "acp_nvim" / "config" / "schema.lua"
MODES_LUA = ROOT / "lua" / "acp_nvim" / "presets" / "modes.lua"
VIMDOC_BEGIN = "*acp_nvim-config*"
"""The key list follows the line that holds this tag (and one of introduction) and ends at the first empty line."""
HEADER = "-- Generated from {source} by `make docs` (scripts/gen_docs.py): do not edit.\n"


@dataclass(frozen=True, slots=True)
class Key:
    """One key of ``setup()``'s options, as the schema declares it."""

    path: str
    kind: str
    """boolean, string, integer, number, strings, map, section, agents or servers."""
    default: object
    description: str
    bounds: dict[str, float]
    """ge, gt, le: pydantic's bounds of a number."""
    unit: str = ""
    choices: tuple[str, ...] = ()
    may_be_false: bool = False
    closed: tuple[str, ...] = ()
    """For a section: the keys it knows (internal ones too); any other key is reported as unknown."""
    optional: bool = False

    @property
    def generic(self) -> bool:
        """Checked in Lua from this table alone (agents and MCP servers have validators of their own)."""
        return self.kind not in ("agents", "servers") and "{name}" not in self.path


def keys(model: type[BaseModel] = Settings, prefix: str = "") -> Iterator[Key]:
    """Every user key of ``model``, depth first, in the order the model declares them."""
    for name, info in model.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        if extra.get("internal"):
            continue
        yield from _key(prefix + name, info, extra)


def _key(path: str, info: FieldInfo, extra: dict[str, Any]) -> Iterator[Key]:
    annotation, optional = _unwrap_optional(info.annotation)
    kind, inner = _kind(annotation)
    default = info.get_default(call_default_factory=True)
    bounds = {type(m).__name__.lower(): bound for m in info.metadata if (bound := _bound(m)) is not None}
    choices = tuple(extra.get("choices", ())) or _literal_choices(annotation)
    section = inner if isinstance(inner, type) and issubclass(inner, BaseModel) else None
    # every section's keys, closed or not: Lua reports a key no section knows (a typo), with the nearest
    closed: tuple[str, ...] = tuple(section.model_fields) if section is not None else ()
    yield Key(path, kind, _plain(default), info.description or "", bounds, str(extra.get("unit", "")), choices,
              bool(extra.get("may_be_false")), closed, optional)
    if section is not None:
        yield from keys(section, path + ".")
    elif kind == "agents":
        yield from keys(AgentSpec, path + ".{name}.")


def _unwrap_optional(annotation: Any) -> tuple[Any, bool]:
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
    return annotation, False


def _kind(annotation: Any) -> tuple[str, Any]:
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return _kind(args[0])
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "section", annotation
    simple = {bool: "boolean", str: "string", int: "integer", float: "number"}
    if annotation in simple:
        return simple[annotation], None
    if origin is Literal:
        return "string", None
    if origin is list and _kind(args[0])[0] == "string":
        return "strings", None
    if origin is dict and args[1] is str:
        return "map", None
    if origin is dict and args[1] is AgentSpec:
        return "agents", None
    if origin is dict:
        return "servers", None
    raise TypeError(f"the config schema has no kind for {annotation!r}")


def _literal_choices(annotation: Any) -> tuple[str, ...]:
    return tuple(get_args(annotation)) if get_origin(annotation) is Literal else ()


def _bound(meta: object) -> float | None:
    if isinstance(meta, annotated_types.Ge):
        return float(meta.ge)  # type: ignore[arg-type]
    if isinstance(meta, annotated_types.Gt):
        return float(meta.gt)  # type: ignore[arg-type]
    if isinstance(meta, annotated_types.Le):
        return float(meta.le)  # type: ignore[arg-type]
    return None


def _plain(value: object) -> object:
    """A default as Lua and the docs write it: whole floats as integers, models as their own keys."""
    if isinstance(value, BaseModel):
        return None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# -- messages and types, in words -------------------------------------------------------

def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def expectation(key: Key) -> str:
    """What a wrong value's message says it expected (``expected a whole number from 0 to 10000``)."""
    if key.choices:
        return "expected one of " + ", ".join(key.choices)
    noun = {"integer": "a whole number", "number": "a number"}[key.kind]
    if key.unit == "bytes":
        noun += " of bytes"
    elif key.unit == "seconds":
        noun = "seconds,"
    return "expected " + _range(noun, key.bounds)


def _range(noun: str, bounds: dict[str, float]) -> str:
    ge, gt, le = bounds.get("ge"), bounds.get("gt"), bounds.get("le")
    if ge is not None and le is not None:
        return f"{noun.rstrip(',')} from {_number(ge)} to {_number(le)}"
    if gt is not None and le is not None:
        return f"{noun} more than {_number(gt)} and at most {_number(le)}"
    if ge is not None:
        return f"{noun.rstrip(',')} >= {_number(ge)}"
    if gt is not None:
        return f"{noun.rstrip(',')} > {_number(gt)}"
    return noun.rstrip(",")


def type_words(key: Key) -> str:
    """The key's type as the docs name it."""
    if key.kind in ("integer", "number") and (key.bounds or key.unit):
        words = expectation(key).removeprefix("expected ").removeprefix("a ")
    elif key.choices:
        words = "one of " + ", ".join(f"'{c}'" for c in key.choices)
    else:
        words = {"boolean": "boolean", "string": "string", "integer": "whole number", "number": "number",
                 "strings": "list of strings", "map": "table of strings by name", "section": "table",
                 "agents": "table of agents by name", "servers": "table of MCP servers by name"}[key.kind]
    if key.may_be_false:
        words += " or false"
    return words + (" or nil" if key.optional else "")


# -- Lua -----------------------------------------------------------------------------------

def _defaults(model: type[BaseModel] = Settings) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in keys(model):
        if "." in key.path:
            continue
        info = model.model_fields[key.path]
        inner = _kind(_unwrap_optional(info.annotation)[0])[1]
        out[key.path] = _defaults(inner) if isinstance(inner, type) else key.default
    return out


def _check(key: Key) -> dict[str, Any]:
    entry: dict[str, Any] = {"path": key.path, "type": key.kind}
    if key.kind in ("integer", "number"):
        for name, lua_name in (("ge", "min"), ("gt", "above"), ("le", "max")):
            if name in key.bounds:
                entry[lua_name] = _lua_number(key.bounds[name])
        entry["message"] = expectation(key)
    if key.choices:
        entry["choices"] = list(key.choices)
        entry["message"] = expectation(key)
    if key.may_be_false:
        entry["may_be_false"] = True
    if key.closed:
        entry["keys"] = list(key.closed)
    return entry


def _lua_number(value: float) -> int | float:
    return int(value) if value.is_integer() else value


def schema_lua() -> str:
    """``lua/acp_nvim/config/schema.lua``."""
    data = {
        "defaults": _defaults(),
        "checks": [_check(k) for k in keys() if k.generic],
        "top_keys": list(Settings.model_fields),
        "agent_keys": list(AgentSpec.model_fields),
        "mcp_keys": {"stdio": list(McpStdioSpec.model_fields), "remote": list(McpRemoteSpec.model_fields)},
    }
    return (HEADER.format(source="python/acp_nvim/core/config.py")
            + "--- setup()'s schema: every default, and the checks Lua makes on first use (acp_nvim.config).\n"
            + f"return {lua_literal(data, 0)}\n")


def modes_lua() -> str:
    """``lua/acp_nvim/presets/modes.lua``: per preset, the mode each policy selects."""
    data = {entry.preset: dict(entry.preset_modes) for entry in MODE_TABLE if entry.preset}
    return (HEADER.format(source="the mode table of python/acp_nvim/core/connection/mode_policy.py")
            + "--- The mode each preset selects under each permission policy (acp_nvim.presets).\n"
            + f"return {lua_literal(data, 0)}\n")


# -- vimdoc --------------------------------------------------------------------------------

WIDTH = 78


def vimdoc_keys() -> list[str]:
    """Every key: its path, type and default on one line, then its meaning, indented."""
    lines: list[str] = []
    for key in keys():
        head = f"`{key.path}`  {type_words(key)}"
        if key.kind != "section" and key.default is not None:
            head += f", default `{lua_literal(key.default, 0)}`"
        lines += textwrap.wrap(head, WIDTH, subsequent_indent="        ", break_on_hyphens=False)
        if key.description:
            lines += textwrap.wrap(key.description, WIDTH, initial_indent="    ", subsequent_indent="    ",
                                   break_on_hyphens=False, break_long_words=False)
    return lines


def vimdoc(text: str) -> str:
    """``text`` (doc/acp_nvim.txt) with its generated key list replaced."""
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if VIMDOC_BEGIN in line), None)
    if start is None:
        raise ValueError(f"{VIMDOC.name}: no line with {VIMDOC_BEGIN}")
    begin = start + 2  # the tag line, then one line that says where the list comes from
    end = begin
    while end < len(lines) and lines[end].strip():
        end += 1
    return "\n".join([*lines[:begin], *vimdoc_keys(), *lines[end:]])


def generated() -> dict[Path, str]:
    """Every file made from the schema and the mode table, with its up-to-date text."""
    return {SCHEMA_LUA: schema_lua(), MODES_LUA: modes_lua(), VIMDOC: vimdoc(VIMDOC.read_text("utf-8"))}


def stale() -> list[Path]:
    """The generated files whose text differs from what the schema makes."""
    return [path for path, text in generated().items() if not path.exists() or path.read_text("utf-8") != text]
