"""Shrinks a failing batch to a small payload that still produces the same finding.

First the batch: one payload at a time, then ever smaller halves. Then the payload itself, if it
is JSON: greedily drop object keys and list items, empty strings and replace values with ``null``,
keeping each change that still reproduces. ``budget`` bounds the runs (each one is a real replay).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from .payloads import Payload, encode

Reproduces = Callable[[list[Payload]], bool]


def minimize(batch: list[Payload], reproduces: Reproduces, budget: int = 30) -> list[Payload]:
    runs = _Budget(budget)
    smaller = _shrink_batch(batch, reproduces, runs)
    if len(smaller) == 1:
        smaller = [_shrink_payload(smaller[0], reproduces, runs)]
    return smaller


class _Budget:
    def __init__(self, runs: int) -> None:
        self.left = runs

    def spend(self) -> bool:
        self.left -= 1
        return self.left >= 0


def _shrink_batch(batch: list[Payload], reproduces: Reproduces, runs: _Budget) -> list[Payload]:
    for payload in sorted(batch, key=lambda p: len(p.line)):
        if len(batch) > 1 and runs.spend() and reproduces([payload]):
            return [payload]
    while len(batch) > 1:
        half = len(batch) // 2
        for part in (batch[:half], batch[half:]):
            if runs.spend() and reproduces(part):
                batch = part
                break
        else:
            return batch
    return batch


def _shrink_payload(payload: Payload, reproduces: Reproduces, runs: _Budget) -> Payload:
    try:
        value = json.loads(payload.line)
    except (ValueError, RecursionError):
        return payload
    changed = True
    while changed and runs.left > 0:
        changed = False
        for candidate in _simpler(value):
            trial = Payload(encode(candidate), payload.request, payload.kind)
            if len(trial.line) < len(payload.line) and runs.spend() and reproduces([trial]):
                value, payload, changed = candidate, trial, True
                break
    return payload


FRAMING = ("jsonrpc", "method", "id")
"""Top-level keys left alone: without them the line is another kind of message."""


def _simpler(value: Any, top: bool = True) -> Iterator[Any]:
    """Values one step simpler than ``value`` (biggest cuts first); placeholders stay whole."""
    if isinstance(value, dict):
        keys = [key for key in value if not (top and key in FRAMING)]
        for key in sorted(keys, key=lambda k: -len(encode(value[k]))):
            yield {k: v for k, v in value.items() if k != key}
        for key in keys:
            for simpler in _simpler(value[key], top=False):
                yield {**value, key: simpler}
    elif isinstance(value, list):
        for index in range(len(value)):
            yield value[:index] + value[index + 1:]
        for index, item in enumerate(value):
            for simpler in _simpler(item, top=False):
                yield [*value[:index], simpler, *value[index + 1:]]
    elif isinstance(value, str) and len(value) > 1 and "@" not in value:
        yield value[: len(value) // 2]
        yield ""
