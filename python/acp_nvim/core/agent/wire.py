"""The agent's stdio as an SDK message transport that shows every line to the session log.

The SDK's own stdio transport logs a non-JSON line through ``logging`` and drops it,
and its stream observers deep-copy every message. This transport hands each line
to a tap exactly as it crossed the pipe (no copy, no re-encoding), keeps non-JSON
lines (an OAuth URL, a progress bar) as such, and never lets one end the connection:

- a line with invalid UTF-8 or lone surrogates is read with U+FFFD in their place (a request
  with one bad byte is still answered) and the log says what was replaced;
- a line over the session's ``max_line_bytes`` is dropped without being held in memory, and
  the user is told; a request or response it began is answered or failed, so nobody waits;
  so is a line that holds more than ``MAX_ITEMS`` values (``json_lines.too_many_items``:
  its parse would cost 30 times its size), or that nests deeper than ``MAX_DEPTH``
  (``json_lines.too_deep``: the SDK's validation would fail inside), before it is parsed;
- what the SDK cannot take is dropped with a log line: a response whose id is no number or
  string, a notification nobody handles (ACP: ignore), a request whose method is no string;
- ``$/cancel_request`` (which the SDK does not route) goes to the session's client side; every
  request handed to the SDK runs with its id in ``questions.AGENT_REQUEST``, so what it asks the
  user can be found when the agent withdraws it;
- ``session/update`` goes to the session on its own path (``inbound.py``): no SDK task per
  update. Updates are delivered in batches, in order, on the next turn of the event loop; a
  message the SDK handles closes the batch, so nothing overtakes what came before it.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import json
import re
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from ..questions import AGENT_REQUEST
from .inbound import Inbound, Streamed, Withdrawing, streamed, streamed_line, validated
from .json_lines import MAX_DEPTH, MAX_ITEMS, NOT_JSON, loads_careful, loads_fast, too_deep, too_many_items

try:
    import orjson
except ImportError:  # optional speed-up (pip install orjson)
    orjson = None  # type: ignore[assignment]

NOISE_NOTICES = 5
"""Noise lines shown to the user per session; the rest stay in the log only."""
DEFAULT_MAX_LINE = 128 * 1024 * 1024
"""The longest line kept when the client sets no limit (``wire.max_line_bytes``)."""
HEAD_BYTES = 4096
"""Bytes of a dropped over-long line kept to say what it was."""
READ_SIZE = 256 * 1024
"""Bytes taken from the pipe's reader at a time (what one read of the pipe delivers at most)."""
ENVELOPE = re.compile(rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*,'
                      rb'\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"(method|result|error)"\s*:\s*(?:"([^"\\]{1,100})")?')
"""The start of a JSON-RPC request or response as the SDKs write it: its id, what it is, the method."""
INVALID_REQUEST = -32600
PASSED_NOTIFICATIONS = frozenset({"elicitation/complete"})
"""Notifications of the protocol the SDK routes to the client (others without ``_`` are dropped here)."""
CANCEL_REQUEST = "$/cancel_request"
SENT: contextvars.ContextVar[list[int | str] | None] = contextvars.ContextVar("acp_nvim_sent", default=None)
"""Where the ids of the requests sent in this context are collected (``AgentProcess.ask``: a request
it abandons is withdrawn with ``$/cancel_request``)."""


BIG_TEXT = 64 * 1024
"""A response whose one field is a text this long keeps the text's JSON for the next answer."""


def encode_line(message: Mapping[str, object]) -> bytes:
    """One compact JSON line (UTF-8, newline-terminated).

    orjson, when installed, encodes a large ``fs/read_text_file`` answer about five times
    faster than ``json`` (3.5 ms against 17 ms for 5.7 MB); anything it refuses goes to ``json``.
    An agent reads the same unchanged buffer again and again, and the buffer cache then hands out
    the very same text object: its JSON is kept (``_TEXT_JSON``) and only the envelope is encoded.
    """
    text = _single_text(message)
    if text is not None:  # one copy of the text's JSON (a chain of + would copy it once per +)
        return b"".join((b'{"jsonrpc":"2.0","id":', _dumps(message["id"]), b',"result":{"content":',
                         _text_json(text), b"}}\n"))
    return _dumps(message) + b"\n"


def _dumps(value: object) -> bytes:
    if orjson is not None:
        try:
            return bytes(orjson.dumps(value))
        except TypeError:
            pass
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _single_text(message: Mapping[str, object]) -> str | None:
    """The text of a ``{"jsonrpc": "2.0", "id": …, "result": {"content": <long text>}}`` answer."""
    if len(message) != 3 or message.get("jsonrpc") != "2.0" or "id" not in message:
        return None
    result = message.get("result")
    if type(result) is not dict or len(result) != 1:
        return None
    text = result.get("content")
    return text if type(text) is str and len(text) >= BIG_TEXT else None


