"""Context attached to a prompt (a line range, an @mentioned file) and its ACP content blocks.

An attachment becomes an embedded resource (its text inside the prompt) when the agent's
``promptCapabilities.embeddedContext`` allows it, else a resource link. Mentioned files are
read when the prompt is sent, from the editor's buffer when one holds the file.
"""

from __future__ import annotations

import asyncio
import mimetypes
import os
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from acp.helpers import ContentBlock, embedded_text_resource, resource_block, resource_link_block

MAX_EMBED_BYTES = 1 << 20
"""Mentioned files larger than this are linked, not embedded."""
MENTION = re.compile(r"(?<!\S)@(\S+)")
TRAILING = ".,;:!?)]}'\""

Reader = Callable[[str], Awaitable[str | None]]


@dataclass(frozen=True, slots=True)
class Attachment:
    """One piece of context: a captured text (``text``) or a file read at send time (``path``)."""

    uri: str
    label: str
    text: str | None = None
    path: str | None = None
    mime_type: str | None = None


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
            mime = "inode/directory" if os.path.isdir(path) else _mime(path)
            found[path] = Attachment(Path(path).as_uri(), _relative(path, cwd),
                                     path=None if os.path.isdir(path) else path, mime_type=mime)
    return list(found.values())


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
            blocks.append(resource_link_block(item.label, item.uri, mime_type=item.mime_type))
    return blocks


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
