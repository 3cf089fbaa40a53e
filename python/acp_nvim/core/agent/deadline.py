"""A request to the agent that must be answered in time, raced against the agent's exit.

The user hears of a slow answer early (``notice`` seconds) and the request fails at ``limit``;
an agent that exits meanwhile fails it at once, with its exit code rather than "connection closed".
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")
EXIT_CODE_WAIT = 2.0
"""Seconds to wait for the exit code once the agent's stdout closed under a request."""


class TimedOut(Exception):
    """No answer within the limit."""


class Exited(Exception):
    """The agent exited with ``code`` before it answered."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


async def answer_within(request: Awaitable[T], *, limit: float, notice: float, exited: asyncio.Future[int],
                        on_notice: Callable[[float], None]) -> T:
    """``request``'s result; ``on_notice(seconds)`` once it has waited ``notice`` seconds.

    Raises ``TimedOut`` after ``limit`` seconds, ``Exited`` when the agent exits first, or what the
    request raised. An unanswered request is cancelled (its late answer is ignored).
    """
    # awaited right here, raced against the exit: not a background task, so no tasks.spawn
    task = asyncio.ensure_future(request)
    try:
        first = min(notice, limit)
        if not await _settled(task, exited, first) and first < limit:
            on_notice(first)
            await _settled(task, exited, limit - first)
        return await _outcome(task, exited)
    finally:
        if not task.done():
            task.cancel()


async def _settled(task: asyncio.Future[T], exited: asyncio.Future[int], timeout: float) -> bool:
    both: set[asyncio.Future[T] | asyncio.Future[int]] = {task, exited}
    done, _ = await asyncio.wait(both, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    return bool(done)


async def _outcome(task: asyncio.Future[T], exited: asyncio.Future[int]) -> T:
    if task.done():
        if isinstance(task.exception(), ConnectionError):
            # stdout closed: the process is exiting; its exit code says more than "connection closed"
            await asyncio.wait({exited}, timeout=EXIT_CODE_WAIT)
            if exited.done():
                raise Exited(exited.result())
        return task.result()
    if exited.done():
        raise Exited(exited.result())
    raise TimedOut()
