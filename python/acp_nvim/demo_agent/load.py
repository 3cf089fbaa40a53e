"""The ``load`` scenario: a benchmark's steady stream of fixed-size chunks and tool calls.

``load CHUNKS [BYTES] [TOOL_CALLS] [ids]`` sends CHUNKS agent message chunks whose text is exactly
BYTES bytes of ASCII (default 24; every fourth chunk ends a line, like prose), and TOOL_CALLS
tool calls spread evenly among them (default 0), each announced, updated in progress with
text and completed with text. With ``ids`` every chunk carries the ``messageId`` of the one message
they make up, as claude-agent-acp's chunks do (the same text, shown the same way: only the
wire's shape differs). The messages are the SDK's own models, serialized once by the
SDK's own serializer and written in batches straight to stdout: the agent must be much
cheaper than any client it is measured against, so that the client is what the benchmark
times. Nothing is kept in the session history (a million chunks would only grow this process).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

from acp.helpers import (
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import SessionNotification, StopReason
from acp.utils import serialize_params

from .turn import Turn, count_arg

DEFAULT_CHUNKS = 1000
DEFAULT_BYTES = 24
MAX_BYTES = 1 << 20
MAX_TOOL_CALLS = 10_000_000
BATCH = 256
"""Messages per write: the agent yields to its event loop (and to a cancel) between batches."""
LINE_EVERY = 4
MESSAGE_ID = "msg_load_01"
FILLER = "the quick brown fox jumps over the lazy dog "
TOOL_TEXT = "tool output line\n" * 8


def _int_arg(args: list[str], index: int, default: int, upper: int) -> int:
    """The argument at ``index`` as an integer in [0, upper], or ``default`` when absent or malformed."""
    try:
        return min(upper, max(0, int(args[index])))
    except (IndexError, ValueError):
        return default


def chunk_text(index: int, size: int) -> str:
    """Exactly ``size`` ASCII bytes that start with the chunk's number; every LINE_EVERY-th ends a line."""
    newline = int(index % LINE_EVERY == LINE_EVERY - 1)
    body = f"c{index:07d} "
    body += FILLER * (1 + (size // len(FILLER)))
    return body[: max(0, size - newline)] + ("\n" if newline and size else "")


class _Lines:
    """JSON-RPC ``session/update`` lines for one session, encoded like the SDK's sender does."""

    def __init__(self, session_id: str, ids: bool = False) -> None:
        self.session_id = session_id
        self._chunk = self._params(update_agent_message_text(""))
        if ids:
            self._chunk["update"]["messageId"] = MESSAGE_ID

    def _params(self, update: Any) -> dict[str, Any]:
        return serialize_params(SessionNotification(session_id=self.session_id, update=update))

    @staticmethod
    def _line(params: dict[str, Any]) -> bytes:
        message = {"jsonrpc": "2.0", "method": "session/update", "params": params}
        return (json.dumps(message, separators=(",", ":")) + "\n").encode()

    def chunk(self, text: str) -> bytes:
        """One agent_message_chunk line (the template's text replaced)."""
        self._chunk["update"]["content"]["text"] = text
        return self._line(self._chunk)

    def tool_call(self, call_id: str, number: int) -> list[bytes]:
        """A tool call's three lines: announced, in progress with text, completed with text."""
        progress = [tool_content(text_block(f"working on {number}\n"))]
        done = [tool_content(text_block(TOOL_TEXT))]
        updates = [
            start_tool_call(call_id, f"Read file {number}", kind="read", status="pending"),
            update_tool_call(call_id, status="in_progress", content=progress),
            update_tool_call(call_id, status="completed", content=done),
        ]
        return [self._line(self._params(update)) for update in updates]


def messages(turn: Turn, chunks: int, size: int, tool_calls: int, ids: bool = False) -> Iterator[bytes]:
    """Every line of the load, in order: tool calls spread evenly among the chunks."""
    lines = _Lines(turn.session_id, ids)
    every = chunks // tool_calls if tool_calls else 0
    made = 0
    for index in range(chunks):
        if every and index % every == 0 and made < tool_calls:
            made += 1
            yield from lines.tool_call(turn.session.next_tool_call_id("load"), made)
        yield lines.chunk(chunk_text(index, size))
    for number in range(made + 1, tool_calls + 1):
        yield from lines.tool_call(turn.session.next_tool_call_id("load"), number)


def conversation(session_id: str, turns: int, lines: int) -> Iterator[bytes]:
    """``turns`` exchanges as one stream: a user message chunk, then an answer of ``lines`` lines."""
    maker = _Lines(session_id)
    user = maker._params(update_user_message_text(""))
    for number in range(turns):
        user["update"]["content"]["text"] = f"question {number}: what comes next?"
        yield maker._line(user)
        answer = "".join(f"turn {number} line {i}: {FILLER.strip()}\n" for i in range(lines))
        yield maker.chunk(f"answer {number}\n{answer}")


async def turns(turn: Turn) -> StopReason:
    """``turns N [L]``: N exchanges of the conversation (a user message, an answer of L lines, default
    100) in one turn, as fast as the client reads: a long session for benchmarks."""
    count = count_arg(turn.args, 100)
    lines = _int_arg(turn.args, 1, 100, 100_000)
    await write_batched(turn, conversation(turn.session_id, count, lines), 16)
    return "end_turn"


async def write_batched(turn: Turn, lines: Iterator[bytes], size: int) -> None:
    """Write ``lines`` ``size`` at a time, letting the loop run between writes (a cancel gets in)."""
    batch: list[bytes] = []
    for line in lines:
        batch.append(line)
        if len(batch) >= size:
            await turn.raw_write(b"".join(batch))
            batch.clear()
            await asyncio.sleep(0)
    if batch:
        await turn.raw_write(b"".join(batch))


async def pace(turn: Turn) -> StopReason:
    """``pace [RATE] [SECONDS]``: 24-byte chunks at RATE per second (default 1000) for SECONDS
    (default 5), written in ticks of 10 ms; the last chunk is ``END <wall clock>``: a steady
    stream for benchmarks of many sessions at once (and when its end reached the chat)."""
    rate = count_arg(turn.args, 1000)
    seconds = _int_arg(turn.args, 1, 5, 3600)
    lines = _Lines(turn.session_id)
    loop = asyncio.get_running_loop()
    began, sent, total = loop.time(), 0, rate * seconds
    while sent < total:
        due = min(total, int((loop.time() - began) * rate) + 1)
        if due > sent:
            await turn.raw_write(b"".join(lines.chunk(chunk_text(index, DEFAULT_BYTES))
                                          for index in range(sent, due)))
            sent = due
        await asyncio.sleep(0.01)
    await turn.raw_write(lines.chunk(f"\nEND {time.time():.6f}\n"))
    return "end_turn"


async def load(turn: Turn) -> StopReason:
    """``load CHUNKS [BYTES] [TOOL_CALLS] [ids]``: fixed-size chunks and tool calls, as fast as the client reads."""
    chunks = count_arg(turn.args, DEFAULT_CHUNKS)
    size = _int_arg(turn.args, 1, DEFAULT_BYTES, MAX_BYTES)
    tool_calls = _int_arg(turn.args, 2, 0, MAX_TOOL_CALLS)
    await write_batched(turn, messages(turn, chunks, size, tool_calls, "ids" in turn.args[3:]), BATCH)
    return "end_turn"
