"""Runs one case in a fresh Neovim and turns what happened into its verdict line."""

from __future__ import annotations

import json
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from .cases import Case
from .context import START_WITHIN, Ctx
from .diary import kill
from .driver import Environment, editor, wait_until
from .probes import Probes

STALL_LIMIT_MS = 50.0


@dataclass
class Result:
    name: str
    stall_ms: float
    told: bool
    usable: bool
    orphans: int
    lost: int
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return (self.told and self.usable and self.stall_ms <= STALL_LIMIT_MS and not self.orphans
                and not self.lost and not self.failures)

    def line(self) -> str:
        return (f"fault_{self.name}: {'pass' if self.passed else 'fail'} stall_ms={self.stall_ms:.0f} "
                f"usable={'yes' if self.usable else 'no'} orphans={self.orphans} lost={self.lost}")

    def details(self) -> list[str]:
        return [f"    - {text}" for text in self.failures] + [f"    · {text}" for text in self.notes]


def run(env: Environment, case: Case) -> Result:
    """Run ``case`` in its own Neovim, with the probes on from before the first ``:Ai``."""
    started = time.monotonic()
    agent = {**case.spec, "env": {"FAULT_CONFIG": json.dumps(case.config)}}
    with editor(env, case.name, agent, case.host_file_limit) as ed:
        if case.prepare is not None:
            case.prepare(ed)
        probes = Probes(ed.address)
        ctx = Ctx(ed, probes)
        try:
            _play(ctx, case)
        except Exception as exc:
            ctx.fail(f"harness: {type(exc).__name__}: {exc}")
            ctx.note(traceback.format_exc(limit=4).replace("\n", " | "))
        finally:
            probes.stop()
            leftover = ctx.diary.pids()
            kill(leftover)  # whatever is left once the verdict is in (counted before, if it should not be)
        _host_log_notes(ctx, ed.dir)
    return _result(case, ctx, probes, time.monotonic() - started)


def _play(ctx: Ctx, case: Case) -> None:
    case.body(ctx)
    if not ctx.ed.alive:  # the body ended with :qa!
        return
    ctx.flagged_errors()
    if ctx.book.usable is None:
        ctx.usable()
    ctx.count_lost()
    if case.lifecycle:
        lifecycle(ctx)
    else:
        ctx.quit_and_check()


def lifecycle(ctx: Ctx) -> None:
    """Agents end when they should: ``:Ai restart`` (the old process), ``:Ai new`` then ``:Ai close``
    (that session's process), and ``:qa!`` (every process)."""
    ed = ctx.ed
    if "fault/1" in ed.session_keys():
        old, since = ctx.diary.pids(), time.time()
        ctx.chat_command("Ai restart")
        ctx.expect_gone(old, ":Ai restart")
        started = ctx.diary.wait("start", START_WITHIN, lambda e: e["t"] >= since)
        if not (started and ed.wait_state(("idle",), START_WITHIN)):
            ctx.note(f"after :Ai restart the session is {ed.session().get('state')!r}")
    before, since = set(ed.session_keys()), time.time()
    ctx.command("Ai new")
    key = wait_until(lambda: next(iter(set(ed.session_keys()) - before), None), 5)
    if key and ed.wait_state(("idle",), START_WITHIN, key=key):
        ctx.chat_command("Ai close", key)
        ctx.expect_gone(ctx.diary.pids(since=since), ":Ai close")
    else:
        ctx.note(f"the lifecycle's :Ai new did not start ({key})")
    ctx.quit_and_check()


def _stall_reason(ctx: Ctx, worst_ms: float, worst_at: float) -> str:
    during = "before any action"
    for at, label in ctx.book.timeline:
        if at <= worst_at:
            during = f"after {label} at {at:.2f} s"
    return f"typed-key stall {worst_ms:.0f} ms at {worst_at:.2f} s ({during})"


def _host_log_notes(ctx: Ctx, folder: Path) -> None:
    for log in folder.glob("pylog_py3_*"):
        text = log.read_text(errors="replace")
        tracebacks = text.count("Traceback (most recent call last)")
        if tracebacks:
            first = next((line for line in text.splitlines() if "[ERROR" in line), "")
            ctx.note(f"host log: {tracebacks} traceback(s); first error: {first[:220]}")


def _result(case: Case, ctx: Ctx, probes: Probes, seconds: float) -> Result:
    stats = probes.key_stats
    assert stats is not None
    book = ctx.book
    if not book.told_checked:
        book.failures.append("harness: the case never checked what the user was told")
    if stats.worst_ms > STALL_LIMIT_MS:
        book.failures.insert(0, _stall_reason(ctx, stats.worst_ms, stats.worst_at))
    for at, mode in probes.dialogs.seen:
        text = f"Neovim blocked typing with a question (mode {mode}) at {at:.2f} s; answered <Esc>"
        welcome = book.questions_from is not None and at >= book.questions_from
        (book.notes if welcome else book.failures).append(text)
    if stats.swallowed:
        book.notes.append(f"{stats.swallowed} typed key(s) swallowed by a prompt")
    loop = probes.loop
    book.notes.append(f"keys {stats.landed}/{stats.sent} landed; rpc probe worst {probes.rpc_worst_ms:.0f} ms; "
                      f"Neovim's loop busy at most {loop.worst_ms:.0f} ms (at {loop.worst_at:.2f} s); {seconds:.1f} s")
    return Result(case.name, stats.worst_ms, bool(book.told), bool(book.usable),
                  len(book.orphans), book.lost, book.failures, book.notes, seconds)
