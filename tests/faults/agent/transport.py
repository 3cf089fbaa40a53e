"""The agent's stdio as an SDK message transport that writes the diary and can misbehave:
stop reading stdin, write raw bytes (garbage, invalid UTF-8), and answer requests itself."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from .events import Events, NullEvents, summary

LINE_LIMIT = 256 * 1024 * 1024


class TapTransport:
    """Newline-delimited JSON on stdin/stdout (``acp._transport.Transport``), with a tap."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, events: Events | NullEvents) -> None:
        self._reader = reader
        self._writer = writer
        self._events = events
        self.prompt_ids: list[Any] = []
        """Ids of the ``session/prompt`` requests read so far."""
        self._raw_waiters: dict[Any, asyncio.Future[dict[str, Any]]] = {}

    async def send(self, message: dict[str, Any]) -> None:
        self._events.add("out", **summary(message))
        await self.raw((json.dumps(message, separators=(",", ":")) + "\n").encode())

    async def raw(self, data: bytes) -> None:
        """Write bytes to stdout as they are (whole lines keep the framing)."""
        self._writer.write(data)
        await self._writer.drain()

    async def raw_request(self, request_id: Any, data: bytes) -> dict[str, Any]:
        """Write a hand-made request line and await the client's answer to ``request_id``."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._raw_waiters[request_id] = future
        self._events.add("out_raw", id=request_id)
        await self.raw(data)
        return await future

    def stop_reading(self) -> None:
        """Stop taking bytes off stdin at all (not just parsing them): the client's pipe fills up."""
        transport = getattr(self._reader, "_transport", None)  # asyncio keeps reading into its buffer otherwise
        if transport is not None:
            transport.pause_reading()
        self._events.add("stopped_reading")

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._read_line()
            if not line:
                self._events.add("stdin_eof")
                return None
            message = self._parse(line)
            if message is None or self.intercept(message):
                continue
            return message

    def intercept(self, message: dict[str, Any]) -> bool:
        """Take a message before the SDK sees it (True): answers to requests written raw."""
        request_id = message.get("id")
        if "method" not in message and isinstance(request_id, int | str) and request_id in self._raw_waiters:
            self._raw_waiters.pop(request_id).set_result(message)
            return True
        return False

    def _parse(self, line: bytes) -> dict[str, Any] | None:
        try:
            message = json.loads(line)
        except ValueError:
            self._events.add("in_garbage", line=line[:200].decode("utf-8", "replace"))
            return None
        if not isinstance(message, dict):
            return None
        self._events.add("in", **summary(message))
        if message.get("method") == "session/prompt":
            self.prompt_ids.append(message.get("id"))
        return message

    async def _read_line(self) -> bytes:
        try:
            return await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            return exc.partial

    async def close(self) -> None:
        """Nothing to do: the process's end closes the pipes."""
