"""Tests wait one way: tests/helpers.py ``wait_for`` (and its asyncio twin). No fixed sleeps, no
private polling loops or clocks, no wall-clock thresholds (figures belong to ``make bench``)."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
FOLDERS = ("unit", "nvim", "e2e", "real_agents", "security")
FORBIDDEN = {
    "a fixed sleep": re.compile(r"(?:time|asyncio)\.sleep\(|[\"']sleep \d+m?[\"']|\bsleep \d+m\b"),
    "a private clock (poll with wait_for; time with make bench)": re.compile(r"time\.(monotonic|perf_counter|time)\("),
    "a wall-clock threshold": re.compile(r"\belapsed\b\s*[<>]"),
}
ALLOWED = {
    # the scripted model server paces its streamed answers like a real model (not a test wait)
    ("real_agents/sink.py", "a fixed sleep"),
    # the probe agent measures reads for bench/bench_files.py
    ("e2e/files_probe_agent.py", "a private clock (poll with wait_for; time with make bench)"),
}


def test_no_fixed_sleeps_private_polling_or_timing_thresholds():
    found = []
    for folder in FOLDERS:
        for path in sorted((TESTS / folder).rglob("*.py")):
            rel = str(path.relative_to(TESTS))
            if path.name == Path(__file__).name:
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                for what, pattern in FORBIDDEN.items():
                    if pattern.search(line) and (rel, what) not in ALLOWED:
                        found.append(f"tests/{rel}:{number}: {what}: {line.strip()}")
    assert found == [], "\n".join(found)


def test_the_check_sees_a_sleep_and_a_clock():
    assert FORBIDDEN["a fixed sleep"].search("    await asyncio.sleep(0.05)")
    assert FORBIDDEN["a fixed sleep"].search('nvim.command("sleep 20m")')
    assert not FORBIDDEN["a fixed sleep"].search("await async_wait_for(done)")
