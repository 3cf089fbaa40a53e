"""Remote agents: after a dropped connection, reconnect and resume the session.

Tries again with a bounded backoff; each try is a restart of the link (a fresh connection,
then ``session/resume`` where offered, else ``session/load``, else a new session, as
``reattach`` does). After the last try the session fails and ``:Ai restart`` tries again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from ..agent.process import AgentProcess
from ..log.ring import LogRing
from ..transcript.conversation import Conversation
from .link import AgentLink, Attached

BACKOFF = (0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0)
"""Seconds before each try: about a minute in all."""


def wanted(process: AgentProcess) -> bool:
    """Whether a lost agent is reconnected (a remote one) rather than reported dead."""
    return bool(getattr(process, "remote", False))


class Reconnector:
    """Runs the tries for one session."""

    def __init__(self, link: AgentLink, transcript: Conversation, log: LogRing, *,
                 closed: Callable[[], bool], backoff: Sequence[float] = BACKOFF) -> None:
        self._link = link
        self._transcript = transcript
        self._log = log
        self._closed = closed
        self.backoff = backoff

    async def run(self, code: int) -> tuple[Attached, str] | None:
        """Reconnect: the new/load/resume response and how (``link.reopen``'s), or None after the
        last try (or a close). The session attaches the response (``Session._reconnect``)."""
        self._transcript.notice(f"connection to the agent lost (code {code}): reconnecting… "
                                "(a running turn was cut short: send it again)", "error")
        for attempt, delay in enumerate(self.backoff, 1):
            await asyncio.sleep(delay)
            if self._closed():
                return None
            reopened = await self._try(attempt)
            if reopened is not None:
                return reopened
        self._transcript.notice(f"could not reconnect after {len(self.backoff)} tries: :Ai restart tries again",
                                "error")
        return None

    async def _try(self, attempt: int) -> tuple[Attached, str] | None:
        try:
            await self._link.replace_process()
            response, how = await self._link.reopen()
        except Exception as exc:
            self._log.add("warn", "lifecycle", f"reconnect try {attempt} failed: {exc}")
            return None
        if self._closed():
            await self._link.process.close()
            return None
        self._transcript.notice(f"reconnected ({how})", "info")
        return response, how
