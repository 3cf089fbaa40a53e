"""What the editor's MCP tools need from the editor: live state, read on request.

Neovim implements it in ``nvim/files/editor_tools.py``; core tests fake it. Entries are plain JSON
objects (as Lua sends them); paths are absolute and resolved, lines and columns 1-based. An
entry from a loaded buffer carries the buffer's source as ``file_id`` (``[dev, ino]`` of the file
its text came from, ``[0, 0]`` for a new file, None: unknown); the tools check it and drop the key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..port import NEW_FILE, FileId

Json = dict[str, object]
"""One JSON object as the editor produced it."""


@dataclass(frozen=True, slots=True)
class LspQuery:
    """A question for the LSP clients: ``symbols``, ``definition`` or ``references``.

    ``path`` None with ``symbols`` asks every client's workspace symbols for ``query``. A
    position is a 1-based ``line`` and either a 1-based ``column`` (characters) or a ``symbol``
    whose first occurrence on that line is meant.
    """

    kind: str
    path: str | None = None
    line: int = 0
    column: int = 0
    symbol: str = ""
    query: str = ""
    expect: FileId = NEW_FILE
    """The file at ``path`` as the opener found it (``NEW_FILE``: none): Neovim loads ``path`` for the
    query only while it is still that file."""


class EditorState(Protocol):
    """The editor's live state for the MCP tools. Every method is safe to call from the event loop."""

    async def diagnostics(self, path: str | None) -> Json:
        """Diagnostics of the loaded buffer of ``path`` (every loaded buffer when None), any source.

        ``{"diagnostics": [...], "loaded": bool}`` (``loaded``: a buffer holds ``path``). Each
        entry: ``path``, ``line``, ``column``, ``end_line``, ``end_column``, ``severity``
        (ERROR/WARN/INFO/HINT), ``message``, ``source``, ``code``.
        """

    async def open_buffers(self) -> list[Json]:
        """Every listed file buffer: ``path``, ``modified``, ``line``, ``column``, ``visible``, ``lines``."""

    async def selection(self) -> Json | None:
        """The current visual selection, else the last one: ``path``, ``start_line``, ``start_column``,
        ``end_line``, ``end_column``, ``mode``, ``text``, ``current``; None when there was none."""

    async def lsp(self, query: LspQuery) -> Json:
        """``{"items": [...]}`` (``path``, ``line``, ``column``, ``text``, maybe ``kind``/``name``),
        or ``{"error": "..."}`` (no client attached, no such buffer, timed out, ...)."""

    async def open_file(self, path: str, line: int, expect: FileId) -> Json:
        """Show ``path`` at ``line`` to the user without taking the focus: ``{"shown": ...}`` or ``{"error": ...}``.

        A buffer not loaded yet is loaded only while ``path`` is still the regular file ``expect``."""
