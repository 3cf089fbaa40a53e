"""``fs/read_text_file`` windows: ``line`` is 1-based, ``limit`` counts lines.

Lines end at ``\\n`` only: a CRLF file keeps its ``\\r\\n`` endings, and a lone ``\\r`` or a
form feed inside a line never splits it (``str.splitlines`` would). The last line may lack
a newline; it is returned as it is.
"""

from __future__ import annotations


def slice_lines(text: str, line: int | None, limit: int | None) -> str:
    """Return ``limit`` lines starting at 1-based ``line``, keeping the original line endings.

    ``line`` None or 0 means line 1; ``limit`` None means to the end; ``limit`` 0 and a
    ``line`` past the end give ``""``.
    """
    if limit is not None and limit <= 0:
        return ""
    skip = max(line or 1, 1) - 1
    rest = text
    if skip:
        parts = text.split("\n", skip)
        rest = parts[skip] if len(parts) > skip else ""
    if limit is None:
        return rest
    pieces = rest.split("\n", limit)
    return "\n".join(pieces[:limit]) + "\n" if len(pieces) > limit else rest


def line_count(text: str) -> int:
    """Number of lines as ``slice_lines`` counts them (``"a\\nb"`` and ``"a\\nb\\n"`` have 2)."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)
