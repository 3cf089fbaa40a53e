"""The media items of one session, by the chat block that shows them."""

from __future__ import annotations

from collections.abc import Callable

from acp.helpers import ContentBlock

from .items import NO_CAP, MediaItem, cap, describe

DEFAULT_MAX_BYTES = 10 * 1024 * 1024


class MediaShelf:
    """Items the agent sent in its messages (each its own block), and those of tool calls, made when
    first opened. ``find`` takes the line the user's key was on: only a line this shelf made matches."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES, redact: Callable[[str], str] = str) -> None:
        self.max_bytes = max_bytes
        self._redact = redact
        """The chat shows every line redacted: a line is matched as shown."""
        self._items: dict[int, list[tuple[str, MediaItem]]] = {}
        """Per block, each item with the line the chat shows for it."""

    def received(self, block: ContentBlock) -> MediaItem:
        """A message's content block as an item, its blob checked now."""
        return describe(block, self.max_bytes, decode=True)

    def keep(self, block_id: int, item: MediaItem) -> None:
        self._items.setdefault(block_id, []).append((self._redact(item.line), item))

    def find(self, block_id: int, line: str, contents: list[ContentBlock] | None = None) -> MediaItem | None:
        """The item of block ``block_id`` shown as ``line``; ``contents``: the block's tool call content,
        whose items are made (and kept) the first time one is asked for."""
        wanted = line.strip()
        for shown, item in self._items.get(block_id, []):
            if shown == wanted:
                return item
        for block in contents or []:
            item = describe(block, NO_CAP)
            if self._redact(item.line) == wanted:
                self.keep(block_id, item)
                return cap(item, self.max_bytes)
        return None
