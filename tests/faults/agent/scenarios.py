"""Prompt scenarios: the first word of a prompt picks one; the rest are its arguments.

Each returns the turn's stop reason, or never returns (a hang), or ends the process.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.helpers import start_tool_call, tool_diff_content, update_agent_message_text, update_tool_call
from acp.interfaces import Client
from acp.schema import AllowedOutcome, PermissionOption, ToolCallLocation, ToolCallUpdate

from .config import Config
from .events import Events
from .transport import TapTransport

OPTIONS = [PermissionOption(option_id="yes", name="Allow once", kind="allow_once"),
           PermissionOption(option_id="no", name="Reject", kind="reject_once")]
CRASH_STDERR = ["fault agent: loading model weights", "Traceback (most recent call last):",
                '  File "agent.py", line 42, in frobnicate', "FrobnicatorError: the frobnicator exploded (code 4711)"]
ERROR_MESSAGE = "fault agent: the model is overloaded, try again later"
GARBAGE_LINE = "fault agent progress: half-way there (step 2 of 4)"
STDERR_AFTER_FLOOD = "fault agent: download finished"
BAD_BYTE = b"\xe9"
EXIT_CODE = 3
ABRUPT_STDERR = "fault agent: connection reset by model server"
MARKER = re.compile(r"#p\d+#")


@dataclass
class Turn:
    """One prompt: the connection, the session, the prompt's words, and its cancel flag."""

    client: Client
    config: Config
    events: Events
    transport: TapTransport
    session_id: str
    text: str
    cancelled: asyncio.Event

    @property
    def args(self) -> list[str]:
        """The prompt's words after the first, without the harness's ``#pN#`` markers."""
        return [word for word in self.text.split()[1:] if not MARKER.fullmatch(word)]

    async def say(self, text: str) -> None:
        await self.client.session_update(session_id=self.session_id, update=update_agent_message_text(text))

    async def raw_line(self, message_with_placeholder: dict[str, Any], raw: bytes) -> None:
        """Send ``message`` with the string ``@RAW@`` in it replaced by ``raw`` bytes."""
        line = json.dumps(message_with_placeholder, separators=(",", ":")).encode()
        await self.transport.raw(line.replace(b"@RAW@", raw) + b"\n")

    async def ask(self, title: str, tool_call_id: str, **fields: Any) -> str:
        """One permission request; the outcome ("cancelled" or the option id)."""
        tool_call = ToolCallUpdate(tool_call_id=tool_call_id, title=title, **fields)
        response = await self.client.request_permission(session_id=self.session_id, tool_call=tool_call,
                                                        options=[o.model_copy() for o in OPTIONS])
        outcome = response.outcome
        answer = outcome.option_id if isinstance(outcome, AllowedOutcome) else "cancelled"
        self.events.add("answer", title=title, outcome=answer)
        return answer

    async def until_cancelled(self, timeout: float = 3600) -> bool:
        try:
            await asyncio.wait_for(self.cancelled.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def path(self, name: str) -> str:
        return name if os.path.isabs(name) else os.path.join(os.getcwd(), name)


Scenario = Callable[[Turn], Awaitable[str]]


async def answer(turn: Turn) -> str:
    """The default: ``answer: <prompt>``."""
    await turn.say(f"answer: {turn.text}")
    return "end_turn"


async def slow(turn: Turn) -> str:
    """``slow N``: a tick every 200 ms, N times (default 50); stops at a cancel."""
    for index in range(int(turn.args[0]) if turn.args else 50):
        await turn.say(f"tick {index}\n")
        if await turn.until_cancelled(0.2):
            return "cancelled"
    return "end_turn"


async def hang(turn: Turn) -> str:
    """``freeze``: one chunk, then nothing, ever (a cancel is ignored too)."""
    await turn.say("working on it...\n")
    turn.events.add("hang", method="session/prompt")
    await asyncio.Event().wait()
    return "end_turn"


async def ignore_cancel(turn: Turn) -> str:
    """``keep-going``: a pending tool call and ticks that go on for 60 s after a cancel."""
    await turn.client.session_update(session_id=turn.session_id, update=start_tool_call(
        "run-tests", "Run the test suite", kind="execute", status="pending"))
    for index in range(300):
        await turn.say(f"tick {index}\n")
        if turn.cancelled.is_set() and index % 50 == 0:
            turn.events.add("cancel_ignored")
        await asyncio.sleep(0.2)
    return "end_turn"


async def crash(turn: Turn) -> str:
    """``crash [GATE]``: a chunk, (the gate,) a stderr tail with a traceback, then exit code 3."""
    await turn.say("About to do something risky...\n")
    if turn.args:
        await turn.config.gate(turn.args[0])
    return await _crash(turn)


async def _crash(turn: Turn) -> str:
    await asyncio.sleep(0.2)
    for line in CRASH_STDERR:
        sys.stderr.write(line + "\n")
    sys.stderr.flush()
    turn.events.add("crash")
    os._exit(EXIT_CODE)


async def crash_abrupt(turn: Turn) -> str:
    """``crash-abrupt``: five chunks 0.1 s apart, one stderr line, then ``os._exit(1)`` (no traceback,
    no flush of anything else): the crash as a user met it."""
    for index in range(5):
        await turn.say(f"step {index + 1} of 5\n")
        await asyncio.sleep(0.1)
    sys.stderr.write(ABRUPT_STDERR + "\n")
    sys.stderr.flush()
    turn.events.add("crash")
    os._exit(1)


async def error(turn: Turn) -> str:
    """``error``: a JSON-RPC error reply to the prompt."""
    await turn.say("thinking...\n")
    raise RequestError(-32000, ERROR_MESSAGE)


async def garbage(turn: Turn) -> str:
    """``garbage``: a plain non-JSON line on stdout, then a normal answer."""
    await turn.transport.raw(GARBAGE_LINE.encode() + b"\n")
    return await answer(turn)


async def utf8_response(turn: Turn) -> str:
    """``badbyte-response``: the prompt's response carries an invalid UTF-8 byte (the SDK never answers)."""
    await turn.say("replying with a bad byte\n")
    request_id = turn.transport.prompt_ids[-1]
    await turn.raw_line({"jsonrpc": "2.0", "id": request_id,
                         "result": {"stopReason": "end_turn", "_meta": {"note": "caf@RAW@"}}}, BAD_BYTE)
    turn.events.add("raw_response", id=request_id)
    await asyncio.Event().wait()
    return "end_turn"


async def utf8_notification(turn: Turn) -> str:
    """``badbyte-note``: a message chunk with an invalid UTF-8 byte, then a normal answer."""
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "bad byte: caf@RAW@\n"}}
    await turn.raw_line({"jsonrpc": "2.0", "method": "session/update",
                         "params": {"sessionId": turn.session_id, "update": update}}, BAD_BYTE)
    return await answer(turn)


