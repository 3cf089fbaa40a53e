"""Finished texts held compressed, the long ones compressed on a worker thread.

A long session keeps every block's text, so a finished block is held zlib-compressed (a third of
its length for prose, where 10k chunks of a few bytes cost ~70 bytes of objects apiece). Compressing
192 KB takes 0.7 ms; twenty turns that end together held the event loop for 14 ms, and every chat's
last chunk waited behind them. zlib lets go of the GIL while it compresses, so a text of
``OFF_LOOP_CHARS`` or more is compressed on a worker thread, and the block holds it as the chunks
it streamed in until then: they are joined and their lines counted there too (0.2 ms each for
192 KB, which the loop paid at every turn's end). Joining and counting hold the GIL, so that work
starts ``LATER``, once the burst of a turn's end has passed.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

ENCODING = ("utf-8", "surrogatepass")
LEVEL = 1
OFF_LOOP_CHARS = 32 * 1024
"""Texts this long are compressed off the event loop (about 0.1 ms of work inline)."""
LATER = 0.5
"""Seconds a long text waits before it is compressed: a turn's end is the busiest moment (its last
chunks, its state, every other session that ends with it), and joining and counting hold the GIL."""


@dataclass(frozen=True, slots=True)
class Packed:
    """A text compressed, with its length and its number of lines."""

    data: bytes
    chars: int
    lines: int


def pack(text: str) -> Packed:
    return Packed(zlib.compress(text.encode(*ENCODING), LEVEL), len(text), text.count("\n") + 1)


def unpack(data: bytes) -> str:
    return zlib.decompress(data).decode(*ENCODING)


def pack_later(parts: Sequence[str], done: Callable[[Packed], None]) -> bool:
    """Join ``parts`` and compress the text on a worker thread ``LATER``, then call ``done`` on the
    running loop; False (nothing started) when the text is short or no loop runs: the caller packs
    it now."""
    if sum(map(len, parts)) < OFF_LOOP_CHARS:
        return False
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return False
    held = tuple(parts)

    def start() -> None:
        loop.run_in_executor(None, _pack_parts, held).add_done_callback(finished)

    def finished(future: asyncio.Future[Packed]) -> None:
        if not future.cancelled() and future.exception() is None:
            done(future.result())

    loop.call_later(LATER, start)
    return True


def _pack_parts(parts: tuple[str, ...]) -> Packed:
    return pack("".join(parts))
