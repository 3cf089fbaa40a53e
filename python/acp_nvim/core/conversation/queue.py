"""The prompt queue of a session: prompts wait here and go to the agent one turn at a time.

Nothing queued is lost: a prompt the agent never got goes back to the front of the queue (and
the conversation it carried with it stays to be carried), to be sent when the agent runs again.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Protocol

from acp.helpers import ContentBlock

from .. import tasks
from ..config import TimeoutSettings
from ..log.ring import LogRing
from ..prompting import attachments
from ..transcript.conversation import Conversation
from ..transcript.tool_calls import ToolCallState
from .prompt import Link, Prompt, Turn, TurnRunner
from .watch import TurnWatch, WatchHooks


class QueueOwner(Protocol):
    """What the queue needs of its session."""

    def can_send(self) -> bool:
        """The agent runs and the ACP session is open."""

    def link(self) -> Link:
        """Where the next turn goes."""

    def turn_started(self) -> None: ...

    def turn_over(self, turn: Turn) -> None:
        """A turn ended (a recovery that belonged to it is over)."""

    async def settled(self) -> None:
        """Wait until nothing sent into the running turn is still on its way (steering)."""

    def drained(self) -> None:
        """The queue stopped sending (empty, or the agent cannot take a prompt)."""

    def changed(self) -> None: ...

    def report(self, message: str) -> None: ...


class PromptQueue:
    """The waiting prompts, the running turn, its cancel, and what a new session carries."""

    def __init__(self, key: str, owner: QueueOwner, turns: TurnRunner, transcript: Conversation, log: LogRing,
                 timeouts: TimeoutSettings, watch: WatchHooks) -> None:
        self._key = key
        self._owner = owner
        self._turns = turns
        self._transcript = transcript
        self._log = log
        self._timeouts = timeouts
        self._watch = watch
        self.prompts: deque[Prompt] = deque()
        self.turn: Turn | None = None
        self.cancelling = False
        self.carry: str | None = None
        """The conversation so far, sent with the next prompt (a reopen had to start a new session)."""
        self.stopped_turn = False
        """The last turn ended because the connection closed: the exit that follows was during it."""
        self._runner: asyncio.Task[None] | None = None
        self._before_next: list[Callable[[], None]] = []

    def __iter__(self) -> Iterator[Prompt]:
        return iter(self.prompts)

    def __len__(self) -> int:
        return len(self.prompts)

    def add(self, prompt: Prompt) -> None:
        """Queue ``prompt``; what waited for the next prompt runs first (a reopened session's replay ends)."""
        actions, self._before_next = self._before_next, []
        for action in actions:
            action()
        self.prompts.append(prompt)

    def before_next(self, action: Callable[[], None]) -> None:
        """Run ``action`` once, when the next prompt is queued."""
        self._before_next.append(action)

    def edit(self, prompts: list[Prompt]) -> None:
        """Replace the waiting prompts (the user edited, reordered or dropped them)."""
        self.prompts.clear()
        self.prompts.extend(prompts)
        self._owner.changed()

    async def content(self, prompt: Prompt, accepts: attachments.Accepts) -> list[ContentBlock]:
        """``prompt``'s blocks as a turn would send them (a steering request sends the same)."""
        return await self._turns.content(prompt, accepts)

    def take_all(self) -> list[Prompt]:
        taken = list(self.prompts)
        self.prompts.clear()
        return taken

    @property
    def busy(self) -> bool:
        """A turn runs, or the queue is about to send one."""
        return self._runner is not None and not self._runner.done()

    def run_soon(self) -> None:
        self._runner = tasks.spawn(self._run(), self._owner.report, f"{self._key} turn")

    async def _run(self) -> None:
        while self.prompts and self._owner.can_send():
            await self._owner.settled()  # a prompt being steered is never also sent
            if not self.prompts or not self._owner.can_send():
                break
            turn = Turn(self.prompts.popleft(), carry=self.carry)
            self.carry = None
            await self._run_turn(turn)
            if not turn.sent:
                break
        self._owner.drained()

    async def _run_turn(self, turn: Turn) -> None:
        self.turn = turn
        self._owner.turn_started()
        watch = tasks.spawn(TurnWatch(turn, self._timeouts, self._watch).run(), self._owner.report,
                            f"{self._key} watchdog")
        link = self._owner.link()
        try:
            await self._turns.run(link, turn)
        finally:
            watch.cancel()
            self._turn_over(turn)

    def _turn_over(self, turn: Turn) -> None:
        self.turn = None
        self.stopped_turn = turn.agent_stopped
        self.cancelling = False
        self._owner.turn_over(turn)
        if turn.dropped:
            self._log.add("info", "lifecycle", f"dropped {turn.dropped} update(s) that came after the cancel")
        if not turn.sent:
            self.prompts.appendleft(turn.prompt)
            self.carry = self.carry or turn.carry
            self._transcript.notice(f"{not_sent(turn.prompt, 'the agent did not get it')}: kept in the queue, it is "
                                    "sent when the agent runs again", "error")
            self._owner.changed()

    async def stop(self, reason: str) -> None:
        """End the running turn here (a restart, a close): the agent's answer no longer matters."""
        runner, self._runner = self._runner, None
        if runner is None or runner.done():
            return
        if self.turn is not None:
            self.turn.interrupted = "cancelled (the agent ignored the cancel)" if self.turn.cancel_ignored else reason
        runner.cancel()
        await asyncio.wait({runner})

    def cancel(self) -> Turn | None:
        """Mark the running turn cancelled (its late output is dropped from now on): the turn, or None."""
        turn = self.turn
        if turn is None:
            return None
        if turn.cancelled_at is None:
            turn.cancelled_at = time.monotonic()
        self.cancelling = True
        return turn

    def note_tool_call(self, state: ToolCallState) -> None:
        """A tool call of the running turn (the cancel marks the open ones cancelled)."""
        if self.turn is not None:
            self.turn.tools[state.tool_call_id] = state


PREVIEW = 80


def not_sent(prompt: Prompt, why: str) -> str:
    return f"not sent yet ({why}): {preview(prompt.text)}"


def preview(text: str) -> str:
    """The first line of ``text``, cut at ``PREVIEW`` characters."""
    line = text.split("\n", 1)[0]
    return line if len(line) <= PREVIEW and "\n" not in text else line[:PREVIEW] + " …"
