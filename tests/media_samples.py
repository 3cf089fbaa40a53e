"""Small, valid media files for tests (images and audio attached to prompts)."""

from __future__ import annotations

import struct
import zlib


def png(width: int = 2, height: int = 2, rgb: bytes = b"\xff\x00\x00") -> bytes:
    """A valid PNG of ``width`` x ``height`` pixels of one colour."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + rgb * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def wav(samples: int = 800, rate: int = 8000) -> bytes:
    """A valid mono 8-bit PCM WAV of silence."""
    data = b"\x80" * samples
    fmt = struct.pack("<HHIIHH", 1, 1, rate, rate, 1, 8)
    return (b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVE" + b"fmt " + struct.pack("<I", 16) + fmt
            + b"data" + struct.pack("<I", len(data)) + data)


JPEG_HEAD = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes(32)
"""The start of a JPEG (enough for sniffing)."""
