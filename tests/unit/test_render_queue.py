"""The render queue (nvim/chat/render_queue.py): coalescing, pacing, the flush budget, ordered calls."""

from __future__ import annotations

import asyncio

import pytest

from acp_nvim.core import render_ops
from acp_nvim.nvim.chat.render_queue import FLUSH_BUDGET, FLUSH_CODE, RenderQueue, cost, split
from acp_nvim.nvim.chat.state_changes import PARTIAL, SentStates
from helpers import async_wait_for

pytestmark = pytest.mark.timeout(30)


class Neovim:
    """Records flushes and calls in the order Neovim would see them; ``hold`` keeps a flush in flight
    (its barrier unanswered)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, object]] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.hold: asyncio.Event | None = None
        self.took: float | None = None
        """What the barrier answers: the ms the flushes took (None: no figure)."""

    def post(self, code: str, *args: object) -> None:
        if code == FLUSH_CODE:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            self.seen.append(("flush", args))
        else:
            self.seen.append(("call", (code, args)))

    async def barrier(self) -> float | None:
        if self.hold is not None:
            await self.hold.wait()
        self.in_flight -= 1
        return self.took

    @property
    def flushes(self) -> list:
        return [payload for kind, payload in self.seen if kind == "flush"]

    def ops(self, key: str = "s") -> list:
        return [op for ops, _ in self.flushes for op in ops.get(key, [])]


def queue_for(neovim: Neovim, states=lambda key: {"k": key}, **kwargs) -> RenderQueue:
    return RenderQueue(neovim.post, neovim.barrier, states, **kwargs)


async def test_coalesces_appends_and_replaces_sets():
    neovim = Neovim()
    queue = queue_for(neovim)
    queue.push("s", [render_ops.new(1, "agent", ["a"])])
    for chunk in ("b", "c", "d"):
        queue.push("s", [render_ops.append(1, chunk)])
    queue.push("s", [render_ops.set_lines(2, ["x"])])
    queue.push("s", [render_ops.set_lines(2, ["y"])])
    queue.changed("s")
    await async_wait_for(lambda: neovim.flushes)
    assert neovim.flushes == [({"s": [{"op": "new", "id": 1, "kind": "agent", "lines": ["a"], "meta": None},
                                      {"op": "append", "id": 1, "text": "bcd"},
                                      {"op": "set", "id": 2, "lines": ["y"], "meta": None}]},
                               {"s": {"k": "s"}})]


async def test_the_first_op_after_a_quiet_frame_goes_at_once_and_then_once_a_frame():
    neovim = Neovim()
    queue = queue_for(neovim)
    queue.push("s", [render_ops.new(1, "agent", ["a"])])
    await async_wait_for(lambda: neovim.flushes)
    assert neovim.flushes == [({"s": [{"op": "new", "id": 1, "kind": "agent", "lines": ["a"], "meta": None}]}, {})]
    queue.push("s", [render_ops.append(1, "b")])
    queue.push("s", [render_ops.append(1, "c")])
    await async_wait_for(lambda: len(neovim.flushes) == 2)
    assert neovim.flushes[1] == ({"s": [{"op": "append", "id": 1, "text": "bc"}]}, {})


async def test_one_flush_in_flight_and_what_comes_meanwhile_waits_for_it():
    neovim = Neovim()
    neovim.hold = asyncio.Event()
    queue = queue_for(neovim)
    queue.push("s", [render_ops.new(1, "agent", ["a"])])
    await async_wait_for(lambda: neovim.in_flight == 1)
    for chunk in "bcdef":
        queue.push("s", [render_ops.append(1, chunk)])
    assert neovim.in_flight == 1 and len(neovim.flushes) == 1
    neovim.hold.set()
    await async_wait_for(lambda: len(neovim.flushes) == 2)
    assert neovim.most_in_flight == 1, "nothing more is sent while Neovim applies a flush"
    assert neovim.flushes[1][0] == {"s": [{"op": "append", "id": 1, "text": "bcdef"}]}


async def test_a_flush_carries_at_most_its_budget_and_the_rest_follows_in_order():
    neovim = Neovim()
    queue = queue_for(neovim, budget=FLUSH_BUDGET)
    lines = [f"line {n:05d} " + "x" * 60 for n in range(20_000)]
    queue.push("s", [render_ops.new(1, "agent", lines)])
    queue.push("s", [render_ops.append(1, "\n" + "y" * 300_000)])
    queue.push("s", [render_ops.new(2, "tool", ["done"])])
    await async_wait_for(lambda: any(op["id"] == 2 for op in neovim.ops()), what="the last op")
    assert len(neovim.flushes) > 5
    for ops, _ in neovim.flushes:
        assert sum(cost(op) for op in ops["s"]) <= FLUSH_BUDGET
    sent = neovim.ops()
    assert sent[0]["op"] == "new" and sent[0]["id"] == 1 and sent[-1]["id"] == 2
    text = "\n".join(sent[0]["lines"]) + "".join(op["text"] for op in sent[1:-1])
    assert text == "\n".join(lines) + "\n" + "y" * 300_000, "the pieces add up to what was queued, in order"


async def test_an_op_that_cannot_be_split_still_goes_alone():
    neovim = Neovim()
    queue = queue_for(neovim, budget=10.0)
    queue.push("s", [render_ops.new(1, "agent", ["a"]), render_ops.clip(1, "… more"), render_ops.new(2, "tool", ["t"])])
    await async_wait_for(lambda: len(neovim.ops()) == 3)
    assert [len(ops["s"]) for ops, _ in neovim.flushes] == [1, 1, 1]


def test_split_pieces_apply_to_the_same_text():
    op = render_ops.set_lines(3, ["a" * 100] * 50, {"status": "completed"})
    head, rest = split(op, 300.0)
    assert head is not None and rest is not None
    assert head["op"] == "set" and head["meta"] == {"status": "completed"} and rest["op"] == "append"
    assert "\n".join(head["lines"]) + rest["text"] == "\n".join(op["lines"])
    assert cost(head) <= 300.0
    assert split(render_ops.append(1, "abc"), 1.0) == (None, None)
    forced = split(render_ops.append(1, "x" * 10_000), 1.0, force=True)
    assert forced[0] is not None and forced[1] is not None


async def test_calls_come_after_what_was_queued_before_them_and_before_what_follows():
    neovim = Neovim()
    queue = queue_for(neovim, budget=500.0)
    queue.push("s", [render_ops.new(1, "agent", ["x" * 200] * 200)])
    queue.call("require('acp_nvim.question.permission').ask(...)", 7)
    queue.push("s", [render_ops.new(2, "notice", ["after"])])
    await async_wait_for(lambda: any(op["id"] == 2 for op in neovim.ops()))
    kinds = [kind for kind, _ in neovim.seen]
    call_at = kinds.index("call")
    before = [op for kind, payload in neovim.seen[:call_at] if kind == "flush" for op in payload[0]["s"]]
    after = [op for kind, payload in neovim.seen[call_at:] if kind == "flush" for op in payload[0]["s"]]
    assert {op["id"] for op in before} == {1} and {op["id"] for op in after} == {2}
    assert kinds.count("flush") > 3, "the large block went in several flushes before the call"


async def test_a_call_with_nothing_queued_goes_at_once_and_drain_returns_at_once():
    neovim = Neovim()
    queue = queue_for(neovim)
    queue.call("vim.notify(...)", "hello")
    assert neovim.seen == [("call", ("vim.notify(...)", ("hello",)))]
    await queue.drain()
    assert queue.idle


async def test_drain_returns_once_everything_before_it_was_sent():
    neovim = Neovim()
    queue = queue_for(neovim, budget=500.0)
    queue.push("s", [render_ops.new(1, "agent", ["x" * 200] * 100)])
    await queue.drain()
    text = "\n".join(neovim.ops()[0]["lines"]) + "".join(op["text"] for op in neovim.ops()[1:])
    assert text == "\n".join(["x" * 200] * 100)
    await async_wait_for(lambda: queue.idle)


async def test_a_failed_flush_is_reported_and_the_next_ones_still_go():
    reports: list[str] = []
    sent: list = []

    def post(code: str, ops: dict, states: dict) -> None:
        sent.append(ops)

    async def barrier() -> None:
        if len(sent) == 1:
            raise RuntimeError("Lua error")

    queue = RenderQueue(post, barrier, lambda key: {}, report=reports.append)
    queue.push("s", [render_ops.new(1, "agent", ["a"])])
    await async_wait_for(lambda: reports)
    queue.push("s", [render_ops.new(2, "agent", ["b"])])
    await async_wait_for(lambda: len(sent) == 2)
    assert "Lua error" in reports[0]


async def test_discard_forgets_a_gone_chats_ops():
    neovim = Neovim()
    neovim.hold = asyncio.Event()
    queue = queue_for(neovim)
    queue.push("s", [render_ops.new(1, "agent", ["a"])])
    await async_wait_for(lambda: neovim.in_flight == 1)
    queue.push("s", [render_ops.append(1, "b")])
    queue.push("t", [render_ops.new(5, "agent", ["t"])])
    queue.discard("s")
    neovim.hold.set()
    await async_wait_for(lambda: len(neovim.flushes) == 2)
    assert neovim.flushes[1][0] == {"t": [{"op": "new", "id": 5, "kind": "agent", "lines": ["t"], "meta": None}]}


@pytest.fixture
def long_frames(monkeypatch):
    """A frame longer than a test may wait: what goes before its end was made urgent."""
    from acp_nvim.nvim.chat import render_queue

    monkeypatch.setattr(render_queue, "FLUSH_DELAY", 600.0)


async def flushed_once(neovim: Neovim) -> RenderQueue:
    """A queue that has sent its first flush (block 1), so that the next one waits for its frame."""
    queue = queue_for(neovim)
    queue.push("s", [render_ops.new(1, "agent", ["a"])])
    await async_wait_for(lambda: neovim.flushes)
    return queue


async def waiting_for_its_frame(neovim: Neovim) -> RenderQueue:
    """A queue that has flushed once and holds an append ("b") until its next frame."""
    queue = await flushed_once(neovim)
    queue.push("s", [render_ops.append(1, "b")])
    await async_wait_for(lambda: queue._pause is not None, what="the queue waiting for its frame")
    return queue


@pytest.mark.usefixtures("long_frames")
async def test_a_call_pulls_what_is_queued_before_it_without_waiting_for_the_frame():
    neovim = Neovim()
    queue = await flushed_once(neovim)
    queue.push("s", [render_ops.new(2, "notice", ["refused"])])
    queue.call("vim.notify(...)", "refused")
    queue.push("s", [render_ops.new(3, "notice", ["after"])])
    queue.call("vim.notify(...)", "after")
    await async_wait_for(lambda: len(neovim.seen) == 5, what="everything, in one frame")
    assert [kind for kind, _ in neovim.seen] == ["flush", "flush", "call", "flush", "call"]
    assert [op["id"] for op in neovim.ops()] == [1, 2, 3]


@pytest.mark.usefixtures("long_frames")
async def test_a_turns_end_goes_without_waiting_for_the_frame():
    neovim = Neovim()
    queue = await waiting_for_its_frame(neovim)
    queue.push("s", [render_ops.append(1, "c"), render_ops.new(2, "turn_end", ["── turn ended ──"])])
    await async_wait_for(lambda: len(neovim.flushes) == 2, what="the turn's end, before the frame")
    assert neovim.flushes[1][0] == {"s": [{"op": "append", "id": 1, "text": "bc"},
                                          {"op": "new", "id": 2, "kind": "turn_end", "lines": ["── turn ended ──"],
                                           "meta": None}]}
    queue.push("s", [render_ops.append(1, "d")])
    await async_wait_for(lambda: queue._pause is not None, what="the next frame waited for again")
    assert len(neovim.flushes) == 2


@pytest.mark.usefixtures("long_frames")
async def test_a_call_made_while_the_queue_waits_for_its_frame_cuts_the_wait_short():
    neovim = Neovim()
    queue = await waiting_for_its_frame(neovim)
    queue.call("vim.notify(...)", "allow?")
    await async_wait_for(lambda: len(neovim.seen) == 3, what="the append, then the call")
    assert [kind for kind, _ in neovim.seen] == ["flush", "flush", "call"]


async def test_flushes_that_take_longer_than_estimated_carry_less_and_quicker_ones_more():
    lines = [f"line {n:05d} " + "x" * 60 for n in range(40_000)]
    sizes = {}
    for took in (40.0, 4.0, 0.5):  # ms per flush of a full budget: 10x, 1x and 1/8 of the estimate
        neovim = Neovim()
        neovim.took = took
        queue = queue_for(neovim)
        queue.push("s", [render_ops.new(1, "agent", lines)])
        await queue.drain()
        await async_wait_for(lambda q=queue: q.idle)
        sizes[took] = len(neovim.flushes)
        assert 0.25 <= queue.scale <= 16
    assert sizes[40.0] > 2 * sizes[4.0] > 2 * sizes[0.5], sizes


async def test_a_state_goes_whole_once_then_as_its_changed_fields():
    neovim = Neovim()
    state = {"state": "running", "turns": 0, "commands": ["plan", "read"]}
    queue = queue_for(neovim, states=lambda key: dict(state))
    queue.changed("s")
    await async_wait_for(lambda: len(neovim.flushes) == 1)
    state["turns"] = 1
    queue.changed("s")
    await async_wait_for(lambda: len(neovim.flushes) == 2)
    queue.changed("s")  # nothing changed: nothing to send
    queue.push("s", [render_ops.new(1, "agent", ["a"])])
    await async_wait_for(lambda: len(neovim.flushes) == 3)
    assert [states for _, states in neovim.flushes] == [
        {"s": {"state": "running", "turns": 0, "commands": ["plan", "read"]}},
        {"s": {"turns": 1, "partial": True}},
        {},
    ]


def test_sent_states_go_whole_when_closed_or_reshaped():
    sent = SentStates()
    assert sent.changes("s", {"a": 1, "b": 2}) == {"a": 1, "b": 2}
    assert sent.changes("s", {"a": 1, "b": 3}) == {"b": 3, PARTIAL: True}
    assert sent.changes("s", {"a": 1, "b": 3}) is None
    assert sent.changes("s", {"a": 1, "b": 3, "c": 4}) == {"a": 1, "b": 3, "c": 4}, "a new field: whole"
    assert sent.changes("s", {"closed": True}) == {"closed": True}
    assert sent.changes("s", {"a": 1, "b": 3, "c": 4}) == {"a": 1, "b": 3, "c": 4}, "after closed: whole"
    assert sent.changes("t", {"a": 1}) == {"a": 1}, "per session"


async def test_after_a_failed_flush_states_go_whole_again():
    neovim = Neovim()
    state = {"state": "running", "turns": 0}
    reports: list[str] = []
    failing = [False]

    def post(code: str, *args: object) -> None:
        if failing[0]:
            failing[0] = False
            raise OSError("broken pipe")
        neovim.post(code, *args)

    queue = RenderQueue(post, neovim.barrier, lambda key: dict(state), reports.append)
    queue.changed("s")
    await async_wait_for(lambda: len(neovim.flushes) == 1)
    failing[0], state["turns"] = True, 1
    queue.changed("s")
    await async_wait_for(lambda: reports)
    state["turns"] = 2
    queue.changed("s")
    await async_wait_for(lambda: len(neovim.flushes) == 2)
    assert neovim.flushes[1][1] == {"s": {"state": "running", "turns": 2}}
