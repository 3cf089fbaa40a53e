"""Carry an agent's line changes (base → theirs) over to a text that moved on (ours).

Used when the agent's whole-file diff was made against an older text than the one the
user sees now (for example, unsaved edits the agent never read). Each changed range of
the base must still be present, unchanged and contiguous, in ``ours``; otherwise the
changes do not land cleanly and the caller falls back to showing the diff as sent.
"""

from __future__ import annotations

from difflib import SequenceMatcher

MIN_MATCHED = 0.6
"""Share of the base's lines that must be found in ours before the base counts as the same file."""


def carry_over(base: str, ours: str, theirs: str) -> str | None:
    """``ours`` with the base → theirs changes applied, or None when they do not land cleanly."""
    base_lines = base.splitlines(keepends=True)
    our_lines = ours.splitlines(keepends=True)
    their_lines = theirs.splitlines(keepends=True)
    if len(base_lines) * 2 < len(our_lines):
        return None  # a snippet, not the file
    mapping = _line_map(base_lines, our_lines)
    if len(mapping) < MIN_MATCHED * len(base_lines):
        return None
    result: list[str] = []
    position = 0
    opcodes = SequenceMatcher(None, base_lines, their_lines, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            continue
        span = _locate(mapping, i1, i2)
        if span is None or span[0] < position:
            return None
        result += our_lines[position : span[0]] + their_lines[j1:j2]
        position = span[1]
    return "".join(result + our_lines[position:])


def _line_map(base: list[str], ours: list[str]) -> dict[int, int]:
    """Base line index → our line index, for lines the two texts share."""
    mapping: dict[int, int] = {}
    for block in SequenceMatcher(None, base, ours, autojunk=False).get_matching_blocks():
        for k in range(block.size):
            mapping[block.a + k] = block.b + k
    return mapping


def _locate(mapping: dict[int, int], i1: int, i2: int) -> tuple[int, int] | None:
    """Where base lines [i1, i2) sit in ours; an insertion (i1 == i2) needs a neighbour as anchor."""
    if i1 < i2:
        if not all(i in mapping for i in range(i1, i2)) or mapping[i2 - 1] - mapping[i1] != i2 - 1 - i1:
            return None
        return mapping[i1], mapping[i2 - 1] + 1
    if i1 - 1 in mapping:
        anchor = mapping[i1 - 1] + 1
        return anchor, anchor
    if i1 in mapping:
        return mapping[i1], mapping[i1]
    return (0, 0) if i1 == 0 and not mapping else None
