"""A hostile ACP agent that tries to get writes past the user's review.

The prompt is one JSON object ``{"op": "script", "steps": [...], "out": result-file}``; the steps
run in order within one turn (approvals hold for the turn they were given in). Each step:
  {"do": "ask", "id": ..., "kind": ..., "title": ..., "diffs": [[path, old, new]], "raw_input": ...,
   "locations": [path], "wait": true}  a permission request (``wait`` false: do not wait for the answer,
                                        collect it at the end)
  {"do": "update", "id": ..., "diffs"/"locations"/"raw_input"/"status": ...}  a tool_call_update
  {"do": "write", "path": ..., "content": ...}  ``fs/write_text_file``
  {"do": "disk", "path": ..., "content": ...}   write the disk itself (temp file, rename)
  {"do": "status", "id": ..., "status": ...}    a tool_call_update with only a status
  {"do": "until", "path": ...}                  read ``path`` through ``fs/read_text_file`` until it exists
                                                (the test creates it once it saw what it waits for)
The result lists each step's outcome: an answer's option id (or its outcome), a write's ok or error.
"""

from __future__ import annotations

import asyncio
import os
import sys
import types
from pathlib import Path
from typing import Any

from acp import RequestError, run_agent, stdio_streams
from acp.helpers import tool_diff_content
from acp.schema import PermissionOption, ToolCallLocation, ToolCallProgress, ToolCallUpdate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: run as a script
from scripted_agent import ScriptedAgent

OPTIONS = [PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
           PermissionOption(option_id="always", name="Always allow", kind="allow_always"),
           PermissionOption(option_id="no", name="Reject", kind="reject_once")]


def _fields(step: dict[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if "diffs" in step:
        fields["content"] = [tool_diff_content(path, new, old) for path, old, new in step["diffs"]]
    if "locations" in step:
        fields["locations"] = [ToolCallLocation(path=path) for path in step["locations"]]
    for key in ("raw_input", "kind", "title", "status"):
        if key in step:
            fields[key] = step[key]
    return fields


class HostileWrites(ScriptedAgent):
    name = "hostile-writes"

    async def _script(self, session_id: str, request: dict[str, Any]) -> dict[str, Any]:
        results: list[Any] = []
        waiting: list[tuple[int, asyncio.Task[Any]]] = []
        for step in request["steps"]:
            action = getattr(self, "_do_" + step["do"])(session_id, step)
            if step.get("wait", True):
                results.append(await action)
            else:
                waiting.append((len(results), asyncio.ensure_future(action)))
                results.append(None)
                for _ in range(20):  # let the request go out on the wire before the next step's
                    await _yield_to_loop()
        for index, task in waiting:
            results[index] = await task
        return {"results": results}

    async def _do_ask(self, session_id: str, step: dict[str, Any]) -> dict[str, Any]:
        call = ToolCallUpdate(tool_call_id=step["id"], status="pending", **_fields(step))
        try:
            response = await self.client.request_permission(session_id=session_id, tool_call=call, options=OPTIONS)
        except RequestError as exc:
            return {"ok": False, "code": exc.code, "message": str(exc)}
        outcome = response.outcome.model_dump(by_alias=True)
        return {"ok": True, "option": outcome.get("optionId", outcome.get("outcome"))}

    async def _do_update(self, session_id: str, step: dict[str, Any]) -> dict[str, Any]:
        fields = _fields(step)
        await self.client.session_update(session_id=session_id, update=ToolCallProgress(
            session_update="tool_call_update", tool_call_id=step["id"], **fields))
        return {"ok": True}

    _do_status = _do_update

    async def _do_write(self, session_id: str, step: dict[str, Any]) -> dict[str, Any]:
        try:
            await self.client.write_text_file(session_id=session_id, path=step["path"], content=step["content"])
        except RequestError as exc:
            return {"ok": False, "code": exc.code, "message": str(exc)}
        return {"ok": True}

    async def _do_until(self, session_id: str, step: dict[str, Any]) -> dict[str, Any]:
        for tries in range(1, 20_000):
            try:
                await self.client.read_text_file(session_id=session_id, path=step["path"])
            except RequestError:
                continue
            return {"ok": True, "tries": tries}
        return {"ok": False}

    async def _do_disk(self, session_id: str, step: dict[str, Any]) -> dict[str, Any]:
        path = step["path"]
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + ".tmp", "w", encoding="utf-8") as handle:
            handle.write(step["content"])
        os.replace(path + ".tmp", path)
        return {"ok": True}


@types.coroutine
def _yield_to_loop() -> Any:
    yield


async def serve() -> None:
    reader, writer = await stdio_streams()
    await run_agent(HostileWrites(), writer, reader)


if __name__ == "__main__":
    asyncio.run(serve())
