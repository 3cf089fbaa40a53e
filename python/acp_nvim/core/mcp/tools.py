"""The editor's MCP tools: what each takes, and how a call is answered, confined and logged.

Every call names its session by the bearer token it came with (a ``Grant``): paths are
resolved against the session's cwd and must stay inside its workspace roots (the session's
``PathPolicy``); entries about files outside are left out and counted. So are entries from a
buffer that is not the view of the file at its path now (its ``file_id``, the file Neovim read it
from, is not the one the opener's no-follow walk finds there: see ``core/files/service.py``), and
entries about files no buffer holds unless a regular file is there. A file Neovim is asked to
load passes the opener's walk first (inside, regular, no symlink), and Lua checks it is still
that file just before it loads it. Each call is one ``mcp`` entry in the session's log, with its
arguments, its answer and its time.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from acp import RequestError

from ..files.opener import NOT_FOUND, Opener
from ..files.paths import PathPolicy, PathRefused
from ..log.ring import LogRing
from ..port import NEW_FILE, FileId
from .editor_state import EditorState, Json, LspQuery

MAX_ITEMS = 500
"""Entries per answer (diagnostics, locations, symbols); the rest is counted, not sent."""
MAX_LOGGED = 16 * 1024
"""Characters of an answer kept in the log entry."""
SEVERITIES = ("ERROR", "WARN", "INFO", "HINT")
SERVER_NAME = "nvim"
"""The name agents know the editor's MCP server by."""


