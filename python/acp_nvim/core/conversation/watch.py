"""The watchdog of a running turn: it tells a silent or stubborn agent from a busy one.

While a turn runs, the watchdog checks twice a second:
- **silence**: nothing from the agent for ``timeouts.notice`` seconds while no tool call of the
  turn is in progress and no question waits for the user (a long tool run is not a hang);
  the owner hears of it once, and again when the agent speaks up;
- **an ignored cancel**: the turn was cancelled and the agent has not ended it within
  ``timeouts.cancel`` seconds.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..config import TimeoutSettings
from .prompt import Turn

TICK = 0.5


@dataclass(frozen=True)
class WatchHooks:
    """What the watchdog reads and whom it tells."""

    last_heard: Callable[[], float]
    """When the agent last sent a message."""
    quiet: Callable[[], bool]
    """True while silence is expected of the agent (a question waits for the user)."""
    silent: Callable[[float], None]
    """The agent has been silent this many seconds."""
    speaks: Callable[[], None]
    """The agent sent something again after ``silent``."""
    ignores_cancel: Callable[[float], None]
    """The cancelled turn has not ended this many seconds after the cancel."""


class TurnWatch:
    """The watchdog of one turn; ``stop`` it when the turn ends."""

    def __init__(self, turn: Turn, timeouts: TimeoutSettings, hooks: WatchHooks) -> None:
        self._turn = turn
        self._timeouts = timeouts
        self._hooks = hooks
        self._silent_since: float | None = None
        self._waited_since = turn.started

    async def run(self) -> None:
        while True:
            await asyncio.sleep(TICK)
            self.check(time.monotonic())

    def check(self, now: float) -> None:
        """One look at the turn (``now``: the monotonic clock)."""
        turn = self._turn
        if turn.cancelled_at is not None:
            if not turn.cancel_ignored and now - turn.cancelled_at >= self._timeouts.cancel:
                turn.cancel_ignored = True
                self._hooks.ignores_cancel(now - turn.cancelled_at)
            return
        self._silence(now)

    def _silence(self, now: float) -> None:
        heard = self._hooks.last_heard()
        if self._hooks.quiet():
            self._waited_since = now  # the agent waits for the user: its silence starts after the answer
        if self._silent_since is not None:
            if heard > self._silent_since:
                self._silent_since = None
                self._hooks.speaks()
            return
        since = max(heard, self._turn.started, self._waited_since)
        if now - since >= self._timeouts.notice and not self._turn.tool_running() and not self._hooks.quiet():
            self._silent_since = now
            self._hooks.silent(now - since)
