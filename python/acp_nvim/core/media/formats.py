"""The media types acp.nvim saves, their file extensions, and what a blob's first bytes say it is.

Only types on these lists are written to disk: the extension comes from the list, never from a
name the agent gave.
"""

from __future__ import annotations

IMAGE_EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}
AUDIO_EXTENSIONS = {"audio/wav": ".wav", "audio/x-wav": ".wav", "audio/wave": ".wav", "audio/mpeg": ".mp3",
                    "audio/ogg": ".ogg", "audio/flac": ".flac"}
SAVED_EXTENSIONS = {**IMAGE_EXTENSIONS, **AUDIO_EXTENSIONS}
SAME_FORMAT = {"audio/x-wav": "audio/wav", "audio/wave": "audio/wav"}


def sniff(head: bytes) -> str | None:
    """The media type the first bytes say, or None when they match no saved format."""
    signatures = (
        (b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF87a", "image/gif"),
        (b"GIF89a", "image/gif"), (b"ID3", "audio/mpeg"), (b"\xff\xfb", "audio/mpeg"), (b"OggS", "audio/ogg"),
        (b"fLaC", "audio/flac"),
    )
    for magic, mime in signatures:
        if head.startswith(magic):
            return mime
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "audio/wav"
    return None


def same_format(declared: str, found: str | None) -> bool:
    """Whether the bytes are what the declared media type says (aliases of one format count as one)."""
    return found is not None and SAME_FORMAT.get(declared, declared) == found


def size_text(size: int) -> str:
    """``512 B``, ``1.5 KB``, ``2.0 MB``."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / 1024 / 1024:.1f} MB"
