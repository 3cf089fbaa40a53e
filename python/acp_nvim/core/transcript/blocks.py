"""What a conversation is made of: numbered blocks of text (each kept whole, a finished long one
compressed) and the agent's compactions."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..log.redact import StreamRedactor
from ..render_ops import Meta
from . import packing
from .tool_calls import FOLDED, UNFOLDED

COMPACT_EVERY = 4096
"""Join a streamed block's chunks after this many, so 100k tiny chunks stay cheap to hold."""
PACK_MIN_CHARS = 128
"""A finished block this long or longer is held compressed (``Block.settle``)."""

Restored = tuple[str, str, str | None]
"""A block of a record: its kind, its text as saved, and its message id."""


@dataclass(slots=True, eq=False)
class Block:
    id: int
    kind: str
    chunks: list[str] = field(default_factory=list)
    streamed: bool = False
    """Streamed in chunks (the chat appends to it; other blocks are drawn whole)."""
    meta: Meta | None = None
    guard: StreamRedactor | None = None
    """Redacts a streamed block as one text (holds back what may still become a secret)."""
    packed: bytes | None = None
    """The whole text, zlib-compressed, once the block is finished and long (``chunks`` is then empty)."""
    packed_chars: int = 0
    message_id: str | None = None
    """The agent's ``messageId`` of the message this block shows (None: the agent sent none)."""
    packed_lines: int = 0
    unredacted: bool = False
    """Restored from a record (redacted when it was saved): this session's redactor has not seen
    it yet; it does before the text is drawn or read (``Conversation.clean``)."""

    def text(self) -> str:
        if self.packed is not None:
            return packing.unpack(self.packed)
        return "".join(self.chunks)

    def size(self) -> int:
        """The length of the text in characters."""
        return self.packed_chars if self.packed is not None else sum(len(c) for c in self.chunks)

    def set_text(self, text: str) -> None:
        self.chunks = [text]
        self.packed = None

    def settle(self) -> None:
        """The block is finished: one string, compressed when long (``packing``; a long one on
        a worker thread, held as its chunks until then)."""
        if self.packed is not None:
            return
        parts, count = self.chunks, len(self.chunks)
        if packing.pack_later(parts, lambda packed: self._packed(packed, parts, count)):
            return
        text = "".join(parts)
        self.chunks = [text]
        if len(text) >= PACK_MIN_CHARS:
            self._packed(packing.pack(text), self.chunks, 1)

    def _packed(self, packed: packing.Packed, parts: list[str], count: int) -> None:
        if self.packed is not None or self.chunks is not parts or len(parts) != count:
            return  # changed while it was being compressed
        self.packed = packed.data
        self.packed_chars = packed.chars
        self.packed_lines = packed.lines
        self.chunks = []


MAX_SUMMARY = 256 * 1024
"""Characters kept of a compaction's summary."""
COMPACTION_WORDS = {"in_progress": "compacting the conversation…", "completed": "conversation compacted",
                    "failed": "compaction failed", "cancelled": "compaction cancelled"}


@dataclass(slots=True)
class Compaction:
    """One context compaction of the agent: its status, its summary, its error."""

    compaction_id: str
    status: str
    summary: str = ""
    error: str = ""
    restored: bool = False
    """Drawn from a record: ``status`` holds the line as it was."""

    def headline(self) -> str:
        if self.restored:
            return self.status
        words = COMPACTION_WORDS.get(self.status, f"compaction: {self.status}")
        error = f": {self.error}" if self.error else ""
        lines = self.summary.count("\n") + 1 if self.summary else 0
        summary = f" · summary: {lines} line{'s' if lines != 1 else ''}" if lines else ""
        return f"{words}{error}{summary}"

    def render(self, unfolded: bool) -> str:
        """The folded line (▸: <CR> shows the summary), or the line and the summary."""
        if not self.summary:
            return f"• {self.headline()}"
        if not unfolded:
            return f"{FOLDED} {self.headline()}"
        return f"{UNFOLDED} {self.headline()}\n" + "\n".join("  │ " + line for line in self.summary.split("\n"))

    def full_text(self) -> str:
        return self.headline() + (f"\n{self.summary}" if self.summary else "")
