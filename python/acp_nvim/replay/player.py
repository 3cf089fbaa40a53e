"""The replay agent: an ACP agent (SDK agent side) whose every move comes from a recorded log.

The steps are played in recorded order. A client step ("out") waits until the live
client sends that method; an agent step ("in") is sent: recorded responses answer
the matching live request, notifications and requests go out through the SDK's typed
calls, stderr and stdout lines are printed. Each agent step is on the wire before
the next one starts, so the client sees the recorded order.
"""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from acp import RequestError
from acp.connection import StreamDirection, StreamEvent

from .script import Step

RawWrite = Callable[[bytes], Awaitable[None]]
MAX_DELAY = 5.0

CLIENT_CALLS = {
    "session/update": "session_update",
    "session/request_permission": "request_permission",
    "fs/read_text_file": "read_text_file",
    "fs/write_text_file": "write_text_file",
    "terminal/create": "create_terminal",
    "terminal/output": "terminal_output",
    "terminal/release": "release_terminal",
    "terminal/wait_for_exit": "wait_for_terminal_exit",
    "terminal/kill": "kill_terminal",
    "elicitation/complete": "complete_elicitation",
}


@dataclass(eq=False)
class Arrival:
    """A live message from the client waiting to be matched with a recorded one."""

    method: str
    notification: bool
    reply: asyncio.Future[Any] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class Player:
    """Walks the steps against one live client connection."""

    def __init__(self, steps: list[Step], raw_write: RawWrite, stderr: TextIO = sys.stderr,
                 delays: bool = False) -> None:
        self.steps = steps
        self.conn: Any = None
        self._raw_write = raw_write
        self._stderr = stderr
        self._delays = delays
        self._waiting: list[Arrival] = []
        self._arrived = asyncio.Event()
        self._answers: dict[Any, Arrival] = {}
        self._requests: dict[Any, asyncio.Task[Any]] = {}
        self._expected = Counter((s.kind, s.method) for s in steps if s.direction == "out")
        self._written = 0
        self._written_event = asyncio.Event()
        self.done = asyncio.Event()
        self._connected = asyncio.Event()

    def attach(self, conn: Any) -> None:
        """The SDK's agent-side connection, to send the agent's messages through."""
        self.conn = conn
        self._connected.set()

    # -- the client's side ---------------------------------------------------------

    async def arrive(self, method: str, notification: bool) -> Any:
        """A live client message; returns the recorded result (requests) once the script gets there."""
        kind = "notification" if notification else "request"
        if self._expected[(kind, method)] <= 0:
            self._say(f"unexpected {kind} {method}: the recording has no (further) one")
            if notification:
                return None
            raise RequestError.internal_error({"replay": f"the recording has no further {method}"})
        self._expected[(kind, method)] -= 1
        arrival = Arrival(method, notification)
        self._waiting.append(arrival)
        self._arrived.set()
        return await arrival.reply

    def observe(self, event: StreamEvent) -> None:
        """Connection observer: counts what reached the wire, so steps keep their order."""
        if event.direction is StreamDirection.OUTGOING:
            self._written += 1
            self._written_event.set()

    # -- playing -------------------------------------------------------------------

    async def run(self) -> None:
        """Play every step, then report the end on stderr."""
        await self._connected.wait()
        previous: float | None = None
        for step in self.steps:
            if step.direction == "in":
                await self._pause(previous, step.time)
                previous = step.time
            await self._play(step)
        self._say(f"played all {len(self.steps)} steps")
        self.done.set()

    async def _pause(self, previous: float | None, now: float) -> None:
        if self._delays and previous is not None and now > previous:
            await asyncio.sleep(min(now - previous, MAX_DELAY))

    async def _play(self, step: Step) -> None:
        if step.direction == "out":
            await self._await_client(step)
        elif step.kind == "response":
            await self._answer(step)
        elif step.kind == "request":
            mark = self._written
            task = self._requests[step.msg_id] = asyncio.ensure_future(self._call_client(step))
            await self._on_wire(mark, task)
        elif step.kind == "notification":
            await self._call_client(step)
        else:
            await self._print(step)

    async def _await_client(self, step: Step) -> None:
        if step.kind == "response":
            task = self._requests.pop(step.msg_id, None)
            if task is not None:
                await asyncio.gather(task, return_exceptions=True)
            return
        arrival = await self._next_arrival(step.method or "", step.kind == "notification")
        if arrival.notification:
            arrival.reply.set_result(None)
        else:
            self._answers[step.msg_id] = arrival

    async def _next_arrival(self, method: str, notification: bool) -> Arrival:
        while True:
            for arrival in self._waiting:
                if arrival.method == method and arrival.notification == notification:
                    self._waiting.remove(arrival)
                    return arrival
            self._arrived.clear()
            await self._arrived.wait()

    async def _answer(self, step: Step) -> None:
        arrival = self._answers.pop(step.msg_id, None)
        if arrival is None:
            self._say(f"skipping the response #{step.msg_id}: its request is not in the recording")
            return
        message, mark = step.message or {}, self._written
        if isinstance(message.get("error"), dict):
            error = message["error"]
            arrival.reply.set_exception(RequestError(error.get("code", -32603), error.get("message", "Error"),
                                                     error.get("data")))
        else:
            arrival.reply.set_result(message.get("result"))
        await self._on_wire(mark)

    async def _on_wire(self, mark: int, task: asyncio.Task[Any] | None = None) -> None:
        """Wait until a message went out after ``mark`` (or ``task``, which sends it, failed)."""
        while self._written <= mark and not (task is not None and task.done()):
            self._written_event.clear()
            waiter = asyncio.ensure_future(self._written_event.wait())
            await asyncio.wait({waiter, *([task] if task else [])}, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()

    async def _call_client(self, step: Step) -> Any:
        """Send a recorded agent → client request or notification through the SDK's typed call."""
        message = step.message or {}
        method, params = message.get("method", ""), message.get("params") or {}
        try:
            if method.startswith("_"):
                if step.kind == "request":
                    return await self.conn.ext_method(method[1:], params)
                return await self.conn.ext_notification(method[1:], params)
            call = getattr(self.conn, CLIENT_CALLS[method])
            model = call.__param_model__
            request = model.model_validate(params)
            kwargs = {name: getattr(request, name) for name in model.model_fields if name != "field_meta"}
            return await call(**kwargs, **(getattr(request, "field_meta", None) or {}))
        except (KeyError, AttributeError, ValueError) as exc:
            self._say(f"cannot replay {step.kind} {method}: {type(exc).__name__}: {exc}")
            return None

    async def _print(self, step: Step) -> None:
        if step.kind == "stderr":
            self._stderr.write(f"{step.text}\n")
            self._stderr.flush()
        else:
            await self._raw_write(f"{step.text}\n".encode())

    def _say(self, text: str) -> None:
        self._stderr.write(f"acp_nvim.replay: {text}\n")
        self._stderr.flush()
