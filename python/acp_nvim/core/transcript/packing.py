"""Finished texts held compressed, the long ones compressed on a worker thread.

A long session keeps every block's text, so a finished block is held zlib-compressed (a third of
its length for prose, where 10k chunks of a few bytes cost ~70 bytes of objects apiece). Compressing
192 KB takes 0.7 ms; twenty turns that end together held the event loop for 14 ms, and every chat's
last chunk waited behind them. zlib lets go of the GIL while it compresses, so a text of
``OFF_LOOP_CHARS`` or more is compressed on a worker thread, and the block holds it as one string
until then.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Callable

ENCODING = ("utf-8", "surrogatepass")
LEVEL = 1
OFF_LOOP_CHARS = 32 * 1024
"""Texts this long are compressed off the event loop (about 0.1 ms of work inline)."""

Packed = Callable[[str, bytes], None]
"""Called on the event loop with the text and its compressed bytes."""


def pack(text: str) -> bytes:
    return zlib.compress(text.encode(*ENCODING), LEVEL)


def unpack(data: bytes) -> str:
    return zlib.decompress(data).decode(*ENCODING)


def pack_later(text: str, done: Packed) -> bool:
    """Compress ``text`` on a worker thread and call ``done`` on the running loop; False (nothing
    started) when ``text`` is short or no loop runs: the caller packs it now."""
    if len(text) < OFF_LOOP_CHARS:
        return False
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return False
    future = loop.run_in_executor(None, pack, text)

    def finished(future: asyncio.Future[bytes]) -> None:
        if not future.cancelled() and future.exception() is None:
            done(text, future.result())

    future.add_done_callback(finished)
    return True
