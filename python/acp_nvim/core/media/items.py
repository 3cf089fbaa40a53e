"""One content block from the agent as a media item: the line the chat shows and what opening it needs.

A blob is checked when its item is made with ``decode``: valid base64, within the size cap, a media
type on the allow-list, and bytes that are what that type says. A failed check is the item's
``problem``, one line the chat shows in place of the key that would open it.
"""

from __future__ import annotations

import base64
import binascii
import os
import posixpath
import re
import urllib.parse
from dataclasses import dataclass

from acp.helpers import ContentBlock
from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextResourceContents,
)

from . import formats

MARK = "▣"
"""The first character of a media line: the chat's keys look for it."""
NAME_CHARS = re.compile(r"[^\w.-]+")
MAX_NAME = 60
NO_CAP = 1 << 62
"""The cap of a line drawn where the session's cap is not known (a tool call's content): the cap is
applied when the item is opened."""


@dataclass
class MediaItem:
    """A link, an embedded resource, an image or audio, as the chat shows it."""

    kind: str
    """``link``, ``resource`` (embedded text), ``image``, ``audio`` or ``blob`` (an embedded binary)."""
    uri: str = ""
    name: str = ""
    mime: str = ""
    size: int | None = None
    text: str | None = None
    data: bytes | None = None
    encoded: str | None = None
    problem: str | None = None
    saved: str | None = None
    """Where the blob was saved (the first open saves it)."""

    @property
    def line(self) -> str:
        """The one line the chat shows (ends with the key that opens it, or the problem)."""
        head = f"{MARK} {self.kind}"
        label = self.name or self.uri
        if label:
            head += " " + _short(label)
        if self.name and self.uri and self.uri != self.name and self.kind in ("link", "resource"):
            head += f" ({_short(self.uri, tail=True)})"
        parts = [head, *([self.mime] if self.mime else []),
                 *([formats.size_text(self.size)] if self.size is not None else [])]
        head = " · ".join(parts)
        return f"{head} · ✗ {self.problem}" if self.problem else f"{head} · {self.hint}"

    @property
    def hint(self) -> str:
        return "gx opens" if self.kind in ("image", "audio") else "gf opens"

    def file_path(self) -> str | None:
        """The local path of a ``file://`` uri (None for any other scheme)."""
        parsed = urllib.parse.urlsplit(self.uri)
        if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
            return None
        return urllib.parse.unquote(parsed.path)

    def scratch_name(self) -> str:
        """A file name for a scratch buffer of this resource, its extension from the uri or the mime type
        (what picks the filetype), made only of safe characters."""
        base = posixpath.basename(urllib.parse.urlsplit(self.uri).path) or self.name or "resource"
        stem, ext = os.path.splitext(NAME_CHARS.sub("-", base).strip("-.") or "resource")
        if not ext and self.mime:
            ext = _MIME_EXTENSIONS.get(self.mime, "")
        return (stem[:MAX_NAME] or "resource") + ext


_MIME_EXTENSIONS = {"text/markdown": ".md", "text/x-markdown": ".md", "application/json": ".json",
                    "text/x-python": ".py", "text/x-lua": ".lua", "text/html": ".html", "text/css": ".css",
                    "text/javascript": ".js", "application/javascript": ".js", "text/x-rust": ".rs",
                    "text/x-go": ".go", "text/x-c": ".c", "text/x-sh": ".sh", "application/x-sh": ".sh",
                    "application/xml": ".xml", "text/xml": ".xml", "application/yaml": ".yaml",
                    "text/yaml": ".yaml", "application/toml": ".toml", "text/csv": ".csv", "text/plain": ".txt"}


def _short(text: str, limit: int = 80, tail: bool = False) -> str:
    """``text`` on one line, at most ``limit`` characters (``tail``: its end kept, as of a path)."""
    text = text.replace("\n", " ")
    if len(text) <= limit:
        return text
    return "…" + text[1 - limit:] if tail else text[:limit - 1] + "…"


def is_media(block: ContentBlock) -> bool:
    return isinstance(block, ImageContentBlock | AudioContentBlock | ResourceContentBlock
                      | EmbeddedResourceContentBlock)


def describe(block: ContentBlock, max_bytes: int, decode: bool = False) -> MediaItem:
    """The item of a non-text content block; ``decode`` checks (and keeps) a blob's bytes."""
    if isinstance(block, ResourceContentBlock):
        return MediaItem("link", block.uri, block.title or block.name, block.mime_type or "", block.size)
    if isinstance(block, EmbeddedResourceContentBlock):
        resource = block.resource
        name = posixpath.basename(urllib.parse.urlsplit(resource.uri).path)
        if isinstance(resource, TextResourceContents):
            return MediaItem("resource", resource.uri, name, resource.mime_type or "",
                             len(resource.text.encode("utf-8", "surrogatepass")), text=resource.text)
        assert isinstance(resource, BlobResourceContents)
        mime = resource.mime_type or ""
        kind = "image" if mime in formats.IMAGE_EXTENSIONS else "audio" if mime in formats.AUDIO_EXTENSIONS \
            else "blob"
        return _blob(MediaItem(kind, resource.uri, name, mime), resource.blob, max_bytes, decode)
    if isinstance(block, ImageContentBlock):
        return _blob(MediaItem("image", block.uri or "", "", block.mime_type), block.data, max_bytes, decode)
    if isinstance(block, AudioContentBlock):
        return _blob(MediaItem("audio", "", "", block.mime_type), block.data, max_bytes, decode)
    kind = getattr(block, "type", "content")
    return MediaItem(str(kind), problem="not shown (unknown content)")


def _blob(item: MediaItem, encoded: str, max_bytes: int, decode: bool) -> MediaItem:
    item.size = len(encoded) * 3 // 4 - encoded[-2:].count("=")
    item.encoded = encoded
    if cap(item, max_bytes).problem:
        pass
    elif item.mime not in formats.SAVED_EXTENSIONS:
        item.problem = f"media type {item.mime or '(none)'!r} is not one acp.nvim saves"
    elif decode:
        check(item)
    return item


def cap(item: MediaItem, max_bytes: int) -> MediaItem:
    """Apply the session's size cap to an item described without it."""
    if item.problem is None and item.encoded is not None and (item.size or 0) > max_bytes:
        item.problem = f"larger than media.received_max_bytes ({formats.size_text(max_bytes)}): not saved"
    return item


def check(item: MediaItem) -> MediaItem:
    """Decode the blob and compare its bytes with its media type (sets ``data`` or ``problem``)."""
    if item.problem or item.data is not None or item.encoded is None:
        return item
    try:
        data = base64.b64decode(item.encoded, validate=True)
    except (binascii.Error, ValueError):
        item.problem = "invalid base64: not saved"
        return item
    found = formats.sniff(data[:16])
    if not formats.same_format(item.mime, found):
        item.problem = f"says {item.mime} but the bytes are {found or 'no known format'}: not saved"
        return item
    item.data, item.size, item.encoded = data, len(data), None
    return item
