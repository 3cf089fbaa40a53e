"""``python -m fuzz [--cases N] [--seed S]`` (``make fuzz``): at least N generated payloads (default
10,000) through the real host and renderer, then each distinct finding shrunk to a small payload.

Prints ``fuzz_cases: N``, one line per distinct finding (``known`` ones with the reason, from
``findings.KNOWN``; ``NEW`` ones) with a minimal payload, and ``fuzz_findings: …``. Exits 1 when a
finding is new.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from . import payloads
from .findings import CAUSES, Finding, classify
from .harness import Fuzzer
from .minimize import minimize
from .payloads import Payload

CLASSES: dict[str, tuple[st.SearchStrategy[Payload], float]] = {
    "valid session/update": (payloads.valid_updates(), 0.21),
    "valid request_permission": (payloads.valid_permissions(), 0.10),
    "valid fs/*": (payloads.valid_fs(), 0.10),
    "invalid session/update": (payloads.invalid_updates(), 0.20),
    "invalid request_permission": (payloads.invalid_permissions(), 0.10),
    "invalid fs/*": (payloads.invalid_fs(), 0.10),
    "raw lines": (payloads.raw_lines(), 0.10),
    "deep nesting": (payloads.deep_lines(), 0.03),
    "lone surrogates": (payloads.surrogate_updates(), 0.03),
    "invalid UTF-8": (payloads.bad_utf8_requests(), 0.03),
}
MEAN_BATCH = 4.5


@dataclass
class Seen:
    finding: Finding
    reason: str | None
    batch: list[Payload]
    hits: int = 0
    classes: set[str] = field(default_factory=set)


def explore(fuzzer: Fuzzer, name: str, strategy: st.SearchStrategy[Payload], cases: int,
            seen: dict[str, Seen], rng_seed: int) -> None:
    @seed(rng_seed)
    @settings(max_examples=max(1, math.ceil(cases / MEAN_BATCH)), deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(payloads.batches(strategy))
    def one(batch: list[Payload]) -> None:
        for finding, reason in classify(fuzzer.run(batch)):
            key = f"{finding.signature} [{reason}]" if finding.kind not in CAUSES else finding.signature
            entry = seen.setdefault(key, Seen(finding, reason, batch))
            entry.hits += 1
            entry.classes.add(name)

    one()


def shrink(fuzzer: Fuzzer, entry: Seen) -> list[Payload] | None:
    """A small batch reproducing the finding on a fresh Neovim (None: it needs earlier batches' state)."""
    signature = entry.finding.signature

    def reproduces(batch: list[Payload]) -> bool:
        return signature in {f.signature for f in fuzzer.run(batch, fresh=True)}

    if not reproduces(entry.batch):
        return None
    return minimize(entry.batch, reproduces)


def report(seen: dict[str, Seen], fuzzer: Fuzzer) -> int:
    new = 0
    for entry in sorted(seen.values(), key=lambda e: (e.reason is not None, e.finding.kind)):
        new += entry.reason is None
        print(f"{'known' if entry.reason else 'NEW'} {entry.finding.kind}: {entry.finding.signature} "
              f"(hits {entry.hits}; in {', '.join(sorted(entry.classes))})")
        known = entry.finding.known()
        if entry.reason:
            print(f"    why: {entry.reason}")
        if known is not None:
            print(f"    reproducer: tests/fuzz/test_fuzz.py::{known.test} (strict xfail)")
        smallest = shrink(fuzzer, entry) if entry.reason is None else []
        if smallest is None:
            print("    not reproduced alone on a fresh Neovim (earlier batches set the stage); the batch:")
            smallest = entry.batch
        for payload in smallest:
            print(f"    payload ({payload.kind}): {payload.show(400)}")
        detail = entry.finding.detail.strip().splitlines()
        if detail:
            print(f"    detail: {' | '.join(detail[-3:])[:400]}")
    print(f"fuzz_findings: {len(seen)} distinct ({len(seen) - new} known, {new} new)")
    return 1 if new else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--only", help="only the payload classes whose names hold this text (e.g. 'invalid')")
    args = parser.parse_args(argv)
    fuzzer = Fuzzer()
    seen: dict[str, Seen] = {}
    started = time.monotonic()
    try:
        for name, (strategy, share) in CLASSES.items():
            if args.only and args.only not in name:
                continue
            before = fuzzer.cases
            explore(fuzzer, name, strategy, math.ceil(args.cases * share), seen, args.seed)
            print(f"# {name}: {fuzzer.cases - before} cases", flush=True)
        while fuzzer.cases < args.cases and not args.only:  # batches came out smaller than average: top up
            explore(fuzzer, "valid session/update", CLASSES["valid session/update"][0],
                    args.cases - fuzzer.cases, seen, args.seed + fuzzer.cases)
        print(f"fuzz_cases: {fuzzer.cases} (seed {args.seed}, {time.monotonic() - started:.0f} s)", flush=True)
        return report(seen, fuzzer)
    finally:
        fuzzer.close()


if __name__ == "__main__":
    sys.exit(main())
