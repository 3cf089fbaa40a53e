"""A small blocking msgpack-rpc client on a Unix socket, one per connection to Neovim.

pynvim's client runs its own event loop and is not meant to be shared between threads;
the fault harness needs several independent connections (driver, UI, probes), each
owned by one thread, so it speaks the protocol directly.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from typing import Any

import msgpack

REQUEST, RESPONSE, NOTIFICATION = 0, 1, 2
Handler = Callable[[str, list[Any]], None]


class RpcError(RuntimeError):
    """Neovim answered a request with an error."""


class Rpc:
    """A blocking connection: ``request`` waits for its response, ``notify`` does not.

    Notifications from Neovim that arrive while a request waits go to ``on_notification``.
    """

    def __init__(self, address: str, timeout: float = 30.0, on_notification: Handler | None = None) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.sock.connect(address)
        except OSError:
            self.sock.close()
            raise
        self.sock.settimeout(timeout)
        self._unpacker = msgpack.Unpacker(raw=False, unicode_errors="surrogateescape", max_buffer_size=1 << 30)
        self._next = 0
        self._send_lock = threading.Lock()
        self.on_notification = on_notification or (lambda method, args: None)

    def request(self, method: str, *args: Any) -> Any:
        """Call an API function and return its result (RpcError on an error answer)."""
        self._next += 1
        msgid = self._next
        self._send([REQUEST, msgid, method, list(args)])
        while True:
            message = self.read_message()
            if message[0] == RESPONSE and message[1] == msgid:
                if message[2] is not None:
                    raise RpcError(f"{method}: {message[2]}")
                return message[3]

    def notify(self, method: str, *args: Any) -> None:
        """Send an API call as a notification (no answer)."""
        self._send([NOTIFICATION, method, list(args)])

    def read_message(self) -> list[Any]:
        """The next message from Neovim; notifications are also handed to ``on_notification``."""
        while True:
            for message in self._unpacker:
                if message[0] == NOTIFICATION:
                    self.on_notification(message[1], message[2])
                return list(message)
            data = self.sock.recv(1 << 16)
            if not data:
                raise ConnectionError("Neovim closed the connection")
            self._unpacker.feed(data)

    def lua(self, code: str, *args: Any) -> Any:
        """``nvim_exec_lua``: run a chunk with ``...`` bound to ``args``."""
        return self.request("nvim_exec_lua", code, list(args))

    def channel_id(self) -> int:
        """This connection's channel id in Neovim."""
        return int(self.request("nvim_get_api_info")[0])

    def _send(self, message: list[Any]) -> None:
        data = msgpack.packb(message, use_bin_type=True)
        with self._send_lock:
            self.sock.sendall(data)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass
