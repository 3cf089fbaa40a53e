"""A session's failed prompt: kept, classified (``failures.py``) and offered back to the user.

The chat says what failed and which keys act on it (``R`` retry, ``L`` log in, ``N`` new
session, ``W`` retry when a limit resets). The prompt is kept until it is sent again (a retry,
a wait that ends, a new session that takes it) or a later turn of the session ends well.
A limit's reset is the one the error says, else the one of the window the agent reported as
reached (``limits.py``); the wait shows in the chat and ``:Ai cancel`` stops it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Mapping

from .. import tasks
from ..transcript.conversation import Conversation
from . import failures
from .limits import clock
from .prompt import Prompt, Turn


class FailedTurns:
    """The last failed prompt of one session and its way back."""

    def __init__(self, transcript: Conversation, keys: Mapping[str, str], agent: Callable[[], str],
                 resubmit: Callable[[Prompt], object], changed: Callable[[], None],
                 report: Callable[[str], None], clock: Callable[[], float] = time.time,
                 known_reset: Callable[[], float | None] = lambda: None) -> None:
        self._transcript = transcript
        self._keys = keys
        self._agent = agent
        self._resubmit = resubmit
        self._changed = changed
        self._report = report
        self._clock = clock
        self._known_reset = known_reset
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
        failure = self._with_known_reset(failure, now)
        self._cancel_timer()
        self.failure, self.prompt = failure, prompt
        offer = failures.offer(failure, self._keys, now)
        self._transcript.notice(f"prompt failed · {failure.title}: {failure.detail}\n"
                                f"{offer or ':Ai send sends it again'} · the prompt is kept", "error")
        self._changed()
        return failure

    def _with_known_reset(self, failure: failures.Failure, now: float) -> failures.Failure:
        """A limit whose error names no reset: the reset of the window the agent reported reached (one
        already past is waited for as "now": the machine may have been slow to hear of the failure)."""
        if failure.kind != failures.LIMIT or failure.resets_at is not None:
            return failure
        known = self._known_reset()
        if known is None or known - now > failures.MAX_WAIT:
            return failure
        return dataclasses.replace(failure, resets_at=known, actions=(*failure.actions, failures.WAIT))

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
        self._transcript.notice(f"waiting for the limit to lift: the kept prompt is sent again at "
                                f"{clock(failure.resets_at)} (in {delay:.0f} s; "
                                f"{self._keys.get('retry', '<LocalLeader>r')} retries now, :Ai cancel stops "
                                "the wait)", "info")
        self._changed()
        return delay

    def take(self) -> Prompt | None:
        """The kept prompt, handed over (a retry, a new session); the offer ends."""
        prompt = self.prompt
        self._clear()
        return prompt

    def stop_waiting(self) -> bool:
        """``:Ai cancel`` during a wait: it ends, the prompt stays kept (False: no wait runs)."""
        if self._timer is None or self._timer.done():
            return False
        self._cancel_timer()
        self._transcript.notice("the wait for the limit to lift was cancelled; the prompt is kept "
                                f"({self._keys.get('retry', '<LocalLeader>r')} sends it)", "info")
        self._changed()
        return True

    async def _retry_after(self, delay: float) -> None:
        await asyncio.sleep(delay)
        self._timer = None
        self._transcript.notice("the limit lifted: the kept prompt is sent again", "info")
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