async def utf8_request(turn: Turn) -> str:
    """``badbyte-request``: a permission request whose title has an invalid UTF-8 byte."""
    request_id = 900001
    params = {"sessionId": turn.session_id, "options": [o.model_dump(by_alias=True) for o in OPTIONS],
              "toolCall": {"toolCallId": "bad-utf8", "title": "Run caf@RAW@ script", "kind": "execute"}}
    line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "session/request_permission",
                       "params": params}, separators=(",", ":")).encode().replace(b"@RAW@", BAD_BYTE)
    reply = await turn.transport.raw_request(request_id, line + b"\n")
    turn.events.add("answer", title="Run caf? script", outcome=json.dumps(reply.get("result") or reply))
    await turn.say("the permission request was answered\n")
    return "end_turn"


async def surrogate(turn: Turn) -> str:
    """``surrogate``: a chunk holding a lone surrogate ("\\ud83d"), then a permission request."""
    await turn.say("lone \ud83d surrogate chunk-7731\n")
    outcome = await turn.ask("Run after surrogate", "after-surrogate", kind="execute")
    await turn.say(f"permission: {outcome}\n")
    return "cancelled" if outcome == "cancelled" else "end_turn"


async def permissions(turn: Turn) -> str:
    """``perms N``: N permission requests at once; waits for every answer, then for a cancel if any
    was cancelled (ACP: the turn then ends ``cancelled``)."""
    count = int(turn.args[0])
    asks = [asyncio.ensure_future(turn.ask(f"perm {i:03d} of {count}", f"perm-{i}", kind="execute"))
            for i in range(1, count + 1)]
    outcomes = await asyncio.gather(*asks)
    turn.events.add("answers_done", outcomes=list(outcomes))
    if "cancelled" in outcomes:
        await turn.until_cancelled(30)
        return "cancelled"
    await turn.say(f"all {count} answered\n")
    return "end_turn"


def _edit_fields(path: str, new_text: str, old_text: str | None) -> dict[str, Any]:
    return {"kind": "edit", "content": [tool_diff_content(path, new_text, old_text)],
            "locations": [ToolCallLocation(path=path)], "raw_input": {"path": path}}


async def review_then_write(turn: Turn) -> str:
    """``review PATH [gate]``: ask to edit PATH (a diff: a review opens); on ``gate`` the agent
    exits while the review is open; otherwise it writes PATH through ``fs/write_text_file``
    whatever the answer (an agent retrying a rejected file)."""
    path = turn.path(turn.args[0])
    old = Path(path).read_text() if Path(path).exists() else None
    new = (old or "") + "line added by the agent\n"
    ask = asyncio.ensure_future(turn.ask(f"Edit {Path(path).name}", "edit-1", **_edit_fields(path, new, old)))
    if len(turn.args) > 1:
        await turn.config.gate(turn.args[1])
        return await _crash(turn)
    outcome = await ask
    return await _write(turn, path, new, f"after {outcome}")


