"""Faults during a prompt turn: hangs, crashes, error replies, garbage, a huge chunk, an agent
that ignores cancel, and queued prompts meeting a restart or a crash."""

from __future__ import annotations

from ..agent.scenarios import ABRUPT_STDERR, CRASH_STDERR, ERROR_MESSAGE, GARBAGE_LINE
from ..context import TIMEOUT_WORDS, TOLD_WITHIN, Ctx
from ..driver import wait_until
from . import case

CRASH_TAIL = CRASH_STDERR[-1]
IGNORED_WORDS = ["ignor", "did not stop", "still running", "not confirm", "not respond", "unresponsive",
                 "did not end", "no reply to the cancel"]


def _running(ctx: Ctx, needle: str) -> None:
    ctx.check(ctx.ed.wait_for_text([needle], 10, chat_only=True), f"the turn never showed {needle!r}")


@case()
def hang_prompt(ctx: Ctx) -> None:
    """The agent sends one chunk, then nothing (it ignores cancel too). Within 15 s the user is told
    the agent stopped answering; the chat works again (one key restarts it)."""
    ctx.start()
    ctx.prompt("freeze")
    _running(ctx, "working on it")
    ctx.told(TIMEOUT_WORDS)


@case()
def crash_mid_turn(ctx: Ctx) -> None:
    """The agent exits (code 3) mid-turn after writing a traceback to stderr. The user sees the stderr
    tail within 15 s (the notice names the way back); the same chat works again."""
    ctx.start()
    ctx.prompt("crash")
    ctx.told([CRASH_TAIL])
    ctx.check(ctx.ed.find(["restart"]), "the crash notice does not say how to restart")
    keys = ctx.ed.session_keys()
    ctx.usable()
    ctx.check(ctx.ed.session_keys() == keys, f"a new session was opened: {ctx.ed.session_keys()}")


@case()
def crash_abrupt(ctx: Ctx) -> None:
    """The agent streams five chunks 0.1 s apart, writes one stderr line and calls ``os._exit(1)``.
    No typed key waits while the crash is taken in; the stderr line is shown within 15 s and the
    same chat works again."""
    ctx.start()
    ctx.prompt("crash-abrupt")
    ctx.told([ABRUPT_STDERR])
    ctx.usable()


@case()
def crash_abrupt_typing(ctx: Ctx) -> None:
    """``crash_abrupt`` while the user types the next prompt: the chat's prompt area is in Insert mode
    when the agent dies (the typed-key probe's keys land there), and an ``nvim_eval`` comes from a second
    connection. The crash notice is shown within 15 s with neither waiting on it: no message with
    Neovim's error flag, whose next mode message would hold every key and request for a second."""
    ctx.start()
    ctx.prompt("crash-abrupt")
    _running(ctx, "step 1 of 5")
    ctx.mark("insert mode in the prompt area")
    ctx.ed.keys("GA")
    ctx.check(wait_until(lambda: ctx.ed.mode() == "i", 5), "the chat's prompt area did not go to Insert mode")
    ctx.told([ABRUPT_STDERR])
    ctx.check(ctx.ed.wait_for_text(["exited with code 1"], TOLD_WITHIN), "no \"agent exited with code 1\" notice")
    ctx.flagged_errors()
    ctx.ed.keys("<Esc>")
    ctx.usable()


@case()
def error_reply(ctx: Ctx) -> None:
    """The agent answers a prompt with a JSON-RPC error. Its message is shown; the chat stays usable."""
    ctx.start()
    ctx.prompt("error")
    ctx.told([ERROR_MESSAGE])


@case()
def error_turn_ended(ctx: Ctx) -> None:
    """An error turn gets its "turn ended" line, as every turn does (the help says so)."""
    ctx.start()
    ctx.prompt("error")
    ctx.told(["turn ended"], chat_only=True)


@case()
def garbage_stdout(ctx: Ctx) -> None:
    """The agent prints a plain non-JSON line on stdout (no URL, no "error"), then answers. The user
    sees the line within 15 s; the turn completes."""
    ctx.start()
    marker = ctx.prompt("garbage")
    ctx.told([GARBAGE_LINE])
    ctx.check(ctx.answered(marker, 10), "the turn after the garbage line did not complete")


@case()
def chunk_10mb(ctx: Ctx) -> None:
    """One agent message chunk of 10 MB. No key stall; the turn completes (its "turn ended" line)."""
    ctx.start()
    ctx.prompt("chunk 10")
    ctx.told(["turn ended: end_turn"], chat_only=True)


@case()
def ignore_cancel(ctx: Ctx) -> None:
    """``:Ai cancel`` while the agent runs a tool call; the agent ignores the cancel and keeps
    streaming. Within 15 s the user is told it ignores the cancel, its pending tool call shows as
    cancelled (ACP), and the chat works again (one key restarts it)."""
    ctx.start()
    ctx.prompt("keep-going")
    _running(ctx, "tick 2")
    ctx.chat_command("Ai cancel")
    ctx.told(IGNORED_WORDS)
    ctx.check(ctx.ed.wait_for_text(["run the test suite · cancelled"], 1, chat_only=True),
              "the pending tool call is not shown as cancelled")


@case()
def restart_with_queue(ctx: Ctx) -> None:
    """Two prompts wait in the queue behind a running turn; ``:Ai restart``. The user is told of the
    restart, and the queued prompts are sent after it or named as not sent (none lost)."""
    ctx.start()
    ctx.prompt("slow 100")
    _running(ctx, "tick 1")
    queued = [ctx.prompt("first queued"), ctx.prompt("second queued")]
    ctx.chat_command("Ai restart")
    ctx.told(["restarted"])
    for marker in queued:
        ctx.answered(marker, 5)


@case()
def crash_with_queue(ctx: Ctx) -> None:
    """Two prompts wait in the queue when the agent crashes. The stderr tail is shown within 15 s;
    the queued prompts are kept, sent after a restart or named as not sent (none lost)."""
    ctx.start()
    ctx.prompt("crash go")
    _running(ctx, "About to do something risky")
    ctx.prompt("first queued")
    ctx.prompt("second queued")
    ctx.gate("go")
    ctx.told([CRASH_TAIL])
