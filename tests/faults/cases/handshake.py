"""Hangs in the handshake: initialize, session/new, session/load, session/resume, set_mode."""

from __future__ import annotations

from ..context import TIMEOUT_WORDS, Ctx
from . import case


@case(config={"hang": ["initialize"]})
def hang_initialize(ctx: Ctx) -> None:
    """The agent never answers ``initialize`` (once; a restarted process behaves). The user is told of
    the timeout within 15 s, and the chat works again (follow-up answered, or one key restarts)."""
    ctx.start(expect_idle=False)
    ctx.told(TIMEOUT_WORDS)


@case(config={"hang": ["session/new"]})
def hang_session_new(ctx: Ctx) -> None:
    """The agent never answers ``session/new`` (once). Told of the timeout within 15 s; usable after."""
    ctx.start(expect_idle=False)
    ctx.told(TIMEOUT_WORDS)


@case(config={"load": True, "hang": ["session/load"]})
def hang_session_load(ctx: Ctx) -> None:
    """``:Ai restart`` on an agent with loadSession; the new process never answers ``session/load``.
    Told of the timeout within 15 s; usable after; the old process is gone."""
    ctx.start()
    old = ctx.diary.pids()
    ctx.chat_command("Ai restart")
    ctx.expect_gone(old, ":Ai restart")
    ctx.told(TIMEOUT_WORDS)


@case(config={"resume": True, "hang": ["session/resume"]})
def hang_session_resume(ctx: Ctx) -> None:
    """``:Ai restart`` on an agent that can resume; the new process never answers ``session/resume``.
    Told of the timeout within 15 s; usable after; the old process is gone."""
    ctx.start()
    old = ctx.diary.pids()
    ctx.chat_command("Ai restart")
    ctx.expect_gone(old, ":Ai restart")
    ctx.told(TIMEOUT_WORDS)


@case(config={"modes": True, "hang": ["session/set_mode"]}, spec={"mode": "code"})
def hang_set_mode(ctx: Ctx) -> None:
    """The agent spec selects mode ``code`` at start; the agent never answers ``session/set_mode``.
    Told of the timeout within 15 s; usable after."""
    ctx.start(expect_idle=False)
    ctx.told(TIMEOUT_WORDS)
