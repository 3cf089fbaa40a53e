"""Scenarios that send what is not text: resource links, embedded resources, images and audio.

``media [path]`` sends one of each kind (the link names ``path``, default ``README.md``), and a tool
call carrying an image and a link; ``media-bad`` sends what the client must refuse in one line each.
"""

from __future__ import annotations

import base64
import struct
import zlib

from acp.helpers import (
    audio_block,
    embedded_text_resource,
    image_block,
    resource_block,
    resource_link_block,
    start_tool_call,
    tool_content,
    update_agent_message,
)
from acp.schema import StopReason

from .turn import Turn

NOTES = "# Notes\n\n- a resource embedded in the message\n- it opens in a scratch buffer\n"
BIG_PIXELS = 128


def png(width: int = 2, height: int = 2, noise: bool = False) -> bytes:
    """A valid PNG; ``noise`` makes its pixels incompressible (a larger file)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + (bytes((x * 37 + y * 101 + x * y) % 256 for x in range(width * 3)) if noise
                               else b"\xff\x00\x00" * width) for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 0)) \
        + chunk(b"IEND", b"")


def wav(samples: int = 800, rate: int = 8000) -> bytes:
    """A valid mono 8-bit PCM WAV of silence."""
    data = b"\x80" * samples
    fmt = struct.pack("<HHIIHH", 1, 1, rate, rate, 1, 8)
    return (b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVE" + b"fmt " + struct.pack("<I", 16) + fmt
            + b"data" + struct.pack("<I", len(data)) + data)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


async def media(turn: Turn) -> StopReason:
    """One of each kind in the message, then a tool call whose content is an image and a link."""
    path = turn.resolve(turn.args[0] if turn.args else "README.md")
    name = path.rsplit("/", 1)[-1]
    await turn.say("Here is what I found:\n")
    await turn.send(update_agent_message(resource_link_block(name, f"file://{path}", mime_type="text/plain")))
    await turn.send(update_agent_message(resource_block(embedded_text_resource(
        "file:///notes/plan.md", NOTES, mime_type="text/markdown"))))
    await turn.send(update_agent_message(image_block(_b64(png()), "image/png")))
    await turn.send(update_agent_message(audio_block(_b64(wav()), "audio/wav")))
    await turn.send(start_tool_call("media-1", "Render a chart", kind="other", status="completed", content=[
        tool_content(image_block(_b64(png(3, 3)), "image/png")),
        tool_content(resource_link_block(name, f"file://{path}")),
    ]))
    await turn.say("That is all.\n")
    return "end_turn"


async def media_bad(turn: Turn) -> StopReason:
    """What a client must refuse: invalid base64, a large image, a media type that lies, an unknown type,
    a link that climbs out with ``..`` and one outside the workspace."""
    cwd = turn.session.cwd
    await turn.say("Some of these are wrong:\n")
    await turn.send(update_agent_message(image_block("not*base64!", "image/png")))
    await turn.send(update_agent_message(image_block(_b64(png(BIG_PIXELS, BIG_PIXELS, noise=True)), "image/png")))
    await turn.send(update_agent_message(image_block(_b64(wav()), "image/png")))
    await turn.send(update_agent_message(image_block(_b64(b"MZ\x90\x00"), "application/x-msdownload")))
    await turn.send(update_agent_message(resource_link_block("escape", f"file://{cwd}/../escape.txt")))
    await turn.send(update_agent_message(resource_link_block("hostname", "file:///etc/hostname")))
    await turn.say("Done.\n")
    return "end_turn"
