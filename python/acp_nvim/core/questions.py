"""Every question open to the user, by id: permission prompts, reviews, three-way views, pickers.

A question is registered (a ``Ticket``) before anything is prepared or shown, so cancelling
a turn always finds it. The editor shows it under the ticket's id and routes the user's
answer back here by that id; the first answer is taken and later ones are ignored. The one
future of each question lives here: the editor keeps none.

Permission requests of one owner are shown in the order they were registered (the order the
agent sent them), however long each takes to prepare: a request waits to be shown until every
earlier one of its owner was shown, answered without asking, or cancelled.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

PERMISSION = "permission"
REVIEW = "review"
THREE_WAY = "three_way"
CHOICE = "choice"
QUESTION = "question"
"""A question of the agent (``elicitation/create``): a form or a URL to open."""
TURN_VIEWS = frozenset({PERMISSION, REVIEW, QUESTION})
"""The views of a request the agent waits for: cancelling the turn (or ending the session) answers them."""

AGENT_REQUEST: ContextVar[int | str | None] = ContextVar("acp_nvim_agent_request", default=None)
"""The JSON-RPC id of the agent's request being served (the wire transport sets it for the SDK's
task of each request): a ticket opened while serving it remembers it, so ``$/cancel_request``
finds it."""

Show = Callable[["Ticket"], None]


class Withdrawn(Exception):
    """The question was closed without the user's answer: the turn was cancelled, the session
    ended, or the agent withdrew its request. The agent's request it served answers
    "request cancelled" (-32800), never a refusal the user did not make."""


class Ticket:
    """One question: its id, its owner (a session key; '' for the editor's own) and its view."""

    __slots__ = ("_future", "_settled", "_turn", "cancelled", "id", "owner", "request", "view", "withdrawn")

    def __init__(self, qid: int, owner: str, view: str, turn: Turn | None = None) -> None:
        self.id = qid
        self.owner = owner
        self.view = view
        self.cancelled = False
        """Set by ``Questions.cancel``: the question is answered ``cancelled`` and never shown again."""
        self.request = AGENT_REQUEST.get()
        """The agent's request this question serves (None: none, or the editor's own question)."""
        self.withdrawn = False
        """Set by ``Questions.withdraw``: the agent cancelled its request (``$/cancel_request``)."""
        self._future: asyncio.Future[object] | None = None
        self._turn = turn
        """Waits until every question that must be shown before this one was (None: no order)."""
        self._settled = asyncio.Event()
        """Set once this question holds back no later one: shown, cancelled or closed."""

    @property
    def waiting(self) -> bool:
        """Shown to the user and not answered yet."""
        return self._future is not None and not self._future.done()

    @property
    def settled(self) -> bool:
        return self._settled.is_set()

    def answer(self, value: object) -> bool:
        """The user's answer; False (ignored) when the question is not waiting for one."""
        if self._future is None or self._future.done():
            return False
        self._future.set_result(value)
        return True

    async def ask(self, view: str, show: Show) -> object:
        """Show the question as ``view`` and await its one answer (None at once when cancelled).

        A question may be shown again after an answer (a review the editor could not show is
        asked as a plain prompt); each showing is answered exactly once.
        """
        if self._turn is not None and not self.settled:
            await self._turn(self)
        if self.cancelled:
            return None
        self.view = view
        self._future = asyncio.get_running_loop().create_future()
        try:
            show(self)
        except BaseException:
            self._future = None
            raise
        finally:
            self.settle()
        return await self._future

    def settle(self) -> None:
        """Let later questions be shown: this one was shown, cancelled or closed."""
        self._settled.set()

    async def settled_wait(self) -> None:
        await self._settled.wait()


Turn = Callable[[Ticket], Awaitable[None]]


class Questions:
    """The registry of open questions of one editor (all its sessions)."""

    def __init__(self) -> None:
        self._open: dict[int, Ticket] = {}
        self._ids = itertools.count(1)
        self._order: dict[str, list[Ticket]] = {}
        """Each owner's open permission requests, in the order they were registered."""

    def count(self) -> int:
        """How many questions are open (registered and not closed). (Not ``__len__``: an empty
        registry must not be falsy, ``questions or Questions()`` would make a second one.)"""
        return len(self._open)

    @contextmanager
    def open(self, owner: str, view: str) -> Iterator[Ticket]:
        """Register a question for the duration of the ``with`` block."""
        ordered = view in TURN_VIEWS
        ticket = Ticket(next(self._ids), owner, view, self._turn if ordered else None)
        if ordered:
            self._order.setdefault(owner, []).append(ticket)
        self._open[ticket.id] = ticket
        try:
            yield ticket
        finally:
            self._open.pop(ticket.id, None)
            ticket.settle()
            if ordered:
                self._forget_order(ticket)

    async def ask(self, owner: str, view: str, show: Show) -> object:
        """Register, show and await one question (None when dismissed)."""
        with self.open(owner, view) as ticket:
            return await ticket.ask(view, show)

    def get(self, qid: int) -> Ticket | None:
        """The open question with this id (None: unknown, or already closed)."""
        return self._open.get(qid)

    def waiting(self, owner: str) -> list[Ticket]:
        """The owner's permission requests shown to the user and not answered yet."""
        return [t for t in self._open.values() if t.owner == owner and t.view in TURN_VIEWS and t.waiting]

    def of_owner(self, owner: str) -> list[Ticket]:
        """Every open question of ``owner`` but its pickers, shown or still being prepared."""
        return [t for t in self._open.values() if t.owner == owner and t.view != CHOICE]

    def cancel(self, owner: str) -> list[Ticket]:
        """Answer every open request of ``owner`` the agent waits for (permission prompts, reviews,
        questions) with None (``cancelled``).

        Requests still being prepared are marked and never shown. Returns those that were
        shown: their views are to be closed.
        """
        return self._answer_none(owner, TURN_VIEWS)

    def drop(self, owner: str) -> list[Ticket]:
        """Answer every open question of ``owner`` with None, whatever its view (the owner ended).

        Returns those that were shown: their views are to be closed.
        """
        return self._answer_none(owner, None)

    def withdraw(self, owner: str, request: int | str) -> list[Ticket]:
        """Answer with None every open question of ``owner`` that serves the agent's ``request``
        (the agent withdrew it: ``$/cancel_request``). Returns those that were shown."""
        found = [t for t in self._open.values() if t.owner == owner and t.request is not None
                 and t.request == request and type(t.request) is type(request)]
        for ticket in found:
            ticket.withdrawn = True
        return self._answer_none(owner, None, found)

    def _answer_none(self, owner: str, views: frozenset[str] | None,
                     only: list[Ticket] | None = None) -> list[Ticket]:
        shown = []
        for ticket in list(self._open.values()) if only is None else only:
            if ticket.owner != owner or (views is not None and ticket.view not in views):
                continue
            ticket.cancelled = True
            ticket.settle()
            if ticket.answer(None):
                shown.append(ticket)
        return shown

    async def _turn(self, ticket: Ticket) -> None:
        """Wait until every earlier open permission request of the owner was shown (or cancelled)."""
        while not ticket.cancelled:
            earlier = self._first_unsettled_before(ticket)
            if earlier is None:
                return
            await earlier.settled_wait()

    def _first_unsettled_before(self, ticket: Ticket) -> Ticket | None:
        for other in self._order.get(ticket.owner, ()):
            if other is ticket:
                return None
            if not other.settled:
                return other
        return None

    def _forget_order(self, ticket: Ticket) -> None:
        order = self._order.get(ticket.owner, [])
        if ticket in order:
            order.remove(ticket)
        if not order:
            self._order.pop(ticket.owner, None)


def choice_index(answer: object, count: int) -> int | None:
    """A picker's answer (the index as text or a number) as an index into ``count`` items, or None."""
    if isinstance(answer, bool) or not isinstance(answer, (int, str)):
        return None
    try:
        index = int(answer)
    except ValueError:
        return None
    return index if 0 <= index < count else None
