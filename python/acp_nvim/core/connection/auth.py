"""Authentication when the agent asks for it: ``session/new`` fails with ``auth_required``.

ACP's methods are the agent's own (``authenticate`` with its id; a method without a type, or with
one the SDK does not know, is one) and ``terminal`` ones. ``env_var`` left the schema; older agents
still send it, and the SDK still reads it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from acp import RequestError
from acp.schema import AuthMethodAgent, EnvVarAuthMethod, NewSessionResponse, TerminalAuthMethod

from ..agent.process import AgentProcess
from ..errors import AgentStartError
from ..mcp.servers import SessionMcpServer

AuthMethod = EnvVarAuthMethod | TerminalAuthMethod | AuthMethodAgent
Choose = Callable[[str, list[str]], Awaitable[int | None]]
"""Lets the user pick one of the labels: its index, or None when dismissed."""

AUTH_REQUIRED = -32000


def is_auth_required(exc: BaseException) -> bool:
    return isinstance(exc, RequestError) and exc.code == AUTH_REQUIRED


async def new_session(agent: AgentProcess, cwd: str, choose: Choose, notice: Callable[[str, str], None],
                      mcp_servers: list[SessionMcpServer] | None = None,
                      dirs: list[str] | None = None) -> NewSessionResponse:
    """``session/new`` in ``cwd`` with ``mcp_servers`` (``dirs``: additionalDirectories); when the agent
    wants a login first, log in and try once more. Each request is answered in time or fails
    (``AgentProcess.ask``)."""
    servers = list(mcp_servers or [])
    conn = agent.connection()
    try:
        return await agent.ask("session/new", conn.new_session(cwd=cwd, mcp_servers=servers,
                                                               additional_directories=dirs))
    except RequestError as exc:
        if not is_auth_required(exc):
            raise
    notice("the agent asks you to log in", "info")
    methods = list(agent.info.auth_methods or []) if agent.info is not None else []
    await authenticate(agent, methods, choose)
    return await agent.ask("session/new", conn.new_session(cwd=cwd, mcp_servers=servers,
                                                           additional_directories=dirs))


async def authenticate(agent: AgentProcess, methods: list[AuthMethod], choose: Choose) -> None:
    """Let the user pick one of the agent's methods, then ``authenticate`` with it."""
    name = agent.name
    if not methods:
        raise AgentStartError(f"agent {name!r} requires authentication but offers no method; "
                              "log in with the agent's own CLI, or set its API key in the agent's env")
    labels = [_label(m) for m in methods]
    index = await choose(f"{name} needs you to log in: choose a method", labels)
    if index is None:
        raise AgentStartError(f"authentication of agent {name!r} was cancelled")
    method = methods[index]
    if isinstance(method, (TerminalAuthMethod, EnvVarAuthMethod)):  # the user's part comes first
        how = "in a terminal" if isinstance(method, TerminalAuthMethod) else "with a secret you type"
        raise AgentStartError(f"{_label(method)} logs in {how}: run :Ai login {name}")
    try:
        await agent.ask("authenticate", agent.connection().authenticate(method_id=method.id),
                        limit=agent.hooks.timeouts.login)
    except RequestError as exc:
        raise AgentStartError(f"authentication of agent {name!r} with {_label(method)} failed: {exc}") from None


def _label(method: AuthMethod) -> str:
    name = method.name or method.id or "?"
    return f"{name} ({method.description})" if method.description else name
