"""A usage limit the agent reports before it fails a turn on it, as claude-agent-acp reports one.

``quota N``: the session's first ``quota`` prompt sends a ``usage_update`` whose
``_meta["_claude/rateLimit"]`` says the five-hour window is spent (``rejected``) and resets in ``N``
seconds (default 2; a fraction is fine), then fails with a rate-limit error that names no reset time,
so the client can only know when to resume from the update. The next ``quota`` prompt reports the
window allowed again (10 % used, the quotas draft's ``limits`` field beside it) and says what it got.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from acp import RequestError
from acp.schema import StopReason

from .chat import CONTEXT_WINDOW
from .protocol import send_raw
from .turn import Turn

_limited: set[str] = set()


def _seconds(args: list[str], default: float) -> float:
    try:
        return max(0.0, float(args[0]))
    except (IndexError, ValueError):
        return default


def _usage(used: int, meta: dict[str, Any], limits: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    update: dict[str, Any] = {"sessionUpdate": "usage_update", "used": used, "size": CONTEXT_WINDOW,
                              "_meta": {"_claude/rateLimit": meta}}
    if limits is not None:
        update["limits"] = limits
    return update


async def quota(turn: Turn) -> StopReason:
    """Report a spent window and fail on it once per session; then report it allowed and succeed."""
    used = turn.session.usage.total
    if turn.session_id not in _limited:
        _limited.add(turn.session_id)
        resets = time.time() + _seconds(turn.args, 2.0)
        await send_raw(turn, _usage(used, {"status": "rejected", "resetsAt": resets, "rateLimitType": "five_hour",
                                           "utilization": 1.0}))
        raise RequestError(-32603, "Internal error: API Error: 429 rate_limit_error: usage limit reached",
                           {"errorKind": "rate_limit"})
    resets = time.time() + 5 * 3600
    weekly = datetime.fromtimestamp(time.time() + 3 * 86400, UTC).isoformat().replace("+00:00", "Z")
    await send_raw(turn, _usage(used, {"status": "allowed", "resetsAt": resets, "rateLimitType": "five_hour",
                                       "utilization": 0.1},
                                [{"id": "weekly", "usedPercent": 40, "resetsAt": weekly, "status": "ok"}]))
    await turn.say(f"quota lifted: the prompt was resent in the same session ({turn.session_id})\n")
    return "end_turn"
