"""``fs/read_text_file`` windows: ``line`` is 1-based, ``limit`` counts lines."""

from __future__ import annotations


def slice_lines(text: str, line: int | None, limit: int | None) -> str:
    """Return ``limit`` lines starting at 1-based ``line``, keeping the original line endings."""
    if line is None and limit is None:
        return text
    lines = text.splitlines(keepends=True)
    start = max((line or 1) - 1, 0)
    stop = len(lines) if limit is None else start + max(limit, 0)
    return "".join(lines[start:stop])
