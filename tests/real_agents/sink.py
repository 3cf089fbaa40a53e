"""Where a streamed answer goes: SSE events over a chunked HTTP/1.1 response."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any, BinaryIO


class Disconnected(Exception):
    """The agent closed the connection (it cancelled the turn)."""


class Sink:
    """Writes server-sent events; raises Disconnected once the client has gone."""

    def __init__(self, out: BinaryIO, stop: threading.Event, hold: tuple[int, Callable[[], None]] | None = None
                 ) -> None:
        self._out = out
        self._stop = stop
        self._hold = hold
        """(n, wait): the n-th pause between chunks also calls ``wait`` (``Reply.hold``)."""
        self._pauses = 0

    def event(self, data: Any, name: str | None = None) -> None:
        head = f"event: {name}\n" if name else ""
        self.raw(f"{head}data: {json.dumps(data) if not isinstance(data, str) else data}\n\n")

    def raw(self, text: str) -> None:
        payload = text.encode("utf-8")
        try:
            self._out.write(f"{len(payload):x}\r\n".encode() + payload + b"\r\n")
            self._out.flush()
        except (BrokenPipeError, ConnectionResetError, OSError) as exc:
            raise Disconnected(str(exc)) from None

    def sleep(self, seconds: float) -> None:
        self._pauses += 1
        if self._hold and self._pauses == self._hold[0]:
            self._hold[1]()
        if self._stop.wait(seconds):
            raise Disconnected("server stopping")

    def end(self) -> None:
        try:
            self._out.write(b"0\r\n\r\n")
            self._out.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass
