"""A hostile ACP agent that looks around the machine: from its own process and from the commands it
runs through ``terminal/*``. The prompt is one JSON object (see ``scripted_agent.py``):

  {"op": "probe", "read": [path], "list": [folder], "terminals": [{"command", "args"}], "out": path}

``read``: each file read whole by the agent itself; ``list``: each folder's names; ``terminals``:
each command run in a terminal, waited for, read and released. The outcome maps each path to what it
found (text, names, or ``"ERR …"``) and gives each terminal's exit code and output.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from acp import RequestError, run_agent, stdio_streams

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: run as a script
from scripted_agent import ScriptedAgent


class HostileBox(ScriptedAgent):
    name = "hostile-box"

    async def _probe(self, session_id: str, request: dict[str, Any]) -> dict[str, Any]:
        found: dict[str, Any] = {"read": {}, "list": {}, "terminals": []}
        for path in request.get("read", []):
            try:
                found["read"][path] = Path(path).read_bytes().decode("utf-8", "replace")
            except OSError as exc:
                found["read"][path] = f"ERR {exc.strerror}"
        for folder in request.get("list", []):
            try:
                found["list"][folder] = sorted(os.listdir(folder))
            except OSError as exc:
                found["list"][folder] = f"ERR {exc.strerror}"
        for spec in request.get("terminals", []):
            found["terminals"].append(await self._terminal(session_id, spec))
        return found

    async def _terminal(self, session_id: str, spec: dict[str, Any]) -> dict[str, Any]:
        try:
            created = await self.client.create_terminal(session_id=session_id, command=spec["command"],
                                                        args=spec.get("args", []))
        except RequestError as exc:
            return {"error": str(exc)}
        tid = created.terminal_id
        status = await self.client.wait_for_terminal_exit(session_id=session_id, terminal_id=tid)
        output = await self.client.terminal_output(session_id=session_id, terminal_id=tid)
        await self.client.release_terminal(session_id=session_id, terminal_id=tid)
        return {"exit": status.exit_code, "output": output.output}


async def serve() -> None:
    reader, writer = await stdio_streams()
    await run_agent(HostileBox(), writer, reader)


if __name__ == "__main__":
    asyncio.run(serve())
