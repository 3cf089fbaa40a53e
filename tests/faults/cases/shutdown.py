"""Agents that will not end, or that stop reading, and stderr floods that could block them."""

from __future__ import annotations

from ..agent.scenarios import STDERR_AFTER_FLOOD
from ..context import Ctx
from ..driver import Editor
from . import case

CLOSED_WORDS = ["closed", "agent stopped", "stopped the agent", "session ended"]
RESTARTED_WORDS = ["restarted"]


@case(config={"stubborn": True})
def ignores_sigterm_eof(ctx: Ctx) -> None:
    """Agent and child ignore SIGTERM and the end of stdin. The chat works as usual; the lifecycle
    (``:Ai restart``, ``:Ai close``, ``:qa!``) must still end every one of their processes."""
    ctx.start()
    marker = ctx.prompt("hello")
    ctx.told([f"answer: hello {marker}"], chat_only=True)


def _big_file(ed: Editor) -> None:
    (ed.workspace / "big.txt").write_text(("y" * 99 + "\n") * 20_000)  # 2 MB


def _stalled(ctx: Ctx) -> set[int]:
    """A running turn whose agent stopped reading stdin with megabytes of answers queued."""
    ctx.start()
    ctx.prompt("stop-reading big.txt")
    reads = ctx.diary.wait("out", 10, lambda e: e.get("method") == "fs/read_text_file", 10)
    ctx.check(len(reads) == 10, f"the agent sent {len(reads)} of 10 reads")
    ctx.wait(1.0)  # the client's answers (20 MB) fill the pipe meanwhile
    return ctx.diary.pids()


@case(prepare=_big_file)
def stdin_stalled_close(ctx: Ctx) -> None:
    """The agent stops reading stdin with more than 64 KiB of answers queued; ``:Ai close``. The session
    closes within a bound and says so; the process is gone."""
    pids = _stalled(ctx)
    ctx.chat_command("Ai close")
    ctx.told(CLOSED_WORDS)
    ctx.expect_gone(pids, ":Ai close")
    ctx.book.usable = True  # closed on purpose: the lifecycle starts another session


@case(prepare=_big_file)
def stdin_stalled_restart(ctx: Ctx) -> None:
    """As ``stdin_stalled_close``, then ``:Ai restart``: the restart completes (told) within 15 s, the old
    process is gone, and the chat works."""
    pids = _stalled(ctx)
    ctx.chat_command("Ai restart")
    ctx.told(RESTARTED_WORDS)
    ctx.expect_gone(pids, ":Ai restart")


@case(config={"stubborn": True}, lifecycle=False)
def close_before_exit(ctx: Ctx) -> None:
    """``:Ai close`` on an agent slow to end (it ignores SIGTERM and EOF), then ``:qa!`` at once:
    Neovim's exit must still end the agent and its child."""
    ctx.start()
    ctx.book.usable = True  # closed on purpose
    ctx.chat_command("Ai close")
    ctx.told(CLOSED_WORDS, timeout=2)
    ctx.quit_and_check()


def _stderr_flood(ctx: Ctx, prompt: str) -> None:
    ctx.start()
    marker = ctx.prompt(prompt)
    ctx.told([f"answer: {prompt} {marker}"], chat_only=True)
    ctx.chat_command("Ai log")
    ctx.check(ctx.ed.wait_for_text([STDERR_AFTER_FLOOD], 5),
              "stderr is no longer drained: the line after the flood never reached :Ai log "
              "(the pipe fills once the reader's buffer does, and then the agent blocks)")


@case()
def stderr_cr_progress(ctx: Ctx) -> None:
    """The agent writes 80 MiB of ``\\r`` progress bar to stderr without a newline (one "line" over the
    limit), then a normal stderr line and its answer. The answer arrives, and the normal line after
    the flood reaches the session log (stderr is still drained)."""
    _stderr_flood(ctx, "stderr-cr 80")


@case()
def stderr_100mb_line(ctx: Ctx) -> None:
    """100 MiB on stderr without a newline, then a normal line and the answer: as ``stderr_cr_progress``."""
    _stderr_flood(ctx, "stderr-line 100")

