"""Background tasks whose failures are reported, never silent."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import TypeVar

T = TypeVar("T")
ErrorReporter = Callable[[str], None]

_live: set[asyncio.Task[object]] = set()


def spawn(coro: Coroutine[object, None, T], report: ErrorReporter, name: str) -> asyncio.Task[T]:
    """Run ``coro`` as a task; an exception other than cancellation goes to ``report``."""
    task = asyncio.ensure_future(coro)
    task.set_name(name)
    _live.add(task)
    task.add_done_callback(lambda t: _finished(t, report))
    return task


def _finished(task: asyncio.Task[object], report: ErrorReporter) -> None:
    _live.discard(task)
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None:
        report(f"{task.get_name()} failed: {type(exc).__name__}: {exc}")
