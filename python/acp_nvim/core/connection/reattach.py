"""Back on an existing conversation with a fresh process: ``session/resume``, ``session/load``.

Used after a restart (resume first: the chat already shows the conversation) and by
``:Ai resume`` (``reopen.py``: load first when nothing is kept locally, so the chat shows
the agent's replay).
"""

from __future__ import annotations

from collections.abc import Callable

from acp import RequestError
from acp.schema import LoadSessionResponse, ResumeSessionResponse

from ..agent.process import AgentProcess
from ..mcp.servers import SessionMcpServer
from .capabilities import offers

RESUMED = "resumed"
RELOADED = "reloaded"


def _ignore(_: bool) -> None:
    return None


async def reattach(agent: AgentProcess, session_id: str, cwd: str,
                   mcp_servers: list[SessionMcpServer] | None = None, *, dirs: list[str] | None = None,
                   load_first: bool = False, loading: Callable[[bool], None] = _ignore,
                   refused: list[str] | None = None,
                   ) -> tuple[ResumeSessionResponse | LoadSessionResponse, str] | None:
    """Try ``session/resume`` then ``session/load`` (``load_first``: the other way round), with
    ``mcp_servers`` and ``dirs`` (additionalDirectories, None: not sent): the response and how
    (``RESUMED``, ``RELOADED``), or None when the agent can do neither or refused both (each
    refusal is added to ``refused``). ``loading`` is told True just before a ``session/load``
    and False when it is refused. A request that times out, or an agent that exits, fails the
    reattach (``AgentProcess.ask``)."""
    order = ("load", "resume") if load_first else ("resume", "load")
    for how in order:
        try:
            if how == "resume" and offers(agent.info, "resume"):
                return await _resume(agent, session_id, cwd, mcp_servers, dirs), RESUMED
            if how == "load" and offers(agent.info, "load"):
                loading(True)
                return await _load(agent, session_id, cwd, mcp_servers, dirs), RELOADED
        except RequestError as exc:
            if how == "load":
                loading(False)
            agent.log.add("warn", "lifecycle", f"session/{how} refused: {exc}")
            if refused is not None:
                refused.append(f"session/{how}: {exc}")
    return None


async def _resume(agent: AgentProcess, session_id: str, cwd: str, mcp_servers: list[SessionMcpServer] | None,
                  dirs: list[str] | None) -> ResumeSessionResponse:
    conn = agent.connection()
    return await agent.ask("session/resume", conn.resume_session(
        session_id=session_id, cwd=cwd, mcp_servers=list(mcp_servers or []), additional_directories=dirs))


async def _load(agent: AgentProcess, session_id: str, cwd: str, mcp_servers: list[SessionMcpServer] | None,
                dirs: list[str] | None) -> LoadSessionResponse:
    conn = agent.connection()
    return await agent.ask("session/load", conn.load_session(
        session_id=session_id, cwd=cwd, mcp_servers=list(mcp_servers or []), additional_directories=dirs))
