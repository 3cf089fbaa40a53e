"""Context attached to a prompt (a line range, an @mentioned file) and its ACP content blocks.

An attachment becomes an embedded resource (its text inside the prompt) when the agent's
``promptCapabilities.embeddedContext`` allows it, else a resource link. Mentioned files are
read when the prompt is sent, from the editor's buffer when one holds the file. An image
(png, jpg, gif, webp) or audio file becomes an ``image``/``audio`` block when the agent's
``promptCapabilities`` take it and it fits ``media.max_bytes``; otherwise a link, and the chat
says why.
"""

from __future__ import annotations

import asyncio
import mimetypes
import os
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from acp.helpers import (
    ContentBlock,
    audio_block,
    embedded_text_resource,
    image_block,
    resource_block,
    resource_link_block,
)
from acp.schema import PromptCapabilities

from . import media

MAX_EMBED_BYTES = 1 << 20
"""Mentioned files larger than this are linked, not embedded."""
MENTION = re.compile(r"(?<!\S)@(\S+)")
TRAILING = ".,;:!?)]}'\""

Reader = Callable[[str], Awaitable[str | None]]
Notice = Callable[[str, str], None]
"""A line in the chat: (text, kind)."""


@dataclass(frozen=True, slots=True)
class Attachment:
    """One piece of context: a captured text (``text``) or a file read at send time (``path``)."""

    uri: str
    label: str
    text: str | None = None
    path: str | None = None
    mime_type: str | None = None
    media: str = ""
    """``image`` or ``audio`` for a media file (sent as such when the agent takes it), else ''."""


@dataclass(frozen=True, slots=True)
class Accepts:
    """What the agent's ``promptCapabilities`` let a prompt carry besides text and links."""

    embedded: bool = False
    image: bool = False
    audio: bool = False

    @classmethod
    def of(cls, caps: PromptCapabilities | None) -> Accepts:
        if caps is None:
            return cls()
        return cls(bool(caps.embedded_context), bool(caps.image), bool(caps.audio))


def for_range(name: str, cwd: str, line1: int, line2: int, lines: list[str]) -> Attachment:
    """Lines ``line1``..``line2`` of a buffer named ``name`` ('' when unnamed), as they are now."""
    if name:
        path = Path(name).resolve()
        uri, label = f"{path.as_uri()}#L{line1}-L{line2}", f"{_relative(str(path), cwd)}:{line1}-{line2}"
    else:
        uri, label = f"untitled:buffer#L{line1}-L{line2}", f"[No Name]:{line1}-{line2}"
    return Attachment(uri, label, text="\n".join(lines) + "\n", mime_type=_mime(name))


def mentions(text: str, cwd: str) -> list[Attachment]:
    """The files and folders named ``@path`` in ``text`` that exist (relative to ``cwd``)."""
    found: dict[str, Attachment] = {}
    for match in MENTION.finditer(text):
        path = _existing(match.group(1), cwd)
        if path is not None and path not in found:
            found[path] = _mentioned(path, cwd)
    return list(found.values())


def for_file(path: str, cwd: str) -> Attachment:
    """An existing file (or folder) as context, labelled relative to ``cwd`` (media: with kind and size)."""
    return _mentioned(os.path.abspath(path), cwd)


def _mentioned(path: str, cwd: str) -> Attachment:
    uri, label = Path(path).as_uri(), _relative(path, cwd)
    if os.path.isdir(path):
        return Attachment(uri, label, mime_type="inode/directory")
    kind = media.kind_of(path)
    if kind:
        size = media.size_text(os.path.getsize(path))
        return Attachment(uri, f"{label} ({kind}, {size})", path=path, mime_type=media.declared_type(path),
                          media=kind)
    return Attachment(uri, label, path=path, mime_type=_mime(path))


def _existing(word: str, cwd: str) -> str | None:
    candidate = word
    while candidate:
        path = os.path.normpath(os.path.join(cwd, os.path.expanduser(candidate)))
        if os.path.exists(path):
            return path
        if candidate[-1] not in TRAILING:
            return None
        candidate = candidate[:-1]
    return None


def _relative(path: str, cwd: str) -> str:
    rel = os.path.relpath(path, cwd)
    return path if rel.startswith("..") else rel


def _mime(name: str) -> str | None:
    return mimetypes.guess_type(name)[0] if name else None


async def to_blocks(attachments: list[Attachment], embedded: bool, read: Reader) -> list[ContentBlock]:
    """ACP content blocks: embedded resources when allowed and readable, else resource links."""
    blocks: list[ContentBlock] = []
    for item in attachments:
        text = item.text if item.text is not None or not embedded or item.path is None else await read(item.path)
        if embedded and text is not None:
            blocks.append(resource_block(embedded_text_resource(item.uri, text, mime_type=item.mime_type)))
        else:
            blocks.append(_link(item))
    return blocks


def _link(item: Attachment) -> ContentBlock:
    return resource_link_block(item.label, item.uri, mime_type=item.mime_type)


class Packer:
    """Turns a prompt's attachments into content blocks for one agent (media within the size cap)."""

    def __init__(self, buffer_text: Callable[[str], Awaitable[str | None]], max_media_bytes: int,
                 notice: Notice) -> None:
        self._read = file_reader(buffer_text)
        self._max = max_media_bytes
        self._notice = notice

    async def blocks(self, attachments: list[Attachment], accepts: Accepts) -> list[ContentBlock]:
        """The blocks in order: media per ``accepts``, text as embedded resources or links."""
        blocks: list[ContentBlock] = []
        for item in attachments:
            if item.media and item.path is not None:
                blocks.append(await self._media(item, item.path, accepts))
            else:
                blocks.extend(await to_blocks([item], accepts.embedded, self._read))
        return blocks

    async def _media(self, item: Attachment, path: str, accepts: Accepts) -> ContentBlock:
        if not (accepts.image if item.media == "image" else accepts.audio):
            self._notice(f"{item.label}: the agent takes no {item.media} in prompts "
                         f"(promptCapabilities.{item.media}): sent as a link", "info")
            return _link(item)
        try:
            found = await asyncio.to_thread(media.read, path, self._max)
        except media.MediaError as exc:
            self._notice(f"{item.label}: {exc}: sent as a link", "error")
            return _link(item)
        if item.media == "image":
            return image_block(found.data, found.mime_type, uri=item.uri)
        return audio_block(found.data, found.mime_type)


def file_reader(buffer_text: Callable[[str], Awaitable[str | None]]) -> Reader:
    """Read a mentioned file: the editor's buffer when loaded (unsaved edits too), else the disk."""

    async def read(path: str) -> str | None:
        text = await buffer_text(path)
        if text is not None:
            return text
        return await asyncio.to_thread(_read_disk, path)

    return read


def _read_disk(path: str) -> str | None:
    try:
        if os.path.getsize(path) > MAX_EMBED_BYTES:
            return None
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
