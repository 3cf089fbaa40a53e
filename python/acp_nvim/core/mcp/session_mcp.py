"""A session's MCP servers: what its agent gets in session/new, load and resume.

The session asks ``servers_for(initialize response)`` each time it opens or reopens the ACP
session. The answer follows the agent's ``mcpCapabilities``: configured stdio servers always,
http and sse ones only where advertised, and the editor itself (``nvim``, http, with this
session's bearer token) where http is. A server the agent cannot take is told in the chat and
the log, once. The editor's server starts with the first session that gets it.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Protocol

from acp.schema import HttpHeader, HttpMcpServer, InitializeResponse

from ..config import Settings
from ..files.paths import PathPolicy
from ..log.ring import LogRing
from . import servers
from .http_server import unavailable
from .servers import SessionMcpServer, Transports
from .tools import SERVER_NAME, Grant

Notice = Callable[[str, str], None]
"""A line in the chat: (text, kind)."""
McpServersFor = Callable[[InitializeResponse | None], list[SessionMcpServer]]
"""The session's hook: the ``mcpServers`` for an agent that answered ``initialize`` so."""


class EditorMcpHost(Protocol):
    """The editor's MCP server as a session sees it (``http_server.EditorMcpServer``)."""

    def endpoint(self, grant: Grant) -> str:
        """Admit the grant's token; the server's URL (raises RuntimeError when it cannot serve)."""

    def revoke(self, token: str) -> None:
        """The token opens nothing anymore."""


class SessionMcp:
    """One session's MCP servers and its token for the editor's server."""

    def __init__(self, agent: str, settings: Settings, host: EditorMcpHost | None) -> None:
        self._configured = servers.configured(settings, agent)
        self._host = host if settings.editor_mcp else None
        self.token = secrets.token_urlsafe(32)
        self._grant: Grant | None = None
        self._granted = False
        """The editor's server admits the token (re-binding then updates what it grants)."""
        self._log: LogRing | None = None
        self._notice: Notice = lambda text, kind: None
        self._told: set[str] = set()

    def programs(self) -> list[tuple[str, list[str]]]:
        """The command and arguments of each configured stdio server: the agent starts them, so its box
        must show them (|acp_nvim-box|)."""
        return [(server.command, list(server.args)) for server in self._configured.values() if server.type == "stdio"]

    def secrets(self) -> dict[str, str]:
        """Values the session log must never show: configured env and header values, the token."""
        return {**servers.secrets(self._configured), "editor_mcp_token": self.token}

    def bind(self, session: str, cwd: str, policy: PathPolicy, log: LogRing, notice: Notice) -> McpServersFor:
        """Give the session's workspace, log and chat; returns the hook the session's link calls. Bound
        again (a warm start's servers, taken by a session), the token grants the new session's access."""
        self._grant = Grant(session, cwd, policy, log, self.token)
        self._log, self._notice = log, notice
        if self._granted and self._host is not None:
            self._host.endpoint(self._grant)
        return self.servers_for

    def servers_for(self, info: InitializeResponse | None) -> list[SessionMcpServer]:
        """The ``mcpServers`` to send; tells the user about any server the agent cannot take."""
        transports = Transports.of(info)
        offer = servers.offer(self._configured, transports)
        for name, reason in offer.refused:
            self._tell(f"MCP server {name!r} not passed to the agent: {reason}", "error")
        editor = self._editor_server(transports)
        chosen = [*offer.servers, *editor]
        self._add_log("info", f"mcpServers: {', '.join(s.name for s in chosen) or 'none'}")
        return chosen

    def close(self) -> None:
        """The session ended: revoke its token."""
        if self._host is not None:
            self._host.revoke(self.token)

    def _editor_server(self, transports: Transports) -> list[SessionMcpServer]:
        if self._host is None or self._grant is None:
            return []
        if SERVER_NAME in self._configured:
            self._add_log("info", f"a configured MCP server is named {SERVER_NAME!r}: the editor's is not offered")
            return []
        if not transports.http:
            self._add_log("info", "the agent takes no http MCP servers: the editor's tools (nvim) are not offered")
            return []
        problem = unavailable()
        try:
            if problem is not None:
                raise RuntimeError(problem)
            url = self._host.endpoint(self._grant)
            self._granted = True
        except (RuntimeError, OSError) as exc:
            self._tell(f"the editor's MCP tools (nvim) are off: {exc}", "error")
            return []
        header = HttpHeader(name="Authorization", value=f"Bearer {self.token}")
        return [HttpMcpServer(type="http", name=SERVER_NAME, url=url, headers=[header])]

    def _tell(self, text: str, kind: str) -> None:
        self._add_log("warn", text)
        if text not in self._told:  # once per session: restarts ask again, the user was told
            self._told.add(text)
            self._notice(text, kind)

    def _add_log(self, level: str, text: str) -> None:
        if self._log is not None:
            self._log.add(level, "lifecycle", text)
