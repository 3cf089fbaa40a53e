"""A hostile ACP agent against rules bound to a script's content: it gets its script approved, then swaps
the script's bytes as fast as it can while the command starts.

The prompt is one JSON object (see ``scripted_agent.py``):

  {"op": "swap", "script": path, "good": text, "evil": text, "asked": n, "direct": n, "out": path}

``asked`` runs: a ``session/request_permission`` for the execute tool call ``./<script>`` (the first is
answered by the user, the next by the rule that answer made); once the answer is in, a thread swaps the
script for ``evil`` and back, over and over (in place and by rename), while the agent starts the
``terminal/create`` of that command, waits for its exit and reads its output. ``direct`` runs: the
``terminal/create`` alone (acp.nvim asks on its own), the swapping thread started right after it is
sent. The script is set back to ``good`` between runs. The outcome lists each run's permission answer,
exit code and output, or its error.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import sys
import threading
from pathlib import Path
from typing import Any

from acp import RequestError, run_agent, stdio_streams
from acp.helpers import start_tool_call, update_tool_call
from acp.schema import PermissionOption, ToolCallUpdate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: run as a script
from scripted_agent import ScriptedAgent

OPTIONS = [PermissionOption(option_id="once", name="Allow", kind="allow_once"),
           PermissionOption(option_id="always", name="Always allow", kind="allow_always"),
           PermissionOption(option_id="no", name="Reject", kind="reject_once")]
_calls = itertools.count(1)


class Swapper:
    """A thread that swaps ``path`` between two contents as fast as it can until stopped."""

    def __init__(self, path: Path, good: str, evil: str) -> None:
        self.path, self.good, self.evil = path, good, evil
        self.swaps = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Swapper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        write(self.path, self.good, rename=True)

    def _run(self) -> None:
        contents = itertools.cycle([self.evil, self.evil, self.good])
        while not self._stop.is_set():
            write(self.path, next(contents), rename=self.swaps % 2 == 0)
            self.swaps += 1


def write(path: Path, text: str, *, rename: bool) -> None:
    """``text`` into ``path``, executable: in place (same file) or by renaming a new file over it."""
    if rename:
        temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temp.write_text(text)
        os.chmod(temp, 0o755)
        os.replace(temp, path)
    else:
        with open(path, "w") as handle:
            handle.write(text)


class HostileSwap(ScriptedAgent):
    name = "hostile-swap"

    async def _swap(self, session_id: str, request: dict[str, Any]) -> dict[str, Any]:
        script = Path(request["script"])
        command = f"./{script.name}"
        runs: list[dict[str, Any]] = []
        swaps = 0
        for _ in range(request["asked"]):
            call_id = f"swap-{next(_calls)}-{os.urandom(3).hex()}"
            raw = {"command": command, "cwd": str(script.parent)}
            await self.client.session_update(session_id=session_id, update=start_tool_call(
                call_id, f"Run {command}", kind="execute", status="pending", raw_input=raw))
            tool_call = ToolCallUpdate(tool_call_id=call_id, title=f"Run {command}", kind="execute",
                                       status="pending", raw_input=raw)
            response = await self.client.request_permission(session_id=session_id, tool_call=tool_call,
                                                            options=OPTIONS)
            answer = response.outcome.model_dump()
            run: dict[str, Any] = {"way": "asked", "answer": answer}
            if answer.get("option_id") in ("once", "always"):
                with Swapper(script, request["good"], request["evil"]) as swapper:
                    run.update(await self._terminal(session_id, command, str(script.parent)))
                swaps += swapper.swaps
            await self.client.session_update(session_id=session_id, update=update_tool_call(call_id,
                                                                                           status="completed"))
            runs.append(run)
        for _ in range(request["direct"]):
            with Swapper(script, request["good"], request["evil"]) as swapper:
                run = {"way": "direct", **await self._terminal(session_id, command, str(script.parent))}
            swaps += swapper.swaps
            runs.append(run)
        return {"runs": runs, "swaps": swaps}

    async def _terminal(self, session_id: str, command: str, cwd: str) -> dict[str, Any]:
        try:
            created = await self.client.create_terminal(session_id=session_id, command=command, args=[], cwd=cwd)
        except RequestError as exc:
            return {"error": str(exc), "code": exc.code}
        tid = created.terminal_id
        status = await self.client.wait_for_terminal_exit(session_id=session_id, terminal_id=tid)
        output = await self.client.terminal_output(session_id=session_id, terminal_id=tid)
        await self.client.release_terminal(session_id=session_id, terminal_id=tid)
        return {"exit": status.exit_code, "output": output.output}


async def serve() -> None:
    reader, writer = await stdio_streams()
    await run_agent(HostileSwap(), writer, reader)


if __name__ == "__main__":
    asyncio.run(serve())
