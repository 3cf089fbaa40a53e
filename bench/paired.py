"""Paired rounds: the one way ``make bench`` compares configurations on a shared, noisy machine.

Every round measures each configuration once, back to back, and the order rotates from round
to round, so no configuration always goes first or always follows the same neighbour. A
comparison is the median over rounds of the per-round ratio (or difference) of two
configurations measured in the same round: a slow drift of the machine (another process's
test run) hits both sides of a pair and cancels. Each comparison is printed beside an A/A
control — the same configuration measured twice under two names, compared the same way —
which shows this run's own noise: a cost smaller than the control's distance from 1 (or 0)
is not a cost this run can see.

``ACP_BENCH_ROUNDS`` (default 7) sets the number of rounds.
"""

from __future__ import annotations

import os
import statistics
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

ROUNDS = max(1, int(os.environ.get("ACP_BENCH_ROUNDS", "7")))

Measure = Callable[[str], Mapping[str, float]]
"""Measures one configuration once: its figures by metric name."""


def rotation(configs: Sequence[str], round_index: int) -> list[str]:
    """The order of ``configs`` in round ``round_index``: rotated by one each round."""
    shift = round_index % len(configs)
    return [*configs[shift:], *configs[:shift]]


@dataclass
class Rounds:
    """Per-round figures of every configuration: ``values[config][metric][round]``."""

    configs: list[str]
    values: dict[str, dict[str, list[float]]] = field(default_factory=dict)

    @property
    def count(self) -> int:
        """How many rounds were measured."""
        first = next(iter(self.values.values()), {})
        return len(next(iter(first.values()), []))

    def series(self, config: str, metric: str) -> list[float]:
        """``metric`` of ``config``, one value per round."""
        return self.values[config][metric]

    def median(self, config: str, metric: str) -> float:
        """The median round of ``config``'s ``metric``."""
        return statistics.median(self.series(config, metric))

    def ratios(self, metric: str, name: str, base: str) -> list[float]:
        """Per round: ``name``'s ``metric`` divided by ``base``'s in the same round."""
        return [n / b for n, b in zip(self.series(name, metric), self.series(base, metric), strict=True)]

    def ratio(self, metric: str, name: str, base: str) -> float:
        """The median of the per-round ratios ``name`` / ``base``."""
        return statistics.median(self.ratios(metric, name, base))

    def differences(self, metric: str, name: str, base: str) -> list[float]:
        """Per round: ``name``'s ``metric`` minus ``base``'s in the same round."""
        return [n - b for n, b in zip(self.series(name, metric), self.series(base, metric), strict=True)]

    def difference(self, metric: str, name: str, base: str) -> float:
        """The median of the per-round differences ``name`` - ``base``."""
        return statistics.median(self.differences(metric, name, base))

    def add(self, config: str, figures: Mapping[str, float]) -> None:
        """Record one measurement of ``config``."""
        per_metric = self.values.setdefault(config, {})
        for metric, value in figures.items():
            per_metric.setdefault(metric, []).append(value)


def run_rounds(label: str, configs: Sequence[str], measure: Measure, rounds: int = ROUNDS,
               quiet: bool = False) -> Rounds:
    """Measure every configuration once per round, in a rotating order; progress goes to stderr."""
    if len(set(configs)) != len(configs):
        raise ValueError(f"configuration names must differ (an A/A control gets a second name): {configs}")
    result = Rounds(list(configs))
    for round_index in range(rounds):
        for config in rotation(configs, round_index):
            figures = measure(config)
            result.add(config, figures)
            if not quiet:
                shown = ", ".join(f"{metric} {value:.4g}" for metric, value in figures.items())
                print(f"  {label} round {round_index + 1}/{rounds} {config}: {shown}", file=sys.stderr, flush=True)
    return result


def spread(values: Sequence[float]) -> str:
    """``min..max`` of per-round values, for a unit column."""
    return f"{min(values):.3g}..{max(values):.3g}"
