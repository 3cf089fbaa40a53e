"""The editor as an MCP server: Streamable HTTP on 127.0.0.1, a random port, one bearer token per session.

It runs on the host's event loop, like the agents' connections: a tool call is an await on
the editor (the Bridge), so a thread would only add a second loop and a hand-off per call
(and a second place where Neovim could be called from the wrong thread). Its work on the
loop is small: parsing a request and sending an answer; the answers are made by Neovim.

It starts on the first ``endpoint`` call, without making the session wait: the socket is
bound and listening at once (an agent that connects early waits in the backlog) and the MCP
SDK (about half a second to import) is loaded in a thread before the server accepts.
"""

from __future__ import annotations

import asyncio
import hmac
import importlib
import importlib.util
import socket
from collections.abc import Mapping

from ..tasks import ErrorReporter, spawn
from .tools import EditorTools, Grant

HOST = "127.0.0.1"
PATH = "/mcp"
SDK_MODULES = ("mcp", "uvicorn", "starlette")
INSTALL_HINT = "pip install 'mcp>=2.3,<3' in the Python host of Neovim"


def unavailable() -> str | None:
    """Why the server cannot run (the MCP SDK is missing), or None. Cheap: nothing is imported."""
    missing = [name for name in SDK_MODULES if importlib.util.find_spec(name) is None]
    return f"the Python packages {', '.join(missing)} are missing ({INSTALL_HINT})" if missing else None


class EditorMcpServer:
    """One per editor: serves the tools to every session that holds a grant (its token)."""

    def __init__(self, tools: EditorTools, report: ErrorReporter) -> None:
        self._tools = tools
        self._report = report
        self._grants: dict[str, Grant] = {}
        self._socket: socket.socket | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self.failure: str | None = None
        """Why the server stopped serving, once it failed."""

    @property
    def url(self) -> str:
        """The endpoint (empty before the first grant)."""
        if self._socket is None:
            return ""
        return f"http://{HOST}:{self._socket.getsockname()[1]}{PATH}"

    @property
    def serving(self) -> bool:
        return self._task is not None and not self._task.done()

    def endpoint(self, grant: Grant) -> str:
        """Admit ``grant``'s token and return the URL, starting the server on the first call."""
        if self.failure is not None:
            raise RuntimeError(self.failure)
        self._grants[grant.token] = grant
        if self._socket is None:
            self._socket = _listening_socket()
            self._task = spawn(self._serve(self._socket), self._failed, "the editor's MCP server")
        return self.url

    def revoke(self, token: str) -> None:
        """The session ended: its token opens nothing anymore."""
        self._grants.pop(token, None)

    def grant_for(self, authorization: str) -> Grant | None:
        """The grant whose token the ``Authorization`` header carries (``Bearer <token>``), if any."""
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token:
            return None
        found = None
        for known, grant in self._grants.items():  # compare with every token, in constant time each
            if hmac.compare_digest(known.encode(), token.strip().encode()):
                found = grant
        return found

    async def call(self, authorization: str, name: str, args: Mapping[str, object]) -> tuple[str, bool]:
        """Answer one tool call for the session of its token (checked again: it may have ended since)."""
        grant = self.grant_for(authorization)
        if grant is None:
            return "the session of this token has ended", True
        return await self._tools.call(grant, name, args)

    async def close(self) -> None:
        """Stop serving (the editor exits, or a test ends)."""
        self._stop.set()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
        if self._socket is not None:
            self._socket.close()

    async def _serve(self, sock: socket.socket) -> None:
        await asyncio.to_thread(importlib.import_module, "acp_nvim.core.mcp.sdk_app")
        from . import sdk_app  # loaded above, off the loop

        await sdk_app.serve(sock, self, self._stop)

    def _failed(self, message: str) -> None:
        self.failure = message
        self._report(message)


def _listening_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, 0))
    sock.listen(64)
    sock.setblocking(False)
    return sock
