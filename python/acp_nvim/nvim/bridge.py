"""Coroutines ↔ Neovim. The only way core code on the event loop reaches the editor.

Blocking API calls are legal only inside greenlets, so ``call`` runs the function in a
fresh greenlet, a child of the loop's: a blocking call there yields to the loop until Neovim
answers, and the coroutine awaits the result. (``nvim.async_call`` does the same a turn of the
loop later, through the loop's self-pipe, after formatting a stack trace for its error message:
0.15 ms a call, and every flush's barrier is one.)
Fire-and-forget work uses ``async_=True`` notifications, which keep their order.

Text that UTF-8 cannot encode (a lone surrogate from an agent) would make msgpack refuse the
whole call; the wire repairs such text where it enters, and the bridge, as a last line of
defence, sends the call again with the text repaired (it costs nothing until it happens).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import greenlet
import pynvim

from ..core.surrogates import clean

T = TypeVar("T")
PREFIX = "[acp.nvim] "
LEVELS = {"trace": 0, "debug": 1, "info": 2, "warn": 3, "error": 4}
NOTIFY = "require('acp_nvim.kit.notify').notify(...)"
"""Every notice goes through acp_nvim.kit.notify: an ERROR that Neovim's own ``vim.notify`` shows
with the error flag makes the next key typed in Insert mode wait a second (``:help acp_nvim-faults``)."""


class Bridge:
    """Wraps the host's Nvim object for use from coroutines."""

    def __init__(self, nvim: pynvim.Nvim) -> None:
        self.nvim = nvim

    async def call(self, fn: Callable[[pynvim.Nvim], T]) -> T:
        """Run ``fn(nvim)`` in a greenlet (blocking calls allowed there) and await its result."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()

        def run() -> None:
            try:
                result = fn(self.nvim)
            except Exception as exc:  # delivered to the awaiting coroutine
                if not future.done():
                    future.set_exception(exc)
                return
            if not future.done():
                future.set_result(result)

        greenlet.greenlet(run).switch()
        return await future

    async def lua(self, code: str, *args: Any) -> Any:
        """Evaluate a Lua chunk and await its return value."""
        return await self.call(lambda nvim: _encodable(lambda *a: nvim.exec_lua(code, *a), args))

    def lua_async(self, code: str, *args: Any) -> None:
        """Send a Lua chunk without waiting (ordered with every other notification)."""
        _encodable(lambda *a: self.nvim.exec_lua(code, *a, async_=True), args)

    def wait(self, coro: Coroutine[Any, Any, Any], limit: float) -> None:
        """Run ``coro`` on the loop for at most ``limit`` seconds while the calling handler waits (a request
        Neovim waits on: editor exit), the way pynvim's own blocking calls wait: this greenlet gives the
        loop back until the task is done. Outside a handler's greenlet it is only started."""
        task = asyncio.ensure_future(asyncio.wait_for(coro, limit))
        here = greenlet.getcurrent()
        if here.parent is None:
            return
        task.add_done_callback(lambda done: (done.cancelled() or done.exception(), here.switch()))
        here.parent.switch()

    def notify(self, message: str, level: str = "info") -> None:
        """``vim.notify`` with the plugin prefix (errors never freeze the editor), fire-and-forget."""
        self.lua_async(NOTIFY, PREFIX + message, LEVELS.get(level, 2))


def _encodable(send: Callable[..., T], args: tuple[Any, ...]) -> T:
    """``send(*args)``; when msgpack refuses a lone surrogate in them, again with it replaced."""
    try:
        return send(*args)
    except UnicodeEncodeError:
        return send(*clean(args))