async def _write(turn: Turn, path: str, content: str, why: str) -> str:
    try:
        await turn.client.write_text_file(session_id=turn.session_id, path=path, content=content)
        turn.events.add("write", path=path, ok=True, why=why)
        await turn.say("fs write: ok\n")
    except RequestError as exc:  # the client's words are its own to show: the agent only notes the outcome
        turn.events.add("write", path=path, ok=False, why=why, error=str(exc.data or exc))
        await turn.say("fs write: error\n")
    return "end_turn"


async def write(turn: Turn) -> str:
    """``write PATH BYTES``: write BYTES bytes of text into PATH through ``fs/write_text_file``."""
    path, size = turn.path(turn.args[0]), int(turn.args[1])
    line = "x" * 79 + "\n"
    return await _write(turn, path, line * (size // 80) + "y" * (size % 80), "write")


async def read_then_write(turn: Turn) -> str:
    """``read-write PATH GATE``: read PATH, wait at GATE (the disk changes meanwhile), then write
    PATH with a line appended to what it read."""
    path = turn.path(turn.args[0])
    read = await turn.client.read_text_file(session_id=turn.session_id, path=path)
    turn.events.add("read", path=path)
    await turn.config.gate(turn.args[1])
    return await _write(turn, path, read.content + "line added by the agent\n", "after read")


async def disk_edit(turn: Turn) -> str:
    """``disk-edit PATH``: change PATH on disk itself (no fs/*), then report the tool call done."""
    path = turn.path(turn.args[0])
    await turn.client.session_update(session_id=turn.session_id, update=start_tool_call(
        "disk-edit", f"Edit {Path(path).name}", kind="edit", status="in_progress",
        locations=[ToolCallLocation(path=path)]))
    Path(path).write_text(Path(path).read_text() + "line added by the agent on disk\n")
    await turn.client.session_update(session_id=turn.session_id, update=update_tool_call(
        "disk-edit", status="completed"))
    return await answer(turn)


async def stop_reading(turn: Turn) -> str:
    """``stop-reading PATH``: stop reading stdin, then ask to read PATH ten times: the client's
    answers (megabytes) pile up in the pipe. The turn never ends."""
    turn.transport.stop_reading()
    path = turn.path(turn.args[0])
    reads = [asyncio.ensure_future(turn.client.read_text_file(session_id=turn.session_id, path=path))
             for _ in range(10)]
    await asyncio.gather(*reads)  # never: the answers stay in the pipe
    await asyncio.Event().wait()
    return "end_turn"


def _write_stderr(data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(2, view):]


async def stderr_flood(turn: Turn) -> str:
    """``stderr-cr MB`` / ``stderr-line MB``: one stderr "line" of MB megabytes without a newline
    (a ``\\r`` progress bar, or plain bytes), then a normal stderr line and a normal answer. If
    the client stopped draining stderr, the agent blocks here and never answers."""
    size = int(turn.args[0]) << 20
    unit = b"\rdownloading model 42%" if turn.text.startswith("stderr-cr") else b"x" * 64
    _write_stderr(unit * (size // len(unit)))
    _write_stderr(f"\n{STDERR_AFTER_FLOOD}\n".encode())
    turn.events.add("stderr_written", bytes=size)
    return await answer(turn)


async def big_chunk(turn: Turn) -> str:
    """``chunk MB``: one message chunk of MB megabytes (80-character lines), then an answer."""
    size = int(turn.args[0]) << 20
    await turn.say(("0123456789" * 8 + "\n") * (size // 81))
    return await answer(turn)


SCENARIOS: dict[str, Scenario] = {
    "slow": slow, "freeze": hang, "keep-going": ignore_cancel, "crash": crash, "crash-abrupt": crash_abrupt,
    "error": error,
    "garbage": garbage, "badbyte-response": utf8_response, "badbyte-note": utf8_notification,
    "badbyte-request": utf8_request, "surrogate": surrogate, "perms": permissions, "review": review_then_write,
    "write": write, "read-write": read_then_write, "disk-edit": disk_edit, "stop-reading": stop_reading,
    "stderr-cr": stderr_flood, "stderr-line": stderr_flood, "chunk": big_chunk,
}


async def run_scenario(turn: Turn) -> str:
    """Pick the scenario by the prompt's first word and run it."""
    words = turn.text.split()
    scenario = SCENARIOS.get(words[0] if words else "", answer)
    turn.events.add("scenario", name=scenario.__name__, text=turn.text[:200])
    return await scenario(turn)
