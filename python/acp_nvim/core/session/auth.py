"""Authentication when the agent asks for it: ``session/new`` fails with ``auth_required``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from acp import RequestError

from ..errors import AgentStartError

Choose = Callable[[str, list[str]], Awaitable[int | None]]
"""Lets the user pick one of the labels: its index, or None when dismissed."""

AUTH_REQUIRED = -32000


def is_auth_required(exc: BaseException) -> bool:
    return isinstance(exc, RequestError) and exc.code == AUTH_REQUIRED


async def authenticate(agent: str, conn: Any, methods: list[Any], choose: Choose) -> None:
    """Let the user pick one of the agent's methods, then ``authenticate`` with it."""
    if not methods:
        raise AgentStartError(f"agent {agent!r} requires authentication but offers no method; "
                              "log in with the agent's own CLI, or set its API key in the agent's env")
    labels = [_label(m) for m in methods]
    index = await choose(f"{agent} needs you to log in: choose a method", labels)
    if index is None:
        raise AgentStartError(f"authentication of agent {agent!r} was cancelled")
    method = methods[index]
    try:
        await conn.authenticate(method_id=method.id)
    except RequestError as exc:
        raise AgentStartError(f"authentication of agent {agent!r} with {_label(method)} failed: {exc}") from None


def _label(method: Any) -> str:
    name = str(getattr(method, "name", None) or getattr(method, "id", "?"))
    description = getattr(method, "description", None)
    return f"{name} ({description})" if description else name
