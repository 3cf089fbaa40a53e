"""Coalesces render operations and status changes into paced, bounded Lua calls.

One RPC per streamed chunk is 50-100x slower than one per batch, so operations wait here
for one frame (``FLUSH_DELAY``): consecutive appends to one block become one append, and a
newer ``set``/``clip`` of a block replaces the queued one. What comes after a quiet frame goes
at once (on the next turn of the event loop): the first chunk of a reply shows without waiting
a frame. So does the end of a turn (its ``turn_end`` block): nothing more comes to join what is
queued, and twenty turns that end together must not each wait out a frame behind the others.

Neovim reads typed keys only between two events, so no flush may hold its loop for long,
whatever the agent sends (the frame budget, ARCHITECTURE.md):

- a flush carries at most ``FLUSH_BUDGET`` of work as ``cost`` estimates it for Neovim (per
  operation, per line, per byte), scaled by how long the last flushes really took (Neovim says, in
  the barrier's answer): on a slower or busier machine, or in a chat of a million lines, flushes
  carry less. A larger operation is split (an append at any character, a block's lines into its
  first lines and an append of the rest) and the rest waits for the next frame;
- a flush is a notification followed by a request that Neovim answers only once it has
  applied it (``barrier``); the next flush leaves after that answer, and no sooner than a frame
  after the last, so flushes never pile up in Neovim's queue when it is slow.

A session's state goes as the fields that changed since the last one sent (``state_changes``).

Every other Lua call of the editor goes through ``call``: sent at once when nothing is queued,
else in order behind the operations queued before it, which then go without waiting for their
frame (a permission prompt never comes before
the tool call it is about, a dismissal never before what it dismisses). Notifications are written
in the order they are made, so nothing sent before overtakes them. ``drain`` waits until
everything queued so far was sent (a request made after it is answered after all of it).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ...core import tasks
from ...core.render_ops import RenderOp, append, insert, new, set_lines
from .state_changes import SentStates

FLUSH_DELAY = 0.016
"""Seconds between two flushes: one flush (and one redraw) per frame keeps Neovim's share small."""
FLUSH_CODE = "require('acp_nvim.host.ui').flush(...)"
LAST_KINDS = frozenset(("turn_end",))
"""Blocks that end a stream: a ``new`` one flushes what is queued without waiting for the frame."""
REPLACEABLE = frozenset(("set", "clip"))

OP_COST = {"new": 60.0, "append": 8.0, "set": 25.0, "clip": 10.0, "insert": 80.0, "gap": 10.0}
"""Estimated µs of Neovim's time per operation (extmarks, the prompt area, highlights), measured
with lua/acp_nvim/chat/init.lua on this project's bench machine."""
LINE_COST = 0.4
"""Estimated µs per buffer line an operation writes."""
BYTE_COST = 0.03
"""Estimated µs per byte of text (long lines cost the most per byte)."""
FLUSH_BUDGET = 4000.0
"""Estimated µs of Neovim's time one flush may carry: a quarter of a frame, so that a slower
machine (or a busy one) still stays within the frame."""

Post = Callable[..., None]
"""Send a Lua call without waiting (a notification, written at once): ``post(code, *args)``."""
Barrier = Callable[[], Awaitable[object]]
"""A request Neovim answers after everything sent before it (nvim_exec_lua, not a fast call), with
the ms the flushes before it took (or anything else: then the estimates stand)."""
SCALE_BOUNDS = (0.25, 16.0)
"""How far the measured time may scale the estimates (a glitch of the clock must not stall a chat)."""


def cost(op: RenderOp) -> float:
    """Neovim's estimated time (µs) to apply ``op``."""
    if op["op"] == "append":
        text = op["text"]
        return OP_COST["append"] + text.count("\n") * LINE_COST + len(text) * BYTE_COST
    if op["op"] == "new" or op["op"] == "set" or op["op"] == "insert":
        lines = op["lines"]
        return OP_COST[op["op"]] + len(lines) * LINE_COST + sum(map(len, lines)) * BYTE_COST
    return OP_COST[op["op"]]


class _Appends:
    """Consecutive appends to one block, joined once at flush."""

    __slots__ = ("id", "parts")

    def __init__(self, block_id: int, text: str) -> None:
        self.id = block_id
        self.parts = [text]

    def op(self) -> RenderOp:
        if len(self.parts) > 1:
            self.parts = ["".join(self.parts)]
        return append(self.id, self.parts[0])


Queued = RenderOp | _Appends


@dataclass
class _Segment:
    """Operations and state changes queued since the last ordered call, then the calls that follow them."""

    ops: dict[str, deque[Queued]] = field(default_factory=dict)
    changed: set[str] = field(default_factory=set)
    calls: list[tuple[str, tuple[Any, ...]] | asyncio.Future[None]] = field(default_factory=list)

    def empty(self) -> bool:
        return not self.ops and not self.changed


