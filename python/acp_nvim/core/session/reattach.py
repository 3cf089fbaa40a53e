"""After a restart: get back to the same conversation if the agent can (resume, then load)."""

from __future__ import annotations

from acp import RequestError
from acp.client.connection import ClientSideConnection
from acp.schema import InitializeResponse, LoadSessionResponse, ResumeSessionResponse

from ..mcp.servers import SessionMcpServer


def can_resume(info: InitializeResponse) -> bool:
    caps = info.agent_capabilities
    sessions = caps.session_capabilities if caps is not None else None
    return sessions is not None and sessions.resume is not None


def can_load(info: InitializeResponse) -> bool:
    caps = info.agent_capabilities
    return bool(caps is not None and caps.load_session)


async def reattach(conn: ClientSideConnection, info: InitializeResponse, session_id: str, cwd: str,
                   mcp_servers: list[SessionMcpServer] | None = None,
                   ) -> tuple[ResumeSessionResponse | LoadSessionResponse, str] | None:
    """Try ``session/resume`` then ``session/load``; the response and how, or None if neither worked."""
    servers = list(mcp_servers or [])
    if can_resume(info):
        try:
            return await conn.resume_session(session_id=session_id, cwd=cwd, mcp_servers=servers), "resumed"
        except (RequestError, ConnectionError):
            pass
    if can_load(info):
        try:
            return await conn.load_session(session_id=session_id, cwd=cwd, mcp_servers=servers), "reloaded"
        except (RequestError, ConnectionError):
            pass
    return None