@dataclass(frozen=True, slots=True)
class Grant:
    """One session's access to the editor's tools: who asks, where they may look, where it is logged."""

    session: str
    cwd: str
    policy: PathPolicy
    log: LogRing
    token: str


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool as listed to the agent."""

    name: str
    description: str
    schema: Json
    read_only: bool = True


class ToolError(Exception):
    """A call that cannot be answered (bad argument, path outside the workspace): told to the model."""


def _obj(properties: Json, required: list[str] | None = None) -> Json:
    schema: Json = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


PATH = {"type": "string", "description": "File path, absolute or relative to the workspace"}
POSITION: Json = {
    "path": PATH,
    "line": {"type": "integer", "minimum": 1, "description": "1-based line"},
    "column": {"type": "integer", "minimum": 1, "description": "1-based column (characters); or give symbol"},
    "symbol": {"type": "string", "description": "The name on that line to look up (instead of column)"},
}

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("diagnostics",
             "Diagnostics (errors, warnings, hints) Neovim has now for one file or the whole workspace, from "
             "LSP servers, linters or any other source; unsaved buffers included, as the user sees them.",
             _obj({"path": {**PATH, "description": "Only this file (default: every file with diagnostics)"},
                   "severity": {"type": "string", "enum": list(SEVERITIES),
                                "description": "Only this severity and worse"}})),
    ToolSpec("open_buffers",
             "The files open in Neovim: path, unsaved changes (modified), cursor line and column, visible in a "
             "window.", _obj({})),
    ToolSpec("selection",
             "The user's current visual selection in Neovim, or the last one: path, range and text.", _obj({})),
    ToolSpec("symbols",
             "Symbols (functions, classes, ...) from the LSP servers attached in Neovim: of one file (path), or "
             "matching a query across the workspace.",
             _obj({"path": {**PATH, "description": "The file whose symbols to list"},
                   "query": {"type": "string", "description": "Workspace symbol search (when no path is given)"}})),
    ToolSpec("definition", "Where the symbol at a position is defined, from the LSP servers attached in Neovim.",
             _obj(POSITION, ["path", "line"])),
    ToolSpec("references", "Every reference to the symbol at a position, from the LSP servers attached in Neovim.",
             _obj(POSITION, ["path", "line"])),
    ToolSpec("open_file", "Show a file at a line to the user in Neovim (the user keeps the focus where it is).",
             _obj({"path": PATH, "line": {"type": "integer", "minimum": 1, "description": "1-based line"}},
                  ["path"]), read_only=False),
)
BY_NAME = {tool.name: tool for tool in TOOLS}

Handler = Callable[[EditorState, Grant, Mapping[str, object]], Awaitable[Json]]


class EditorTools:
    """Answers tool calls from the editor's live state, for the session of each call's grant."""

    def __init__(self, state: EditorState) -> None:
        self.state = state

    async def call(self, grant: Grant, name: str, args: Mapping[str, object]) -> tuple[str, bool]:
        """The answer's text (JSON) and whether it is an error; logged in the session's log either way."""
        started = time.perf_counter()
        try:
            handler = HANDLERS.get(name)
            if handler is None:
                raise ToolError(f"unknown tool {name!r}; the editor offers {', '.join(BY_NAME)}")
            text, error = _dump(await handler(self.state, grant, args)), False
        except ToolError as exc:
            text, error = str(exc), True
        _log(grant.log, name, args, text, error, (time.perf_counter() - started) * 1000)
        return text, error


def _dump(answer: Json) -> str:
    """Compact JSON: the answer is read by a model, whose agent counts (and caps) its tokens."""
    return json.dumps(answer, ensure_ascii=False, separators=(",", ":"))


def _log(log: LogRing, name: str, args: Mapping[str, object], text: str, error: bool, elapsed: float) -> None:
    shown = ", ".join(f"{key}={value!r}" for key, value in args.items())
    outcome = f"error: {text[:200]}" if error else f"{len(text)} chars"
    raw = json.dumps({"tool": f"{SERVER_NAME}/{name}", "arguments": dict(args),
                      "error" if error else "result": text[:MAX_LOGGED]}, ensure_ascii=False, default=str)
    log.add("warn" if error else "info", "mcp", f"tool {SERVER_NAME}/{name}({shown}) → {outcome} ({elapsed:.1f} ms)",
            direction="in", raw=raw)


# -- arguments and confinement -------------------------------------------------------

def _string(args: Mapping[str, object], key: str, required: bool = False) -> str:
    value = args.get(key)
    if value is None or value == "":
        if required:
            raise ToolError(f"missing argument {key!r}")
        return ""
    if not isinstance(value, str):
        raise ToolError(f"argument {key!r} must be a string")
    return value


def _line(args: Mapping[str, object], key: str, required: bool = False) -> int:
    value = args.get(key)
    if value is None:
        if required:
            raise ToolError(f"missing argument {key!r}")
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value or value < 1:
        raise ToolError(f"argument {key!r} must be a whole number >= 1")
    return int(value)


def confine(grant: Grant, path: str) -> str:
    """``path`` (relative ones from the session's cwd) resolved, if inside the workspace roots."""
    if "\0" in path:
        raise ToolError("not a valid path")
    full = os.path.normpath(os.path.join(grant.cwd, os.path.expanduser(path)))
    resolved = Path(os.path.realpath(full))
    if not grant.policy.contains(resolved):
        raise ToolError(f"{path}: outside the workspace roots ({grant.policy.describe()})")
    return str(resolved)


def _policy_checked(grant: Grant, path: str) -> str:
    resolved = confine(grant, path)
    try:
        grant.policy.check(resolved)
    except PathRefused as exc:
        raise ToolError(f"{path}: {exc.reason}") from None
    except RequestError as exc:  # a directory: file_error
        raise ToolError(str(exc)) from None
    return resolved


async def loadable(grant: Grant, path: str) -> tuple[str, FileId]:
    """``path`` confined, and one Neovim may load, with the file it is now (``NEW_FILE``: none yet):
    a regular file reached without a symlink (the opener's walk), never a FIFO or a device that
    would hang Neovim's read, nor a directory. Lua loads it only while it is still that file."""
    resolved = _policy_checked(grant, path)
    opener = Opener(grant.policy.roots)
    try:
        return resolved, await asyncio.to_thread(opener.identity, Path(resolved), links_ok=True)
    except PathRefused as exc:
        raise ToolError(f"{path}: {exc.reason}") from None
    except RequestError as exc:
        if exc.code == NOT_FOUND:
            return resolved, NEW_FILE
        raise ToolError(str(exc)) from None
    except OSError as exc:
        raise ToolError(f"{path}: {exc.strerror or exc}") from None


def _inside(grant: Grant, entries: list[Json]) -> tuple[list[Json], int]:
    """The entries about files inside the workspace, and how many were left out."""
    kept = [e for e in entries if isinstance(e.get("path"), str)
            and grant.policy.contains(Path(os.path.realpath(str(e["path"]))))]
    return kept, len(entries) - len(kept)


NO_BUFFER = object()
"""An entry's ``file_id`` when no loaded buffer holds its file (Lua sent none)."""


async def _verified(grant: Grant, entries: list[Json]) -> tuple[list[Json], int]:
    """The entries (inside the workspace) whose buffer is the file at their path now, each without
    its ``file_id`` (its buffer's source), and how many were left out. An entry no buffer holds
    needs a regular file there."""
    sources = [e.pop("file_id", NO_BUFFER) for e in entries]
    paths = {str(e["path"]) for e in entries}
    on_disk = await asyncio.to_thread(_sources_on_disk, Opener(grant.policy.roots), paths)
    kept = [e for e, source in zip(entries, sources, strict=True) if _is_file(source, on_disk[str(e["path"])])]
    return kept, len(entries) - len(kept)


def _sources_on_disk(opener: Opener, paths: set[str]) -> dict[str, FileId | None]:
    return {path: opener.source_of(Path(os.path.realpath(path))) for path in paths}


def _is_file(source: object, on_disk: FileId | None) -> bool:
    if source is NO_BUFFER:
        return on_disk is not None and on_disk != NEW_FILE
    found = _file_id(source)
    return found is not None and found == on_disk


def _file_id(raw: object) -> FileId | None:
    if not isinstance(raw, list | tuple) or len(raw) != 2 or not all(isinstance(x, int | float) for x in raw):
        return None
    return (int(raw[0]), int(raw[1]))


async def _listing(key: str, grant: Grant, entries: list[Json], **extra: object) -> Json:
    inside, outside = _inside(grant, entries)
    kept, unverified = await _verified(grant, inside)
    answer: Json = {key: kept[:MAX_ITEMS], **extra}
    if len(kept) > MAX_ITEMS:
        answer["truncated"] = f"{len(kept) - MAX_ITEMS} more not shown"
    if outside:
        answer["outside_workspace"] = f"{outside} entries about files outside the workspace left out"
    if unverified:
        answer["not_the_file"] = (f"{unverified} entries left out: their buffer is not the file at its path now "
                                  "(it changed or was replaced on disk since Neovim read it), or no regular file "
                                  "is there")
    return answer


# -- the tools --------------------------------------------------------------------------

async def _diagnostics(state: EditorState, grant: Grant, args: Mapping[str, object]) -> Json:
    path = _string(args, "path")
    severity = _string(args, "severity").upper()
    if severity and severity not in SEVERITIES:
        raise ToolError(f"severity must be one of {', '.join(SEVERITIES)}")
    target = confine(grant, path) if path else None
    raw = await state.diagnostics(target)
    entries = [e for e in _entries(raw.get("diagnostics")) if _at_least(e, severity)]
    answer = await _listing("diagnostics", grant, entries)
    if target is not None and not raw.get("loaded"):
        answer["note"] = f"{target} is not open in Neovim: diagnostics exist only for open files"
    return answer


def _at_least(entry: Json, severity: str) -> bool:
    if not severity:
        return True
    found = entry.get("severity")
    return found in SEVERITIES and SEVERITIES.index(str(found)) <= SEVERITIES.index(severity)


async def _open_buffers(state: EditorState, grant: Grant, args: Mapping[str, object]) -> Json:
    return await _listing("buffers", grant, _entries(await state.open_buffers()))


async def _selection(state: EditorState, grant: Grant, args: Mapping[str, object]) -> Json:
    found = await state.selection()
    if found is None:
        return {"selection": None, "note": "the user has not selected anything in a file yet"}
    entry = _ordered(dict(found))
    if not _inside(grant, [entry])[0]:
        return {"selection": None, "note": "the selection is in a file outside the workspace"}
    if not (await _verified(grant, [entry]))[0]:
        return {"selection": None, "note": "the selection is in a buffer that is not the file at its path now "
                                           "(it changed or was replaced on disk since Neovim read it)"}
    return {"selection": entry}


async def _symbols(state: EditorState, grant: Grant, args: Mapping[str, object]) -> Json:
    path, query = _string(args, "path"), _string(args, "query")
    if not path and not query:
        raise ToolError("give a path (that file's symbols) or a query (workspace symbols)")
    target, expect = await loadable(grant, path) if path else (None, NEW_FILE)
    return await _lsp_answer(grant, await state.lsp(LspQuery("symbols", target, query=query, expect=expect)),
                             "symbols")


async def _definition(state: EditorState, grant: Grant, args: Mapping[str, object]) -> Json:
    return await _position_query(state, grant, args, "definition")


async def _references(state: EditorState, grant: Grant, args: Mapping[str, object]) -> Json:
    return await _position_query(state, grant, args, "references")


async def _position_query(state: EditorState, grant: Grant, args: Mapping[str, object], kind: str) -> Json:
    name = _string(args, "path", required=True)
    line, column, symbol = _line(args, "line", required=True), _line(args, "column"), _string(args, "symbol")
    if not column and not symbol:
        raise ToolError("give the column or the symbol on that line")
    path, expect = await loadable(grant, name)
    answer = await state.lsp(LspQuery(kind, path, line=line, column=column, symbol=symbol, expect=expect))
    return await _lsp_answer(grant, answer, "locations")


async def _lsp_answer(grant: Grant, answer: Json, key: str) -> Json:
    if answer.get("error"):
        raise ToolError(str(answer["error"]))
    return await _listing(key, grant, _entries(answer.get("items")))


async def _open_file(state: EditorState, grant: Grant, args: Mapping[str, object]) -> Json:
    path, expect = await loadable(grant, _string(args, "path", required=True))
    if expect == NEW_FILE:
        raise ToolError(f"{path}: no such file")
    answer = await state.open_file(path, _line(args, "line") or 1, expect)
    if answer.get("error"):
        raise ToolError(str(answer["error"]))
    return answer


KEY_ORDER = ("path", "line", "column", "end_line", "end_column", "severity", "kind", "name", "message", "source",
             "code", "text")


def _entries(value: object) -> list[Json]:
    if not isinstance(value, list):
        return []
    return [_ordered(item) for item in value if isinstance(item, dict)]


def _ordered(item: Mapping[object, object] | Json) -> Json:
    """The entry's keys in a reading order (Lua tables have none)."""
    entry = {str(k): v for k, v in item.items()}
    first = {key: entry.pop(key) for key in KEY_ORDER if key in entry}
    return {**first, **entry}


HANDLERS: dict[str, Handler] = {
    "diagnostics": _diagnostics,
    "open_buffers": _open_buffers,
    "selection": _selection,
    "symbols": _symbols,
    "definition": _definition,
    "references": _references,
    "open_file": _open_file,
}