_TEXT_JSON: list[tuple[str, bytes]] = []
"""The last long text encoded and its JSON (one: the newest read)."""


def _text_json(text: str) -> bytes:
    if _TEXT_JSON and _TEXT_JSON[0][0] is text:
        return _TEXT_JSON[0][1]
    encoded = _dumps(text)
    _TEXT_JSON[:] = [(text, encoded)]
    return encoded


class Tap(Protocol):
    """Where the transport reports what it sees."""

    def message(self, direction: str, message: Mapping[str, object], raw: str | bytes | memoryview) -> None: ...

    def streamed(self, raw: bytes) -> None:
        """An incoming ``session/update`` that is a streamed text chunk, as it crossed the pipe: what
        ``message`` would log at level trace, without looking into it again (the hot path)."""
        ...

    def noise(self, line: str) -> None: ...


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A line that cannot become a message: its first bytes, its size, and why (None: over the
    line limit; the rest of such a line was never kept)."""

    head: bytes
    size: int
    why: str | None = None


class _Lines:
    """Lines cut from what the pipe delivers, many per read (``bytes.split`` at C speed, where a
    ``readuntil`` per line costs more than the rest of a streamed chunk's way). A line longer
    than ``limit`` is kept as its first bytes and its size only (``Unreadable``)."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self.ready: deque[bytes | Unreadable] = deque()
        self._pieces: list[bytes] = []
        """The start of the next line (no newline yet), while it is within the limit."""
        self._head: bytes | None = None
        """The first bytes of a next line already over the limit (the rest is counted, not kept)."""
        self._size = 0

    def feed(self, data: bytes) -> None:
        parts = data.split(b"\n")
        rest = parts.pop()  # after the last newline: the start of the next line
        if parts:
            first: bytes | Unreadable = self._end(parts[0]) if self._size else parts[0]
            if len(data) > self._limit:  # only then can a line in it be over the limit
                self.ready.extend(line for line in map(self._capped, [first, *parts[1:]]) if line)
            else:
                if first:
                    self.ready.append(first)
                self.ready.extend(line for line in itertools.islice(parts, 1, None) if line)
        if rest:
            self._grow(rest)

    def _grow(self, piece: bytes) -> None:
        self._size += len(piece)
        if self._head is None and self._size > self._limit:
            head = bytearray()
            for part in [*self._pieces, piece]:
                head += part[:HEAD_BYTES - len(head)]
                if len(head) >= HEAD_BYTES:
                    break
            self._head, self._pieces = bytes(head), []
        elif self._head is None:
            self._pieces.append(piece)

    def _end(self, last: bytes) -> bytes | Unreadable:
        """The line begun in earlier reads, ended by ``last`` (its bytes before the newline)."""
        self._grow(last)
        if self._head is not None:
            line: bytes | Unreadable = Unreadable(self._head, self._size)
        else:
            line = b"".join(self._pieces)
        self._pieces, self._head, self._size = [], None, 0
        return line

    def _capped(self, line: bytes | Unreadable) -> bytes | Unreadable:
        if isinstance(line, bytes) and len(line) > self._limit:
            return Unreadable(line[:HEAD_BYTES], len(line))
        return line

    def end_of_file(self) -> bytes | Unreadable | None:
        """What was left without a newline at the end (the last line still counts), or None."""
        if not self._size:
            return None
        return self._end(b"")




class WireTransport:
    """Newline-delimited JSON over the agent's stdout/stdin (``acp._transport.Transport``).

    ``inbound`` (the session's client side, when it is an ``Inbound``) takes ``session/update``
    and hears what was dropped; without it those go to the SDK as they are.
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, tap: Tap,
                 inbound: object = None) -> None:
        self._reader = reader
        self._writer = writer
        self._tap = tap
        self._inbound = inbound if isinstance(inbound, Inbound) else None
        self._withdrawing = inbound if isinstance(inbound, Withdrawing) else None
        self._max_line = self._inbound.max_line_bytes if self._inbound is not None else DEFAULT_MAX_LINE
        self._lines = _Lines(self._max_line)
        self._batch: list[Streamed] | None = None
        self._unanswered: set[int | str] = set()
        """Ids of our requests the agent has not answered yet."""

    async def send(self, message: dict[str, object]) -> None:
        self._write(message)
        msg_id = message.get("id")
        if "method" in message and isinstance(msg_id, (int, str)) and not isinstance(msg_id, bool):
            self._unanswered.add(msg_id)
            sent = SENT.get()
            if sent is not None:
                sent.append(msg_id)
        await self._writer.drain()

    def _write(self, message: dict[str, object]) -> None:
        line = encode_line(message)
        self._writer.write(line)
        self._tap.message("out", message, memoryview(line)[:-1])  # a view: an answer may be megabytes

    def abandon(self, ids: list[int | str]) -> list[int | str]:
        """Withdraw those of our requests ``ids`` the agent has not answered (``$/cancel_request``,
        written at once: this may run in a task being cancelled). Returns the ids withdrawn."""
        withdrawn = [msg_id for msg_id in ids if msg_id in self._unanswered]
        for msg_id in withdrawn:
            self._unanswered.discard(msg_id)
            try:
                self._write({"jsonrpc": "2.0", "method": CANCEL_REQUEST, "params": {"requestId": msg_id}})
            except (OSError, RuntimeError):  # the pipe is closing: nothing waits for the answer anyway
                return withdrawn
        return withdrawn

    async def receive(self) -> dict[str, object] | None:
        while True:
            line = await self._read_line()
            if not line:
                return None
            if isinstance(line, Unreadable):
                message = await self._unreadable(line)
                if message is None:
                    continue
            else:
                hot = streamed_line(line) if self._inbound is not None else None
                if hot is not None:  # a text chunk in its usual bytes: no parse of the whole message
                    self._tap.streamed(line)
                    self._add_update(hot)
                    continue
                parsed, note = self._parse(line)
                if parsed is None:
                    continue
                if isinstance(parsed, Unreadable):
                    message = await self._unreadable(parsed)
                    if message is None:
                        continue
                elif self._inbound is not None and parsed.get("method") == "session/update" and "id" not in parsed:
                    self._session_update(parsed, line, note)
                    continue
                else:
                    self._tapped(parsed, line, note)
                    message = parsed
            message = await self._route(message)
            if message is not None:
                self._batch = None  # what follows waits for the SDK's handling of this one
                # the SDK starts the request's task right after this returns: the task keeps the id
                AGENT_REQUEST.set(_request_id(message))
                return message

    def _tapped(self, message: dict[str, object], line: bytes, note: str | None) -> None:
        """Show a message to the log as it crossed the pipe (decoded only if the log keeps it)."""
        self._tap.message("in", message, line.strip())
        if note is not None:
            self._report(f"repaired a message from the agent: {note}", tell=True)

    # -- reading ---------------------------------------------------------------------------

    async def _read_line(self) -> bytes | Unreadable:
        """The next line without its newline (b"" at the end); one over the limit as ``Unreadable``."""
        lines = self._lines
        while not lines.ready:
            data = await self._reader.read(READ_SIZE)
            if not data:
                return lines.end_of_file() or b""
            lines.feed(data)
        return lines.ready.popleft()

    def _parse(self, line: bytes) -> tuple[dict[str, object] | Unreadable | None, str | None]:
        """The line's message (or why it is unreadable, or None: blank or not an object) and what
        had to be repaired in it."""
        line = line.strip()
        if not line:
            return None, None
        items = too_many_items(line)
        if items is not None:
            return Unreadable(line[:HEAD_BYTES], len(line), f"{items:,} values, over the limit of {MAX_ITEMS:,}"), None
        if too_deep(line):
            return Unreadable(line[:HEAD_BYTES], len(line), f"nested deeper than {MAX_DEPTH} levels"), None
        try:
            message, note = loads_fast(line), None
        except (ValueError, RecursionError):
            message, note = loads_careful(line)
        if message is NOT_JSON and note is not None:
            return Unreadable(line[:HEAD_BYTES], len(line), note), None
        if type(message) is not dict:
            self._tap.noise(line.decode("utf-8", "replace"))
            return None, None
        return message, note

    # -- routing -----------------------------------------------------------------------------

    async def _route(self, message: dict[str, object]) -> dict[str, object] | None:
        """The message for the SDK, or None when it was dropped here (and logged)."""
        method = message.get("method")
        if method is None:
            if "id" in message:
                return self._response(message)
            self._ignored("a message without method or id")
        elif "id" in message:
            if type(method) is str:
                return message
            await self._answer_error(message["id"], f"the method must be a string, not {type(method).__name__}")
            self._ignored(f"a request whose method is no string ({method!r:.80})")
        elif type(method) is str and (method.startswith("_") or method in PASSED_NOTIFICATIONS
                                      or self._inbound is None):
            return message  # an extension notification (the client's ext_notification), or one the SDK routes
        elif method == CANCEL_REQUEST and self._withdrawing is not None:
            self._withdrawing.cancel_request(message.get("params"))
        else:
            self._ignored(f"notification {method!r:.80} (acp.nvim does not handle it)", level="debug")
        return None

    def _response(self, message: dict[str, object]) -> dict[str, object] | None:
        msg_id = message["id"]
        if isinstance(msg_id, (int, str)):
            self._unanswered.discard(msg_id)
        if msg_id is not None and type(msg_id) not in (int, float, str):
            self._ignored(f"a response whose id is {type(msg_id).__name__}, not a number or string")
            return None
        error = message.get("error")
        if "result" not in message and error is not None and type(error) is not dict:
            self._report(f"the agent's error response to request {msg_id!r} is not an object: {error!r:.200}")
            return {**message, "error": {"code": -32603, "message": f"malformed error from the agent: {error!r:.200}"}}
        return message

    def _session_update(self, message: dict[str, object], line: bytes, note: str | None) -> None:
        item = streamed(message)
        if item is not None and item[1] and note is None:
            self._tap.streamed(line.strip())  # a text chunk: the log keeps it at level trace only
        else:
            self._tapped(message, line, note)
        if item is None:
            checked = validated(message.get("params"))
            if isinstance(checked, str):
                self._ignored(f"an invalid session/update: {checked}")
                return
            item = checked
        self._add_update(item)

    def _add_update(self, item: Streamed) -> None:
        """Into the batch of updates delivered on the next turn of the loop."""
        batch = self._batch
        if batch is None:
            batch = self._batch = []
            # not in the context of the last request: nothing an update starts serves that request
            quiet = contextvars.copy_context()
            quiet.run(AGENT_REQUEST.set, None)
            asyncio.get_running_loop().call_soon(self._deliver, batch, context=quiet)
        batch.append(item)

    def _deliver(self, batch: list[Streamed]) -> None:
        if self._batch is batch:
            self._batch = None
        assert self._inbound is not None
        try:
            self._inbound.updates(batch)
        except Exception as exc:  # the inbound side reports its own failures; this is a last resort
            self._report(f"internal error while showing updates: {type(exc).__name__}: {exc}", tell=True)

    # -- what cannot go on -----------------------------------------------------------------

    async def _unreadable(self, line: Unreadable) -> dict[str, object] | None:
        """Report a line dropped as unreadable; answer the request it began, or fail our request it
        answered (a response the SDK gets as an error), so nobody waits for it."""
        envelope = ENVELOPE.match(line.head)
        what = ""
        if envelope is not None:
            method = f" {envelope[3].decode()}" if envelope[2] == b"method" and envelope[3] else ""
            what = f" (a {envelope[2].decode()}{method})"
        if line.why is None:
            size, limit = _size(line.size), _size(self._max_line)
            summary = f"dropped a {size} line from the agent{what}: over the limit of {limit} (wire.max_line_bytes)"
            reason = f"message too large for the client ({size}; the limit is {limit})"
            failed = f"the agent's response was too large ({size}; the limit is {limit})"
        else:
            summary = f"dropped a line from the agent{what}: {line.why}"
            reason, failed = f"unreadable message: {line.why}", f"the agent's response was unreadable: {line.why}"
        self._report(summary, line.head.decode("utf-8", "replace"), tell=True)
        if envelope is None:
            return None
        msg_id = json.loads(envelope[1])
        if envelope[2] == b"method":
            await self._answer_error(msg_id, reason)
            return None
        return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32603, "message": failed}}

    async def _answer_error(self, msg_id: object, reason: str) -> None:
        await self.send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": INVALID_REQUEST, "message": reason}})

    def _ignored(self, what: str, level: str = "warn") -> None:
        self._report(f"ignored {what}", level=level)

    def _report(self, summary: str, raw: str | None = None, tell: bool = False, level: str = "warn") -> None:
        if self._inbound is not None:
            self._inbound.dropped(summary, raw, tell, level)

    async def close(self) -> None:
        """Nothing to do: the process context closes the pipes."""


def _request_id(message: dict[str, object]) -> int | str | None:
    """The id of a request the agent sent (None for a response or a notification)."""
    msg_id = message.get("id")
    if "method" not in message or isinstance(msg_id, bool) or not isinstance(msg_id, (int, str)):
        return None
    return msg_id


def _size(count: int) -> str:
    return f"{count / (1 << 20):.1f} MB" if count >= 1 << 20 else f"{count:,} bytes"


class NoiseReporter:
    """Shows the first few lines of a session's stdout that are not JSON-RPC to the user, whatever they
    say: a line that breaks the protocol is news (a login URL, an error, a stray print)."""

    def __init__(self, notify: Callable[[str], None], limit: int = NOISE_NOTICES) -> None:
        self._notify = notify
        self._left = limit

    def __call__(self, line: str) -> None:
        if self._left <= 0 or not line.strip():
            return
        self._left -= 1
        more = "" if self._left else " (further such lines only in :Ai log)"
        self._notify(f"the agent printed: {line[:500]}{more}")
