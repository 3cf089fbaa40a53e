"""Remote agents (issue 15): after a dropped connection, reconnect and resume the session.

Tries again with a bounded backoff; each try is a restart of the link (a fresh connection,
then ``session/resume`` where offered, else ``session/load``, else a new session, as
``reattach`` does). After the last try the session fails and ``:Ai restart`` tries again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from ..agent.process import AgentProcess
from ..log.ring import LogRing
from ..transcript.transcript import Transcript
from .link import AgentLink, Attached

BACKOFF = (0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0)
"""Seconds before each try: about a minute in all."""


def wanted(process: AgentProcess) -> bool:
    """Whether a lost agent is reconnected (a remote one) rather than reported dead."""
    return bool(getattr(process, "remote", False))


class Reconnector:
    """Runs the tries for one session."""

    def __init__(self, link: AgentLink, transcript: Transcript, log: LogRing, *,
                 attached: Callable[[Attached], Awaitable[None]], set_state: Callable[[str], None],
                 closed: Callable[[], bool], backoff: Sequence[float] = BACKOFF) -> None:
        self._link = link
        self._transcript = transcript
        self._log = log
        self._attached = attached
        self._set_state = set_state
        self._closed = closed
        self.backoff = backoff

    async def run(self, code: int) -> bool:
        """Reconnect; True once the session is back, False after the last try (or a close)."""
        self._transcript.notice(f"connection to the agent lost (code {code}): reconnecting… "
                                "(a running turn was cut short: send it again)", "error")
        self._set_state("starting")
        for attempt, delay in enumerate(self.backoff, 1):
            await asyncio.sleep(delay)
            if self._closed():
                return False
            if await self._try(attempt):
                return True
        self._transcript.notice(f"could not reconnect after {len(self.backoff)} tries: :Ai restart tries again",
                                "error")
        return False

    async def _try(self, attempt: int) -> bool:
        try:
            await self._link.replace_process()
            response, how = await self._link.reopen()
        except Exception as exc:
            self._log.add("warn", "lifecycle", f"reconnect try {attempt} failed: {exc}")
            return False
        if self._closed():
            await self._link.process.close()
            return False
        self._transcript.notice(f"reconnected ({how})", "info")
        await self._attached(response)
        return True
