"""The configured MCP servers of one agent, as ACP ``mcpServers`` the agent can take.

Global ``mcp_servers`` and the agent's own are merged by name (the agent's win, ``false``
removes one). The agent's ``mcpCapabilities`` decide what is sent: stdio servers always,
http and sse servers only where advertised; the others are returned as refused, with the
reason, for the session to tell the user.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field

from acp.schema import (
    AcpMcpServer,
    EnvVariable,
    HttpHeader,
    HttpMcpServer,
    InitializeResponse,
    McpServerStdio,
    SseMcpServer,
)

from ..config import McpRemoteSpec, McpServerSpec, McpStdioSpec, Settings

SessionMcpServer = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio
"""One entry of ``mcpServers`` in session/new, session/load and session/resume (acp.nvim sends no ``acp`` one)."""


@dataclass(frozen=True, slots=True)
class Transports:
    """Which remote MCP transports the agent advertised (stdio is always taken)."""

    http: bool = False
    sse: bool = False

    @classmethod
    def of(cls, info: InitializeResponse | None) -> Transports:
        caps = info.agent_capabilities if info is not None else None
        mcp = caps.mcp_capabilities if caps is not None else None
        return cls(http=bool(mcp and mcp.http), sse=bool(mcp and mcp.sse))

    def takes(self, kind: str) -> bool:
        return kind == "stdio" or (kind == "http" and self.http) or (kind == "sse" and self.sse)


@dataclass(slots=True)
class Offer:
    """What goes to the agent, and what it cannot take (``(name, reason)``)."""

    servers: list[SessionMcpServer] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [server.name for server in self.servers]


def configured(settings: Settings, agent: str) -> dict[str, McpServerSpec]:
    """The global servers overridden by the agent's own; ``false`` removes a server. By name: a Lua
    table has no order, and the agent gets the same list every time."""
    spec = settings.all_agents().get(agent)
    merged = {**settings.mcp_servers, **(spec.mcp_servers if spec is not None else {})}
    return {name: server for name, server in sorted(merged.items()) if server is not False}


def offer(servers: Mapping[str, McpServerSpec], transports: Transports) -> Offer:
    """Split ``servers`` into the ones the agent takes (as ACP models) and the refused ones."""
    result = Offer()
    for name, server in servers.items():
        if transports.takes(server.type):
            result.servers.append(to_acp(name, server))
        else:
            result.refused.append((name, f"the agent does not take {server.type} MCP servers "
                                         f"(its mcpCapabilities lack {server.type})"))
    return result


def to_acp(name: str, server: McpServerSpec) -> SessionMcpServer:
    """The ACP model of one configured server (a stdio command resolved on PATH when found)."""
    if isinstance(server, McpStdioSpec):
        env = [EnvVariable(name=key, value=value) for key, value in server.env.items()]
        return McpServerStdio(name=name, command=_absolute(server.command), args=list(server.args), env=env)
    headers = [HttpHeader(name=key, value=value) for key, value in server.headers.items()]
    if server.type == "sse":
        return SseMcpServer(type="sse", name=name, url=server.url, headers=headers)
    return HttpMcpServer(type="http", name=name, url=server.url, headers=headers)


def _absolute(command: str) -> str:
    """ACP wants an absolute path; a bare name is looked up on PATH (kept as given when not found)."""
    if os.path.isabs(command) or os.sep in command:
        return os.path.abspath(os.path.expanduser(command))
    return shutil.which(command) or command


def secrets(servers: Mapping[str, McpServerSpec]) -> dict[str, str]:
    """Env values and header values to redact from logs, by a name that says where they came from."""
    found: dict[str, str] = {}
    for name, server in servers.items():
        values = server.env if isinstance(server, McpStdioSpec) else _remote_values(server)
        for key, value in values.items():
            found[f"mcp_servers.{name}.{key}"] = value
    return found


def _remote_values(server: McpRemoteSpec) -> dict[str, str]:
    values = dict(server.headers)
    for key, value in server.headers.items():  # "Bearer <token>": the token alone is a secret too
        scheme, _, credential = value.partition(" ")
        if credential and scheme.isalpha():
            values[f"{key} credential"] = credential
    return values


def describe(server: McpServerSpec) -> str:
    """One line for :checkhealth and the log (no secrets: env and header names only)."""
    if isinstance(server, McpStdioSpec):
        env = f" (env: {', '.join(server.env)})" if server.env else ""
        return f"stdio: {' '.join([server.command, *server.args])}{env}"
    headers = f" (headers: {', '.join(server.headers)})" if server.headers else ""
    return f"{server.type}: {server.url}{headers}"
