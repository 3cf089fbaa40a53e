"""After a restart: get back to the same conversation if the agent can (resume, then load)."""

from __future__ import annotations

from acp import RequestError
from acp.schema import InitializeResponse, LoadSessionResponse, ResumeSessionResponse

from ..agent.process import AgentProcess
from ..mcp.servers import SessionMcpServer

RESUMED = "resumed"
RELOADED = "reloaded"


def can_resume(info: InitializeResponse | None) -> bool:
    caps = info.agent_capabilities if info is not None else None
    sessions = caps.session_capabilities if caps is not None else None
    return sessions is not None and sessions.resume is not None


def can_load(info: InitializeResponse | None) -> bool:
    caps = info.agent_capabilities if info is not None else None
    return bool(caps is not None and caps.load_session)


async def reattach(agent: AgentProcess, session_id: str, cwd: str,
                   mcp_servers: list[SessionMcpServer] | None = None,
                   ) -> tuple[ResumeSessionResponse | LoadSessionResponse, str] | None:
    """Try ``session/resume`` then ``session/load`` (with ``mcp_servers``): the response and how
    (``RESUMED``, ``RELOADED``), or None when the agent can do neither or refused both. A request
    that times out, or an agent that exits, fails the reattach (``AgentProcess.ask``)."""
    servers = list(mcp_servers or [])
    conn = agent.connection()
    if can_resume(agent.info):
        try:
            return await agent.ask("session/resume", conn.resume_session(session_id=session_id, cwd=cwd,
                                                                         mcp_servers=servers)), RESUMED
        except RequestError as exc:
            agent.log.add("warn", "lifecycle", f"session/resume refused: {exc}")
    if can_load(agent.info):
        try:
            return await agent.ask("session/load", conn.load_session(session_id=session_id, cwd=cwd,
                                                                     mcp_servers=servers)), RELOADED
        except RequestError as exc:
            agent.log.add("warn", "lifecycle", f"session/load refused: {exc}")
    return None
