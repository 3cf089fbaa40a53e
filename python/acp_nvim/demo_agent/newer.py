"""``logout`` and ``session/delete``: methods of the ACP v1 schema that the SDK 0.12 types but does not
route to an agent (its router answers "method not found"). Offered only when asked for in
``ACP_DEMO_CAPABILITIES`` (``logout``, ``delete``), so that the demo agent otherwise stays an agent
without them, as most are.

The routes are added to the router the SDK's connection built, by hand: the SDK offers no way to add
a method to it (see ``route``).
"""

from __future__ import annotations

from typing import Any

from acp.router import MessageRouter
from acp.schema import (
    AgentAuthCapabilities,
    DeleteSessionRequest,
    LogoutCapabilities,
    LogoutRequest,
    SessionCapabilities,
    SessionDeleteCapabilities,
)
from acp.utils import normalize_result

LOGOUT = "logout"
DELETE = "delete"


def auth_capabilities(extra: set[str]) -> AgentAuthCapabilities | None:
    """``agentCapabilities.auth`` with ``logout`` when asked for."""
    return AgentAuthCapabilities(logout=LogoutCapabilities()) if LOGOUT in extra else None


def with_delete(capabilities: SessionCapabilities | None, extra: set[str]) -> SessionCapabilities | None:
    """``sessionCapabilities`` with ``delete`` added when asked for."""
    if DELETE not in extra:
        return capabilities
    merged = capabilities or SessionCapabilities()
    merged.delete = SessionDeleteCapabilities()
    return merged


def route(connection: Any, agent: Any) -> None:
    """Route ``logout`` and ``session/delete`` of ``connection`` (an ``AgentSideConnection``) to the
    agent's ``logout`` and ``delete_session``. The router sits in the connection's private
    ``_conn._handler``; a connection without one (another SDK version) keeps answering "method not
    found", which is what an agent without these methods does."""
    router = getattr(getattr(connection, "_conn", None), "_handler", None)
    if not isinstance(router, MessageRouter):
        return
    router.route_request(LOGOUT, LogoutRequest, agent, "logout", adapt_result=normalize_result)
    router.route_request("session/delete", DeleteSessionRequest, agent, "delete_session",
                         adapt_result=normalize_result)
