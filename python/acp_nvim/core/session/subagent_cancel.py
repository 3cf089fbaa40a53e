"""``:Ai cancel`` on a subagent's block in the chat: only that subagent is cancelled, where the protocol allows.

A child session the agent granted the ``cancel`` capability (``subagent_update.capabilities.cancel``,
claude-agent-acp grants it) is cancelled with ``session/cancel`` on the child's own session id: its
work stops, the parent's turn goes on. A subagent the agent runs inside the turn (claude's tool calls
that only name their parent, ``_meta.claudeCode.parentToolUseId``) has no session of its own, and a child
without the capability may not be cancelled alone: then nothing is cancelled, and one line says why.
"""

from __future__ import annotations

import asyncio

from ..errors import AcpNvimError
from ..transcript.tool_calls import OPEN_STATUSES
from .session import Session


async def cancel_subagent(session: Session, block_id: int) -> str | None:
    """Cancel the running subagent drawn in block ``block_id``; what to tell the user. None: the block
    shows no running subagent (``:Ai cancel`` cancels the turn as usual)."""
    state = session.transcript.tools.tool_call_of(block_id)
    if state is None or not state.subagent or state.status not in OPEN_STATUSES:
        return None
    child = session.stream.children.of_call(state.tool_call_id)
    if child is None:
        return (f"{session.key}: the subagent of “{state.title}” runs inside the agent's turn, with no session of "
                "its own: it cannot be cancelled alone; nothing was cancelled (:Ai cancel outside its block "
                "cancels the whole turn)")
    if not child.can_cancel:
        return (f"{session.key}: the agent does not let subagent “{child.label}” be cancelled alone; nothing was "
                "cancelled (:Ai cancel outside its block cancels the whole turn)")
    child.cancels += 1
    try:
        await asyncio.wait_for(session.link.connection.cancel(session_id=child.session_id), session.timeouts.cancel)
    except (TimeoutError, ConnectionError, AcpNvimError) as exc:
        session.log.add("warn", "lifecycle", f"session/cancel of subagent {child.session_id!r:.80} not delivered: "
                        f"{type(exc).__name__}: {exc}")
        return f"{session.key}: the cancel of subagent “{child.label}” did not reach the agent (see :Ai log)"
    return f"{session.key}: cancelling subagent “{child.label}” only; the turn goes on"
