"""Render operations: the changes of a transcript the chat applies, one typed record per kind.

Each goes to Lua as a map with named fields (``lua/acp_nvim/chat/init.lua`` reads them by name and
declares them as ``acp_nvim.RenderOp.*``). ``meta`` is None or a small table (a tool call's
``status``). A long transcript is drawn from its newest blocks: ``gap`` says where older blocks
are not drawn yet, ``insert`` draws one of them when the user scrolls up to it.
"""

from __future__ import annotations

from typing import Literal, TypedDict

Meta = dict[str, object]


class NewOp(TypedDict):
    """Append a block at the end of the transcript."""

    op: Literal["new"]
    id: int
    kind: str
    lines: list[str]
    meta: Meta | None


class AppendOp(TypedDict):
    """Extend the last line of a block (``text`` may hold newlines)."""

    op: Literal["append"]
    id: int
    text: str


class SetOp(TypedDict):
    """Replace a block's lines (tool call status, plan progress)."""

    op: Literal["set"]
    id: int
    lines: list[str]
    meta: Meta | None


class ClipOp(TypedDict):
    """The block is cut in the view: show ``marker`` below it."""

    op: Literal["clip"]
    id: int
    marker: str


class InsertOp(TypedDict):
    """Draw a block above block ``before`` (an older block, drawn as the user scrolls up)."""

    op: Literal["insert"]
    id: int
    kind: str
    lines: list[str]
    meta: Meta | None
    before: int


class GapOp(TypedDict):
    """``count`` blocks between block ``after`` (None: the top) and block ``id`` are not drawn
    (0: none are any more)."""

    op: Literal["gap"]
    id: int
    after: int | None
    count: int


RenderOp = NewOp | AppendOp | SetOp | ClipOp | InsertOp | GapOp


def new(block_id: int, kind: str, lines: list[str], meta: Meta | None = None) -> NewOp:
    return {"op": "new", "id": block_id, "kind": kind, "lines": lines, "meta": meta}


def append(block_id: int, text: str) -> AppendOp:
    return {"op": "append", "id": block_id, "text": text}


def set_lines(block_id: int, lines: list[str], meta: Meta | None = None) -> SetOp:
    return {"op": "set", "id": block_id, "lines": lines, "meta": meta}


def clip(block_id: int, marker: str) -> ClipOp:
    return {"op": "clip", "id": block_id, "marker": marker}


def insert(block_id: int, kind: str, lines: list[str], meta: Meta | None, before: int) -> InsertOp:
    return {"op": "insert", "id": block_id, "kind": kind, "lines": lines, "meta": meta, "before": before}


def gap(block_id: int, after: int | None, count: int) -> GapOp:
    return {"op": "gap", "id": block_id, "after": after, "count": count}
