"""Steering: a prompt sent while a turn runs goes into that turn (``_session/steering``).

The agent must advertise it (``initialize`` ``_meta.steering.supported``); the user may turn it
off (``chat.steer = false``) or switch the next prompt's way with the chat's key. The prompt
stays in the queue, marked "steering", until the agent's outcome: ``injected`` or
``startedNewTurn`` take it out (the chat shows it as steered); ``promptRequired``, ``failed``,
an error or no answer leave it in the queue, which sends it after the turn, and the chat says
so. The queue runner waits for outstanding steering requests before it takes the next prompt
(``settled``), so a prompt is never both steered and sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableSequence
from dataclasses import dataclass

from acp import RequestError
from acp.client.connection import ClientSideConnection
from acp.helpers import ContentBlock

from .. import tasks
from ..log.ring import LogRing
from ..transcript.conversation import Conversation
from . import schema_ext
from .prompt import Prompt

STEER_TIMEOUT = 30.0
"""An agent that has not answered a steering request by then keeps the prompt in the queue."""
STEER, QUEUE = "steer", "queue"
STEERING = "steering"
"""The mark of a queued prompt whose steering request is out."""


@dataclass(frozen=True)
class Route:
    """Where a prompt can be steered now: the running turn's connection and session, and how the
    prompt's content is made (text, blocks, attached context, as a turn would send them)."""

    conn: ClientSideConnection
    session_id: str
    content: Callable[[Prompt], Awaitable[list[ContentBlock]]]
    supported: bool


class Steering:
    """One session's steering: the user's choice, the requests out, the marks the queue shows."""

    def __init__(self, enabled: bool, queue: MutableSequence[Prompt], transcript: Conversation, log: LogRing,
                 changed: Callable[[], None], report: Callable[[str], None]) -> None:
        self.enabled = enabled
        """``chat.steer``: steer by default where the agent offers it."""
        self.flipped = False
        """The chat's key switched the next prompt to the other way."""
        self._queue = queue
        self._transcript = transcript
        self._log = log
        self._changed = changed
        self._report = report
        self._out: dict[int, asyncio.Task[None]] = {}
        self._marks: dict[int, str] = {}

    # -- the user's choice ----------------------------------------------------------------

    def next_way(self) -> str:
        """How the next prompt sent during a turn goes: ``steer`` or ``queue``."""
        return STEER if self.enabled != self.flipped else QUEUE

    def toggle(self) -> str:
        """Switch the next prompt's way; returns the new one."""
        self.flipped = not self.flipped
        self._changed()
        return self.next_way()

    # -- a prompt during a turn -------------------------------------------------------------

    def steer(self, prompt: Prompt, route: Route | None) -> bool:
        """Steer ``prompt`` (already in the queue) into the running turn, when the user wants it
        and ``route`` allows it (None: no turn to steer into, or a question of it is open)."""
        way, self.flipped = self.next_way(), False
        if route is None or not route.supported or way != STEER:
            if way == STEER and route is not None and not route.supported:
                self._log.add("debug", "steering", "the agent does not offer steering: queued")
            return False
        self._marks[id(prompt)] = STEERING
        self._out[id(prompt)] = tasks.spawn(self._run(prompt, route), self._report, "steering")
        return True

    def mark(self, prompt: Prompt) -> str:
        """What the queue shows beside ``prompt``: ``steering``, ``not steered: <why>``, or ''."""
        return self._marks.get(id(prompt), "")

    async def settled(self) -> None:
        """Wait until every steering request has its outcome (the queue runner, before a prompt)."""
        while self._out:
            await asyncio.wait(set(self._out.values()))

    async def _run(self, prompt: Prompt, route: Route) -> None:
        try:
            outcome = await self._ask(prompt, route)
        finally:
            self._out.pop(id(prompt), None)
        if outcome.delivered:
            self._take(prompt)
            self._marks.pop(id(prompt), None)
            labels = [a.label for a in prompt.attachments]
            how = ("steered into the running turn" if outcome.outcome == "injected"
                   else "steered: the agent started a turn")
            self._transcript.user_message(prompt.text, labels, mark=f" · {how}")
        else:
            why = outcome.reason or outcome.outcome
            self._marks[id(prompt)] = f"not steered: {why}"
            self._transcript.notice(f"not steered ({why}): kept in the queue, it is sent when this turn ends",
                                    "info")
        self._changed()

    async def _ask(self, prompt: Prompt, route: Route) -> schema_ext.SteerOutcome:
        try:
            blocks = [block.model_dump(mode="json", by_alias=True, exclude_none=True)
                      for block in await route.content(prompt)]
            params = schema_ext.steer_params(route.session_id, blocks)
            self._log.add("info", "steering", f"steering a prompt into the running turn: {len(blocks)} block(s)")
            result = await asyncio.wait_for(route.conn.ext_method(schema_ext.STEER_METHOD, params), STEER_TIMEOUT)
        except TimeoutError:
            return schema_ext.SteerOutcome("failed", f"no answer in {STEER_TIMEOUT:g} s")
        except RequestError as exc:
            return schema_ext.SteerOutcome("failed", f"the agent refused it: {exc}")
        except (ConnectionError, OSError) as exc:
            return schema_ext.SteerOutcome("failed", f"the connection failed: {exc}")
        outcome = schema_ext.steer_outcome(result)
        self._log.add("info", "steering", f"steering outcome: {outcome.outcome} {outcome.reason}".rstrip())
        return outcome

    def _take(self, prompt: Prompt) -> bool:
        """Take ``prompt`` (this very object) out of the queue; False: the user dropped it meanwhile."""
        for index, queued in enumerate(self._queue):
            if queued is prompt:
                del self._queue[index]
                return True
        return False
