"""The Neovim implementation of the core's EditorPort."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from ..core.permissions.review import Review, ReviewVerdict
from ..core.port import BufferState, BufferWrite, PermissionQuestion, ThreeWay
from .bridge import Bridge
from .buffer_cache import BufferCache
from .render_queue import RenderQueue
from .review_spec import review_table


class NvimEditor:
    """Buffers, prompts and chat rendering in Neovim, driven from the event loop."""

    def __init__(self, bridge: Bridge) -> None:
        self.bridge = bridge
        self.states: dict[str, dict[str, Any]] = {}
        self.queue = RenderQueue(bridge.lua_async, self._state_of)
        self._questions: dict[int, tuple[PermissionQuestion | None, asyncio.Future[str | None]]] = {}
        self._ids = itertools.count(1)
        self.buffer_cache = BufferCache()
        self._reviews: set[int] = set()
        self._state_dir: str | None = None
        self.describe: Any = lambda key: {}

    # -- files ---------------------------------------------------------------------

    async def buffer_text(self, path: str) -> str | None:
        return await self.bridge.lua("return require('acp_nvim.buffers').text(...)", path)

    async def read_buffer(self, path: str) -> BufferState | None:
        for _ in range(2):  # a delta that does not fit the copy: once more, with every line
            raw = await self.bridge.lua("return require('acp_nvim.buffers').read_delta(...)",
                                        path, *self.buffer_cache.since(path))
            state = self.buffer_cache.apply(path, raw)
            if state is not None or raw is None:
                return state
        return None

    async def apply_to_buffer(self, path: str, content: str, expected_tick: int | None,
                              with_before: bool = False) -> BufferWrite:
        self.queue.flush()
        raw = await self.bridge.lua("return require('acp_nvim.buffers').apply(...)",
                                    path, content, expected_tick, with_before)
        return BufferWrite(raw["status"], int(raw.get("tick") or 0), raw.get("text") or "")

    async def reload_buffer(self, path: str, content: str) -> str:
        return str(await self.bridge.lua("return require('acp_nvim.buffers').reload(...)", path, content))

    async def sync_buffer(self, path: str) -> None:
        await self.bridge.lua("require('acp_nvim.buffers').sync_path(...)", path)

    async def loaded_files(self) -> list[tuple[str, bool, int]]:
        raw = await self.bridge.lua("return require('acp_nvim.buffers').loaded()")
        return [(str(p), bool(m), int(t)) for p, m, t in raw or []]

    async def three_way(self, request: ThreeWay) -> str:
        qid = next(self._ids)
        future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._questions[qid] = (None, future)
        self.queue.flush()
        spec = {"path": request.path, "base": request.base, "agent": request.agent,
                "purpose": request.purpose, "title": request.title}
        self.bridge.lua_async("require('acp_nvim.threeway').open(...)", qid, spec)
        try:
            return (await future) or "mine"
        finally:
            self._questions.pop(qid, None)

    # -- permissions ---------------------------------------------------------------

    async def ask_permission(self, question: PermissionQuestion) -> str | None:
        qid = next(self._ids)
        future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._questions[qid] = (question, future)
        self.queue.flush()
        self.bridge.lua_async("require('acp_nvim.permission').ask(...)", qid, _question_table(question))
        try:
            return await future
        finally:
            self._questions.pop(qid, None)

    async def choose(self, prompt: str, items: list[str]) -> int | None:
        qid = next(self._ids)
        future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._questions[qid] = (None, future)
        self.bridge.lua_async("require('acp_nvim.ui').select(...)", qid, prompt, items)
        try:
            answer = await future
        finally:
            self._questions.pop(qid, None)
        return None if answer is None else int(answer)

    def answer(self, qid: int, option_id: str | None) -> None:
        """The user's answer (from Lua); unknown or already answered ids are ignored."""
        entry = self._questions.get(qid)
        if entry is not None and not entry[1].done():
            entry[1].set_result(option_id or None)

    def dismiss_permission(self, question: PermissionQuestion) -> None:
        for qid, (candidate, _) in list(self._questions.items()):
            if candidate is question:
                view = "review" if qid in self._reviews else "permission"
                self.bridge.lua_async(f"require('acp_nvim.{view}').dismiss(...)", qid)

    # -- review --------------------------------------------------------------------

    async def review(self, question: PermissionQuestion, review: Review) -> ReviewVerdict | None:
        """Open the vimdiff review (or queue it behind the open one) and await the verdict."""
        rid = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._questions[rid] = (question, future)
        self._reviews.add(rid)
        self.queue.flush()
        self.bridge.lua_async("require('acp_nvim.review').open(...)", rid, review_table(review))
        try:
            answer = await future
        finally:
            self._questions.pop(rid, None)
            self._reviews.discard(rid)
        return None if answer is None else ReviewVerdict.from_editor(answer)

    def review_done(self, rid: int, verdict: Any) -> None:
        """The review's verdict (from Lua); a second answer for the same review is ignored."""
        entry = self._questions.get(rid)
        if entry is not None and rid in self._reviews and not entry[1].done():
            entry[1].set_result(verdict if isinstance(verdict, dict) else {"files": []})  # type: ignore[arg-type]

    async def state_dir(self) -> str:
        if self._state_dir is None:
            self._state_dir = str(await self.bridge.lua("return vim.fn.stdpath('state')"))
        return self._state_dir

    # -- rendering -----------------------------------------------------------------

    def render(self, session_key: str, ops: list[list[Any]]) -> None:
        self.queue.push(session_key, ops)

    def session_changed(self, session_key: str) -> None:
        self.queue.changed(session_key)

    def _state_of(self, key: str) -> dict[str, Any]:
        return self.describe(key)

    def notify(self, message: str, level: str = "info") -> None:
        self.queue.flush()  # the chat shows what the message is about before the message appears
        self.bridge.notify(message, level)


def _question_table(question: PermissionQuestion) -> dict[str, Any]:
    return {
        "session": question.session_key,
        "title": question.title,
        "kind": question.kind,
        "detail": question.detail,
        "options": [{"id": c.option_id, "name": c.name, "kind": c.kind} for c in question.choices],
    }
