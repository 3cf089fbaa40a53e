"""After a restart: get back to the same conversation if the agent can (resume, then load)."""

from __future__ import annotations

from typing import Any

from acp import RequestError


def can_resume(info: Any) -> bool:
    caps = getattr(info, "agent_capabilities", None)
    sessions = getattr(caps, "session_capabilities", None)
    return getattr(sessions, "resume", None) is not None


def can_load(info: Any) -> bool:
    return bool(getattr(getattr(info, "agent_capabilities", None), "load_session", False))


async def reattach(conn: Any, info: Any, session_id: str, cwd: str) -> tuple[Any, str] | None:
    """Try ``session/resume`` then ``session/load``; the response and how, or None if neither worked."""
    attempts = []
    if can_resume(info):
        attempts.append(("resumed", conn.resume_session))
    if can_load(info):
        attempts.append(("reloaded", conn.load_session))
    for how, method in attempts:
        try:
            return await method(session_id=session_id, cwd=cwd, mcp_servers=[]), how
        except (RequestError, ConnectionError):
            continue
    return None
