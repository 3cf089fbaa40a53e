"""A remote agent's WebSocket as an SDK message transport that shows every message to the log.

The SDK ships a WebSocket client (``acp.ws.create_websocket_stream``), but it keeps the
``websockets`` default 1 MiB frame limit (a large diff or file answer would close the
connection), drops non-JSON frames without a trace and has no tap for the log. This
transport speaks the same framing (one JSON-RPC message per text frame) and reuses the
SDK's affinity-cookie store across reconnects.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Protocol

from ..errors import AgentStartError
from .json_lines import MAX_DEPTH, MAX_ITEMS, too_deep, too_many_items
from .wire import Tap

FRAME_LIMIT = 64 * 1024 * 1024
CONNECT_TIMEOUT = 20.0


class Socket(Protocol):
    """The part of ``websockets.asyncio.client.ClientConnection`` the transport uses."""

    async def send(self, message: str) -> None: ...

    async def recv(self) -> str | bytes: ...

    async def close(self) -> None: ...


class CookieJar(Protocol):
    """``acp.ws.client.MemoryAcpCookieStore``: affinity cookies kept between reconnects."""

    def cookie_header(self) -> str | None: ...

    def store_set_cookies(self, values: list[str]) -> None: ...


class WebSocketTransport:
    """JSON-RPC over one WebSocket (``acp._transport.Transport``); ``closed`` is told the close code."""

    def __init__(self, socket: Socket, tap: Tap, closed: Callable[[int], None]) -> None:
        self._socket = socket
        self._tap = tap
        self._closed = closed

    async def send(self, message: dict[str, object]) -> None:
        from websockets.exceptions import ConnectionClosed

        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        self._tap.message("out", message, text)
        try:
            await self._socket.send(text)
        except ConnectionClosed as exc:
            raise ConnectionError(f"the connection to the agent is closed ({exc})") from None

    async def receive(self) -> dict[str, object] | None:
        from websockets.exceptions import ConnectionClosed

        while True:
            try:
                frame = await self._socket.recv()
            except ConnectionClosed as exc:
                self._closed(exc.rcvd.code if exc.rcvd is not None else 1006)
                return None
            message = self._parse(frame)
            if message is not None:
                return message

    def _parse(self, frame: str | bytes) -> dict[str, object] | None:
        if isinstance(frame, bytes):
            self._tap.noise(f"(binary frame of {len(frame)} bytes ignored)")
            return None
        items = too_many_items(frame)
        if items is not None:
            self._tap.noise(f"(a frame of {len(frame):,} characters dropped: {items:,} values, over the limit "
                            f"of {MAX_ITEMS:,})")
            return None
        if too_deep(frame):
            self._tap.noise(f"(a frame of {len(frame):,} characters dropped: nested deeper than {MAX_DEPTH} levels)")
            return None
        try:
            message = json.loads(frame)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            self._tap.noise(frame)
            return None
        self._tap.message("in", message, frame)
        return message

    async def close(self) -> None:
        await self._socket.close()


_cookies: dict[str, CookieJar] = {}


async def connect(name: str, url: str, headers: Mapping[str, str]) -> Socket:
    """Open the WebSocket (AgentStartError with the reason when it cannot be reached)."""
    try:
        from acp.ws.client import MemoryAcpCookieStore
        from websockets.asyncio.client import connect as ws_connect
    except ImportError:
        raise AgentStartError(f"agent {name!r} is remote ({url}): install the websockets package "
                              "(pip install 'websockets>=12,<16') in Neovim's Python host") from None
    jar = _cookies.setdefault(url, MemoryAcpCookieStore())
    sent = dict(headers)
    cookie = jar.cookie_header()
    if cookie and not any(key.lower() == "cookie" for key in sent):
        sent["Cookie"] = cookie
    try:
        socket = await ws_connect(url, additional_headers=sent or None, max_size=FRAME_LIMIT,
                                  open_timeout=CONNECT_TIMEOUT)
    except (TimeoutError, OSError, ValueError) as exc:
        raise AgentStartError(f"cannot reach agent {name!r} at {url}: {exc or type(exc).__name__}") from None
    except Exception as exc:  # websockets' handshake errors (InvalidStatus, InvalidURI, ...)
        raise AgentStartError(f"cannot reach agent {name!r} at {url}: {exc}") from None
    response = getattr(socket, "response", None)
    set_cookies = response.headers.get_all("Set-Cookie") if response is not None else []
    if set_cookies:
        jar.store_set_cookies(list(set_cookies))
    return socket
