"""Images and audio in prompts: which files they are, and reading one within the size cap.

The kind is taken from the file name and checked against the file's first bytes: a model API
refuses a whole request whose image is not what its media type says, so a ``.png`` that is
really a JPEG is sent as ``image/jpeg``, and a file that is no known image or audio is refused.
"""

from __future__ import annotations

import base64
import os
import stat
from dataclasses import dataclass

IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
               ".webp": "image/webp"}
AUDIO_TYPES = {".wav": "audio/wav", ".mp3": "audio/mpeg", ".ogg": "audio/ogg", ".oga": "audio/ogg",
               ".flac": "audio/flac", ".m4a": "audio/mp4", ".aac": "audio/aac"}
SNIFF_BYTES = 16


def kind_of(path: str) -> str:
    """``image``, ``audio`` or '' (not media) by the file name."""
    ext = os.path.splitext(path)[1].lower()
    return "image" if ext in IMAGE_TYPES else "audio" if ext in AUDIO_TYPES else ""


def declared_type(path: str) -> str | None:
    ext = os.path.splitext(path)[1].lower()
    return IMAGE_TYPES.get(ext) or AUDIO_TYPES.get(ext)


def sniff(head: bytes) -> str | None:
    """The media type the first bytes of a file say, or None when they match no known format."""
    signatures = (
        (b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF87a", "image/gif"),
        (b"GIF89a", "image/gif"), (b"ID3", "audio/mpeg"), (b"OggS", "audio/ogg"), (b"fLaC", "audio/flac"),
    )
    for magic, mime in signatures:
        if head.startswith(magic):
            return mime
    if head[:4] == b"RIFF" and head[8:12] in (b"WEBP", b"WAVE"):
        return "image/webp" if head[8:12] == b"WEBP" else "audio/wav"
    if head[4:8] == b"ftyp":
        return "audio/mp4"
    if len(head) > 1 and head[0] == 0xFF and head[1] & 0xF6 == 0xF0:
        return "audio/aac"
    if len(head) > 1 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0:
        return "audio/mpeg"
    return None


def size_text(size: int) -> str:
    """'812 B', '42.1 KB', '7.2 MB'."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


@dataclass(frozen=True, slots=True)
class Media:
    """A media file read for a prompt: its type (as its bytes say) and its base64 data."""

    mime_type: str
    data: str
    size: int


class MediaError(Exception):
    """The file cannot go into the prompt as media (too large, unreadable, not what its name says)."""


def read(path: str, max_bytes: int) -> Media:
    """Read ``path`` (a regular file, at most ``max_bytes``) as media; blocking, run it in a thread."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise MediaError(f"cannot read it: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise MediaError("not a regular file")
        if info.st_size > max_bytes:
            raise MediaError(f"{size_text(info.st_size)} is more than media.max_bytes ({size_text(max_bytes)})")
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise MediaError(f"it grew past media.max_bytes ({size_text(max_bytes)})")
    return Media(_checked_type(path, data[:SNIFF_BYTES]), base64.b64encode(data).decode("ascii"), len(data))


def _checked_type(path: str, head: bytes) -> str:
    found, kind = sniff(head), kind_of(path)
    if found is None or not found.startswith(kind + "/"):
        named = declared_type(path) or "media"
        raise MediaError(f"its content is not {named}" + (f" (it looks like {found})" if found else ""))
    return found