class RenderQueue:
    """Buffers ops per session, session states and ordered calls; flushes them paced and bounded."""

    def __init__(self, post: Post, barrier: Barrier, states: Callable[[str], dict[str, Any]],
                 report: tasks.ErrorReporter | None = None, budget: float = FLUSH_BUDGET) -> None:
        self._post = post
        self._barrier = barrier
        self._states = states
        self._report = report or (lambda message: None)
        self._budget = budget
        self._segments: deque[_Segment] = deque([_Segment()])
        self._sent_states = SentStates()
        self._task: asyncio.Task[None] | None = None
        self._pause: asyncio.Future[None] | None = None
        """The wait for the next frame, while the flushing task waits."""
        self._hurried = False
        """A stream ended: the next flush goes without waiting for its frame."""
        self._last_flush = float("-inf")
        self.scale = 1.0
        """Neovim's real time over the estimate, smoothed over the last flushes."""

    # -- what callers queue -------------------------------------------------------------

    def push(self, key: str, ops: list[RenderOp]) -> None:
        segment = self._open_segment()
        queue = segment.ops.get(key)
        if queue is None:
            queue = segment.ops[key] = deque()
        for op in ops:
            self._add(queue, op)
            if op["op"] == "new" and op["kind"] in LAST_KINDS:
                self._hurried = True
                self._hasten()
        self._wake()

    @staticmethod
    def _add(queue: deque[Queued], op: RenderOp) -> None:
        last = queue[-1] if queue else None
        if op["op"] == "append":
            if isinstance(last, _Appends) and last.id == op["id"]:
                last.parts.append(op["text"])  # joined once, at flush
            else:
                queue.append(_Appends(op["id"], op["text"]))
            return
        if (last is not None and not isinstance(last, _Appends) and last["id"] == op["id"]
                and op["op"] in REPLACEABLE and last["op"] == op["op"]):
            queue[-1] = op
            return
        queue.append(op)

    def changed(self, key: str) -> None:
        self._open_segment().changed.add(key)
        self._wake()

    def call(self, code: str, *args: Any) -> None:
        """Send ``code`` (a Lua chunk, ``...`` bound to ``args``) after everything queued so far:
        now when nothing is, else right after the flush that sends the last of it."""
        if self._unsent():
            self._segments[-1].calls.append((code, args))
            self._hasten()
            self._wake()
            return
        self._post(code, *args)

    async def drain(self) -> None:
        """Return once everything queued so far was sent to Neovim."""
        if not self._unsent():
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._segments[-1].calls.append(done)
        self._hasten()
        self._wake()
        await done

    def _unsent(self) -> bool:
        return not all(s.empty() and not s.calls for s in self._segments)

    def discard(self, key: str) -> None:
        """Forget the operations queued for ``key`` (its chat is gone)."""
        for segment in self._segments:
            segment.ops.pop(key, None)

    @property
    def idle(self) -> bool:
        """Nothing queued and nothing in flight."""
        return self._task is None and not self._unsent()

    def _open_segment(self) -> _Segment:
        """The segment new operations join: a new one once the last has calls (they come after)."""
        last = self._segments[-1]
        if last.calls:
            last = _Segment()
            self._segments.append(last)
        return last

    # -- flushing ---------------------------------------------------------------------------

    def _wake(self) -> None:
        if self._task is None:
            self._task = tasks.spawn(self._run(), self._report, "chat rendering")

    def _hasten(self) -> None:
        """What is queued became urgent: end the wait for the frame (not the wait for Neovim)."""
        if self._pause is not None:
            _settle(self._pause)

    async def _wait_for_frame(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        self._pause = pause = loop.create_future()
        timer = loop.call_later(seconds, _settle, pause)
        try:
            await pause
        finally:
            timer.cancel()
            self._pause = None

    async def _run(self) -> None:
        try:
            await asyncio.sleep(0)  # what is pushed in the same turn of the loop goes together
            while not self._drained():
                wait = self._last_flush + FLUSH_DELAY - time.monotonic()
                if wait > 0 and not self._urgent():
                    await self._wait_for_frame(wait)
                await self._flush_once()
        finally:
            self._task = None  # in the same step as the last check: what comes next starts a new run

    async def _flush_once(self) -> None:
        """One frame's flush: segment after segment while the budget lasts, each segment's calls
        right after its operations; then wait until Neovim has applied it all."""
        budget = self._budget / self.scale
        estimated, flushed = 0.0, False
        self._hurried = False
        try:
            while budget > 0:
                ops, states, calls, left = self._take(budget)
                estimated += budget - left
                budget = left
                if ops or states:
                    flushed = True
                    self._post(FLUSH_CODE, ops, states)
                for item in calls:
                    if isinstance(item, asyncio.Future):
                        if not item.done():
                            item.set_result(None)
                    else:
                        self._post(item[0], *item[1])
                if not self._next_segment():
                    break
            if flushed:
                self._last_flush = time.monotonic()
                self._learn(await self._barrier(), estimated)
        except Exception as exc:  # one failed flush must not stop the chats
            self._sent_states = SentStates()  # Lua may lack what it carried: the next states go whole
            self._report(f"chat rendering failed: {type(exc).__name__}: {exc}")

    def _learn(self, took_ms: object, estimated_us: float) -> None:
        """Scale the estimates by what the flush really took (a large enough one: a small one's
        time is mostly noise): quickly to a slower flush, gradually to quicker ones."""
        if isinstance(took_ms, bool) or not isinstance(took_ms, int | float) or estimated_us < self._budget / 8:
            return
        ratio = took_ms * 1000 / estimated_us
        low, high = SCALE_BOUNDS
        # up quickly (to a slower flush's ratio, at most doubling), down as an average: in a chat
        # of a million lines one flush in ten cost 3x the others, and an average alone let each
        # of those take a frame; all at once, one stalled flush would throttle a flood for a second
        average = 0.7 * self.scale + 0.3 * ratio
        self.scale = min(high, max(low, average, min(ratio, 2 * self.scale)))

    def _urgent(self) -> bool:
        """A stream ended, or a call waits (a prompt, a message): what is queued before it goes now,
        not a frame later (still one budget at a time, each after Neovim applied the last)."""
        return self._hurried or any(segment.calls for segment in self._segments)

    def _next_segment(self) -> bool:
        """Drop the first segment once it is sent; whether another one waits."""
        segments = self._segments
        if len(segments) > 1 and segments[0].empty() and not segments[0].calls:
            segments.popleft()
            return True
        return False

    def _drained(self) -> bool:
        segments = self._segments
        while len(segments) > 1 and segments[0].empty() and not segments[0].calls:
            segments.popleft()
        return segments[0].empty() and not segments[0].calls and len(segments) == 1

    def _take(self, budget: float) -> tuple[dict[str, list[RenderOp]], dict[str, Any], list[Any], float]:
        """What the first segment sends now: its operations up to ``budget`` (its states with them),
        its calls once every operation before them is taken, and the budget left."""
        segment = self._segments[0]
        ops: dict[str, list[RenderOp]] = {}
        first = True
        for key in list(segment.ops):
            queue = segment.ops[key]
            taken: list[RenderOp] = []
            while queue and budget > 0:
                head = queue[0]
                op = head.op() if isinstance(head, _Appends) else head
                price = cost(op)
                if price <= budget:
                    queue.popleft()
                    taken.append(op)
                    budget -= price
                    first = False
                    continue
                part, rest = split(op, budget, force=first)
                if part is not None and rest is not None:
                    taken.append(part)
                    queue[0] = rest
                elif first:  # too large and cannot be split: it goes alone
                    queue.popleft()
                    taken.append(op)
                budget = 0
            if taken:
                ops[key] = taken
            if not queue:
                del segment.ops[key]
            if budget <= 0:
                break
        states: dict[str, Any] = {}
        if not segment.ops:  # the states describe the session after its operations
            for key in segment.changed:
                changes = self._sent_states.changes(key, self._states(key))
                if changes is not None:
                    states[key] = changes
            segment.changed = set()
        calls: list[Any] = []
        if segment.empty():
            calls, segment.calls = segment.calls, []
        return ops, states, calls, budget


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def split(op: RenderOp, budget: float, force: bool = False) -> tuple[RenderOp | None, RenderOp | None]:
    """``op`` as two operations that apply one after the other, the first fitting ``budget`` (µs);
    (None, None) when nothing fits. ``force``: the first takes at least one line or some text."""
    if op["op"] == "append":
        text = op["text"]
        size = _fitting_chars(text, budget - OP_COST["append"])
        if force and size <= 0:
            size = min(len(text), 256)
        if size <= 0 or size >= len(text):
            return None, None
        return append(op["id"], text[:size]), append(op["id"], text[size:])
    if op["op"] == "new" or op["op"] == "set" or op["op"] == "insert":
        lines = op["lines"]
        count, room = 0, budget - OP_COST[op["op"]]
        while count < len(lines) - 1:
            room -= LINE_COST + len(lines[count]) * BYTE_COST
            if room < 0:
                break
            count += 1
        if count == 0 and force and len(lines) > 1:
            count = 1
        if count == 0:
            return None, None
        head: RenderOp
        if op["op"] == "new":
            head = new(op["id"], op["kind"], lines[:count], op["meta"])
        elif op["op"] == "insert":
            head = insert(op["id"], op["kind"], lines[:count], op["meta"], op["before"])
        else:
            head = set_lines(op["id"], lines[:count], op["meta"])
        return head, append(op["id"], "\n" + "\n".join(lines[count:]))
    return None, None


def _fitting_chars(text: str, budget: float) -> int:
    """How many leading characters of ``text`` fit ``budget`` µs (newlines priced as lines)."""
    size = min(len(text), int(budget / BYTE_COST))
    while size > 0 and text.count("\n", 0, size) * LINE_COST + size * BYTE_COST > budget:
        size //= 2
    return size
