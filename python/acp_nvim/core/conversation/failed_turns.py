"""A session's failed prompt: kept, classified (``failures.py``) and offered back to the user.

The chat says what failed and which keys act on it (``R`` retry, ``L`` log in, ``N`` new
session, ``W`` retry when a limit resets). The prompt is kept until it is sent again (a retry,
a wait that ends, a new session that takes it) or a later turn of the session ends well.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping

from .. import tasks
from ..transcript.transcript import Transcript
from . import failures
from .prompt import Prompt, Turn


class FailedTurns:
    """The last failed prompt of one session and its way back."""

    def __init__(self, transcript: Transcript, keys: Mapping[str, str], agent: Callable[[], str],
                 resubmit: Callable[[Prompt], object], changed: Callable[[], None],
                 report: Callable[[str], None], clock: Callable[[], float] = time.time) -> None:
        self._transcript = transcript
        self._keys = keys
        self._agent = agent
        self._resubmit = resubmit
        self._changed = changed
        self._report = report
        self._clock = clock
        self.failure: failures.Failure | None = None
        self.prompt: Prompt | None = None
        self._timer: asyncio.Task[None] | None = None

    def turn_over(self, turn: Turn) -> None:
        """A turn ended: a failed one is kept and offered; one that ended well clears the offer."""
        if turn.error is not None:
            self.failed(turn.prompt, turn.error)
        elif turn.sent and turn.ended_well and self.failure is not None:
            self._clear()

    def failed(self, prompt: Prompt, report: failures.ErrorReport) -> failures.Failure:
        """Classify the failure of ``prompt``, keep the prompt and show the offer."""
        now = self._clock()
        failure = failures.classify(failures.ErrorReport(
            report.message, report.code, report.data, report.meta, report.connection_lost, self._agent()), now)
        self._cancel_timer()
        self.failure, self.prompt = failure, prompt
        offer = failures.offer(failure, self._keys, now)
        self._transcript.notice(f"prompt failed · {failure.title}: {failure.detail}\n"
                                f"{offer or ':Ai send sends it again'} · the prompt is kept", "error")
        self._changed()
        return failure

    def describe(self) -> dict[str, object] | None:
        """The offer, for the chat's keys and its line above the prompt (None: nothing failed)."""
        if self.failure is None:
            return None
        return {"kind": self.failure.kind, "title": self.failure.title, "actions": list(self.failure.actions),
                "line": failures.offer(self.failure, self._keys, self._clock()),
                "waiting": self._timer is not None and not self._timer.done()}

    def retry(self) -> bool:
        """Send the kept prompt again now (False: nothing is kept)."""
        prompt = self.take()
        if prompt is None:
            return False
        self._resubmit(prompt)
        return True

    def wait(self) -> float | None:
        """Retry when the limit resets; returns the seconds to wait (None: no reset time known)."""
        failure = self.failure
        if failure is None or failure.resets_at is None or self.prompt is None:
            return None
        delay = max(0.0, failure.resets_at - self._clock())
        self._cancel_timer()
        self._timer = tasks.spawn(self._retry_after(delay), self._report, "retry at the limit's reset")
        self._transcript.notice(f"retrying the kept prompt in {delay:.0f} s, when the limit resets "
                                f"({self._keys.get('retry', '<LocalLeader>r')} retries now)", "info")
        self._changed()
        return delay

    def take(self) -> Prompt | None:
        """The kept prompt, handed over (a retry, a new session); the offer ends."""
        prompt = self.prompt
        self._clear()
        return prompt

    async def _retry_after(self, delay: float) -> None:
        await asyncio.sleep(delay)
        self._timer = None
        self.retry()

    def _cancel_timer(self) -> None:
        if self._timer is not None and not self._timer.done():
            self._timer.cancel()
        self._timer = None

    def _clear(self) -> None:
        self._cancel_timer()
        changed = self.failure is not None
        self.failure, self.prompt = None, None
        if changed:
            self._changed()
