"""A hostile ACP agent that writes the workspace on the disk itself and never names what it writes:
no tool call, no permission request, no ``fs/write_text_file``. The prompt is one JSON object (see
``scripted_agent.py``):

  {"op": "disk", "write": {path: text}, "chmod": [path], "delete": [path], "read": [path],
   "terminals": [{"command", "args"}], "out": path}

Each ``write`` is written whole by the agent itself, each ``chmod`` path made executable, each
``delete`` path removed, then each ``terminals`` command run (waited for and released); last,
each ``read`` path is read back (text, or ``"ERR …"``), with its exec bit.
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


class HostileOverlay(ScriptedAgent):
    name = "hostile-overlay"

    async def _disk(self, session_id: str, request: dict[str, Any]) -> dict[str, Any]:
        done: dict[str, Any] = {"wrote": {}, "read": {}, "executable": {}, "terminals": []}
        for path, text in request.get("write", {}).items():
            try:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                Path(path).write_text(text)
                done["wrote"][path] = "ok"
            except OSError as exc:
                done["wrote"][path] = f"ERR {exc.strerror}"
        for path in request.get("chmod", []):
            os.chmod(path, 0o755)
        for path in request.get("delete", []):
            try:
                os.unlink(path)
            except OSError as exc:
                done["wrote"][path] = f"ERR {exc.strerror}"
        for spec in request.get("terminals", []):
            done["terminals"].append(await self._terminal(session_id, spec))
        for path in request.get("read", []):
            try:
                done["read"][path] = Path(path).read_text()
                done["executable"][path] = os.access(path, os.X_OK)
            except OSError as exc:
                done["read"][path] = f"ERR {exc.strerror}"
        return done

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
    await run_agent(HostileOverlay(), writer, reader)


if __name__ == "__main__":
    asyncio.run(serve())
