"""Steering (``_session/steering``) and a usage limit, for clients to test offline.

``ACP_DEMO_CAPABILITIES=steering`` advertises steering in ``initialize``'s ``_meta``;
``ACP_DEMO_STEER`` picks the answer: ``inject`` (the default: the text goes into the running
turn, which says so in a chunk; ``promptRequired`` when no turn runs), ``promptRequired``,
``failed``, or ``error`` (a JSON-RPC error). The ``limit`` scenario fails its first prompt of a
session with claude-agent-acp's rate-limit error shape (retry after ``N`` seconds, default 1)
and succeeds when it is sent again.
"""

from __future__ import annotations

import os
from typing import Any

from acp import RequestError
from acp.helpers import update_agent_message_text
from acp.interfaces import Client
from acp.schema import StopReason

from .session import SessionState
from .turn import Turn, count_arg

STEER_ENV = "ACP_DEMO_STEER"
_limited: set[str] = set()


def meta(capabilities: set[str]) -> dict[str, Any] | None:
    """``initialize``'s ``_meta`` when steering is among the demo's extra capabilities."""
    return {"steering": {"supported": True}} if "steering" in capabilities else None


async def steer(client: Client, sessions: dict[str, SessionState], params: dict[str, Any]) -> dict[str, Any]:
    """Answer one steering request as ``ACP_DEMO_STEER`` says."""
    how = os.environ.get(STEER_ENV, "inject")
    state = sessions.get(str(params.get("sessionId")))
    prompt = params.get("prompt")
    if state is None or not isinstance(prompt, list) or not prompt:
        raise RequestError.invalid_params({"reason": "steering needs a known sessionId and a non-empty prompt"})
    if how == "error":
        raise RequestError.internal_error({"reason": "the demo agent refuses to steer"})
    if how == "failed":
        return {"outcome": "failed", "reason": "the demo agent was told to fail"}
    if how == "promptRequired" or state.task is None or state.task.done():
        return {"outcome": "promptRequired", "reason": "noRunningTurn"}
    text = " ".join(str(b.get("text", "")) for b in prompt if isinstance(b, dict) and b.get("type") == "text")
    await client.session_update(session_id=state.session_id,
                                update=update_agent_message_text(f"\nsteered in: {text}\n"))
    return {"outcome": "injected"}


async def limit(turn: Turn) -> StopReason:
    """Fail the session's first ``limit`` prompt with a rate limit (retry after N s), then succeed."""
    if turn.session_id not in _limited:
        _limited.add(turn.session_id)
        wait = count_arg(turn.args, 1)
        raise RequestError(-32603, f"Internal error: API Error: 429 rate_limit_error · retry in {wait}s",
                           {"errorKind": "rate_limit", "retryAfter": wait})
    await turn.say("limit lifted: the retried prompt went through\n")
    return "end_turn"
