"""A hostile ACP agent: it races the workspace tree while it asks the editor for files.

A real agent runs shell commands next to its fs requests, so it can change the tree between the
editor's path check and its open. This one does exactly that, in a tight loop on threads of its
own, while it sends fs requests as fast as the editor answers them.

The prompt is one JSON object:
  {"op": "attack", "ws": ..., "outside": ..., "reads": n, "writes": n, "buffer_writes": n,
   "buffer_file": path or null, "out": result-file}
  {"op": "request", "kind": "read"|"write", "path": ..., "content": ..., "out": result-file}
  {"op": "review", "path": ..., "out": result-file}: a permission request whose diff names ``path``

Flips (each a thread, until the requests are done):
  - ``ws/dir``: a real folder, then a symlink to ``outside`` (and back);
  - ``ws/leaf.txt``: a regular file, then a symlink to ``outside/secret.txt`` (and back);
  - ``buffer_file`` (loaded in Neovim): a regular file, then a symlink to
    ``outside/target.txt`` (and back), swapped atomically (rename over the name).
The outcome is written as JSON to ``out``: counts of requests, answers, errors, flips, and the
contents every successful read returned.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp import RequestError, run_agent, stdio_streams
from acp.helpers import tool_diff_content
from acp.schema import (
    PermissionOption,
    ToolCallUpdate,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: run as a script
from scripted_agent import ScriptedAgent

LIMIT = 64 * 1024 * 1024
CONCURRENCY = 8


def flip_dir(ws: str, outside: str) -> Callable[[], None]:
    """One round: ``ws/dir`` becomes a symlink to ``outside``, then a folder again."""
    path, aside = os.path.join(ws, "dir"), os.path.join(ws, "dir.real")

    def step() -> None:
        with contextlib.suppress(OSError):
            os.rename(path, aside)
        with contextlib.suppress(OSError):
            os.symlink(outside, path)
        with contextlib.suppress(OSError):
            if os.path.islink(path):
                os.unlink(path)
        with contextlib.suppress(OSError):
            os.rename(aside, path)
    return step


def flip_file(path: str, target: str) -> Callable[[], None]:
    """One round: ``path`` becomes a symlink to ``target`` and a regular file again, each swap a
    rename over the name (so the name never goes missing)."""
    aside, link = path + ".aside", path + ".link"

    def step() -> None:
        with contextlib.suppress(OSError):
            os.link(path, aside)
        with contextlib.suppress(OSError):
            os.symlink(target, link)
        with contextlib.suppress(OSError):
            os.rename(link, path)
        with contextlib.suppress(OSError):
            os.rename(aside, path)
    return step


class Flipper:
    """Runs flips in threads until stopped; counts the rounds."""

    def __init__(self, steps: list[Callable[[], None]]) -> None:
        self.rounds = [0] * len(steps)
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(i, s), daemon=True) for i, s in enumerate(steps)]

    def _run(self, index: int, step: Callable[[], None]) -> None:
        while not self._stop.is_set():
            step()
            self.rounds[index] += 1

    def __enter__(self) -> Flipper:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()


class HostileAgent(ScriptedAgent):
    name = "hostile"

    async def _call(self, session_id: str, kind: str, path: str, content: str = "") -> dict[str, Any]:
        try:
            if kind == "read":
                response = await self.client.read_text_file(session_id=session_id, path=path)
                return {"ok": True, "content": response.content}
            await self.client.write_text_file(session_id=session_id, path=path, content=content)
            return {"ok": True}
        except RequestError as exc:
            return {"ok": False, "code": exc.code, "message": str(exc)}

    async def _request(self, session_id: str, request: dict[str, Any]) -> dict[str, Any]:
        return await self._call(session_id, request["kind"], request["path"], request.get("content", ""))

    async def _review(self, session_id: str, request: dict[str, Any]) -> dict[str, Any]:
        tool_call = ToolCallUpdate(tool_call_id=f"review-{os.urandom(3).hex()}", title=f"Edit {request['path']}",
                                   kind="edit", status="pending",
                                   content=[tool_diff_content(request["path"], "new text\n", "old text\n")])
        options = [PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
                   PermissionOption(option_id="no", name="Reject", kind="reject_once")]
        try:
            response = await self.client.request_permission(session_id=session_id, tool_call=tool_call,
                                                            options=options)
        except RequestError as exc:
            return {"ok": False, "code": exc.code, "message": str(exc)}
        return {"ok": True, "outcome": response.outcome.model_dump()}

    async def _attack(self, session_id: str, request: dict[str, Any]) -> dict[str, Any]:
        ws, outside = request["ws"], request["outside"]
        calls = _plan(ws, request)
        steps = [flip_dir(ws, outside), flip_file(os.path.join(ws, "leaf.txt"), os.path.join(outside, "secret.txt"))]
        if request.get("buffer_file"):
            steps.append(flip_file(request["buffer_file"], os.path.join(outside, "target.txt")))
        results: list[dict[str, Any]] = [{}] * len(calls)
        queue = iter(enumerate(calls))

        async def worker() -> None:
            for index, (kind, path, content) in queue:
                results[index] = {"kind": kind, "path": path, **await self._call(session_id, kind, path, content)}

        with Flipper(steps) as flipper:
            await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
        return {"results": results, "flips": flipper.rounds}


def _plan(ws: str, request: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The requests, interleaved: reads, writes and buffer writes through the flipping names."""
    reads = [("read", os.path.join(ws, "dir", "secret.txt") if i % 2 == 0 else os.path.join(ws, "leaf.txt"), "")
             for i in range(int(request["reads"]))]
    writes = []
    for i in range(int(request["writes"])):
        shape = i % 3
        if shape == 0:
            path = os.path.join(ws, "dir", f"w{i}.txt")
        elif shape == 1:
            path = os.path.join(ws, "dir", f"n{i}", "deep", "w.txt")  # missing parents
        else:
            path = os.path.join(ws, "leaf.txt")
        writes.append(("write", path, f"HOSTILE WRITE {i}\n"))
    buffer = request.get("buffer_file")
    buffer_writes = [("write", buffer, f"hostile buffer write {i}\n") for i in range(int(request["buffer_writes"]))]
    plan: list[tuple[str, str, str]] = []
    for group in _zip_longest(reads, writes, buffer_writes):
        plan.extend(group)
    return plan


def _zip_longest(*lists: list[tuple[str, str, str]]) -> list[list[tuple[str, str, str]]]:
    longest = max(len(x) for x in lists)
    return [[x[i] for x in lists if i < len(x)] for i in range(longest)]


async def serve() -> None:
    reader, writer = await stdio_streams(limit=LIMIT)
    await run_agent(HostileAgent(), writer, reader, stdio_buffer_limit_bytes=LIMIT)


if __name__ == "__main__":
    asyncio.run(serve())
