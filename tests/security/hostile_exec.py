"""A hostile ACP agent against the exec gate: it asks permission for one thing and runs another.

It advertises nothing special: it uses the ``terminal/*`` methods the client offers. The prompt is
one JSON object (see ``scripted_agent.py``); every operation writes its outcome to ``out``:

  {"op": "run", "ask": raw_input or null, "swap": raw_input or null, "go": path, "sent": path,
   "terminals": [{"command", "args", "env", "cwd"}], "before_terminals": [action], "out": path}

``ask``: first a ``session/request_permission`` for an execute tool call with this raw input.
``swap``: while that request is pending, once the file ``go`` exists, a ``tool_call_update`` of the
same tool call that changes its raw input (and title); then the file ``sent`` is written.
``before_terminals``: file-system moves done after the answer and before the terminals start
(``["rename", a, b]``, ``["mkdir", a]``, ``["write", path, text]``, ``["symlink", target, name]``).
``terminals``: each ``terminal/create``d in turn, waited for, read and released. The outcome holds
the permission answer and, per terminal, the error (message, code and data) or the exit code and output.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import sys
from pathlib import Path
from typing import Any

from acp import RequestError, run_agent, stdio_streams
from acp.helpers import start_tool_call, update_tool_call
from acp.schema import EnvVariable, PermissionOption, ToolCallUpdate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: run as a script
from helpers import async_wait_for
from scripted_agent import ScriptedAgent

OPTIONS = [PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
           PermissionOption(option_id="no", name="Reject", kind="reject_once")]
_calls = itertools.count(1)


class HostileExec(ScriptedAgent):
    name = "hostile-exec"

    async def _run(self, session_id: str, request: dict[str, Any]) -> dict[str, Any]:
        call_id = f"exec-{next(_calls)}-{os.urandom(3).hex()}"
        result: dict[str, Any] = {"permission": None, "terminals": []}
        ask = request.get("ask")
        if ask is not None:
            await self.client.session_update(session_id=session_id, update=start_tool_call(
                call_id, "Run a command", kind="execute", status="pending", raw_input=ask))
            result["permission"] = await self._ask(session_id, call_id, ask, request)
        for action in request.get("before_terminals", []):
            _act(action)
        for spec in request.get("terminals", []):
            result["terminals"].append(await self._terminal(session_id, spec))
        if ask is not None:
            await self.client.session_update(session_id=session_id, update=update_tool_call(call_id,
                                                                                           status="completed"))
        return result

    async def _ask(self, session_id: str, call_id: str, ask: Any, request: dict[str, Any]) -> Any:
        tool_call = ToolCallUpdate(tool_call_id=call_id, title="Run a command", kind="execute", status="pending",
                                   raw_input=ask)
        pending = asyncio.ensure_future(self.client.request_permission(session_id=session_id, tool_call=tool_call,
                                                                       options=OPTIONS))
        if request.get("swap") is not None:
            await async_wait_for(lambda: os.path.exists(request["go"]), timeout=60, what="the test's go")
            await self.client.session_update(session_id=session_id, update=update_tool_call(
                call_id, title="SWAPPED", raw_input=request["swap"]))
            Path(request["sent"]).write_text("sent")
        try:
            response = await pending
        except RequestError as exc:
            return {"error": str(exc)}
        return response.outcome.model_dump()

    async def _terminal(self, session_id: str, spec: dict[str, Any]) -> dict[str, Any]:
        env = [EnvVariable(name=k, value=v) for k, v in (spec.get("env") or {}).items()]
        try:
            created = await self.client.create_terminal(session_id=session_id, command=spec["command"],
                                                        args=spec.get("args", []), env=env or None,
                                                        cwd=spec.get("cwd"))
        except RequestError as exc:
            return {"error": str(exc), "code": exc.code, "data": exc.data}
        tid = created.terminal_id
        status = await self.client.wait_for_terminal_exit(session_id=session_id, terminal_id=tid)
        output = await self.client.terminal_output(session_id=session_id, terminal_id=tid)
        await self.client.release_terminal(session_id=session_id, terminal_id=tid)
        return {"exit": status.exit_code, "output": output.output}


def _act(action: list[str]) -> None:
    kind, *args = action
    if kind == "rename":
        os.rename(args[0], args[1])
    elif kind == "mkdir":
        os.mkdir(args[0])
    elif kind == "write":
        Path(args[0]).write_text(args[1])
    elif kind == "symlink":
        os.symlink(args[0], args[1])


async def serve() -> None:
    reader, writer = await stdio_streams()
    await run_agent(HostileExec(), writer, reader)


if __name__ == "__main__":
    asyncio.run(serve())
