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
    if not line and limit is None:
        return text
    start = max(line or 1, 1) - 1
    begin = _offset_of_line(text, start)
    if begin is None:
        return ""
    if limit is None:
        return text[begin:]
    end = _offset_of_line(text, start + max(limit, 0), begin, start)
    return text[begin:] if end is None else text[begin:end]


def _offset_of_line(text: str, index: int, pos: int = 0, at: int = 0) -> int | None:
    """Offset where 0-based line ``index`` starts, scanning from line ``at`` at ``pos``.

    None when the text has no such line (a final newline does not open an empty line).
    """
    while at < index:
        nl = text.find("\n", pos)
        if nl < 0:
            return None
        pos, at = nl + 1, at + 1
    return pos if pos < len(text) or index == 0 else None


def line_count(text: str) -> int:
    """Number of lines as ``slice_lines`` counts them (``"a\\nb"`` and ``"a\\nb\\n"`` have 2)."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)
