"""Bytes that are not UTF-8, and a lone surrogate, in each kind of message."""

from __future__ import annotations

from .. import views
from ..context import Ctx
from ..driver import wait_until
from . import case

ENCODING_WORDS = ["utf-8", "utf8", "\ufffd", "encoding", "invalid byte"]
"""Told: the bad byte shows as U+FFFD where the text is shown, or the message names the problem."""


def _answer_prompt(ctx: Ctx, pattern: str, key: str = "a", timeout: float = 10) -> bool:
    """Press ``key`` once a prompt (a window other than the chat) shows a line matching Lua ``pattern``."""
    shown = wait_until(lambda: views.shown_request(ctx.ed, pattern), timeout)
    if shown:
        ctx.mark(f"answer {shown!r} with {key}")
        return views.answer(ctx.ed, key)
    return False


@case()
def utf8_response(ctx: Ctx) -> None:
    """The response to a prompt holds an invalid UTF-8 byte (in ``_meta``). The message still counts:
    the turn ends; the user is told about the bad byte within 15 s."""
    ctx.start()
    ctx.prompt("badbyte-response")
    ctx.told(ENCODING_WORDS)
    ctx.check(ctx.ed.wait_for_text(["turn ended"], 1, chat_only=True), "the turn never ended")


@case()
def utf8_request(ctx: Ctx) -> None:
    """A permission request whose title holds an invalid UTF-8 byte. It is shown (U+FFFD) and
    answered; the agent gets the answer and the turn ends."""
    ctx.start()
    ctx.prompt("badbyte-request")
    ctx.told(ENCODING_WORDS)
    _answer_prompt(ctx, "Run caf.*script", timeout=1)
    answered = ctx.diary.wait("answer", 10)
    ctx.check(answered, "the agent's request was never answered")


@case()
def utf8_notification(ctx: Ctx) -> None:
    """A message chunk holding an invalid UTF-8 byte. The chunk is shown (with U+FFFD) or the user
    is told of the bad byte; the rest of the turn is unaffected."""
    ctx.start()
    marker = ctx.prompt("badbyte-note")
    ctx.told(ENCODING_WORDS)
    ctx.check(ctx.answered(marker, 5), "the turn did not complete")


@case()
def lone_surrogate(ctx: Ctx) -> None:
    """A message chunk holding a lone surrogate (the JSON escape "\\ud83d"), then a permission
    request. The chunk shows, the request is shown and answered, the turn ends."""
    ctx.start()
    ctx.prompt("surrogate")
    ctx.told(["surrogate chunk-7731"], chat_only=True)
    ctx.check(_answer_prompt(ctx, "Run after surrogate"), "the permission request after it was never shown")
    ctx.check(ctx.diary.wait("answer", 10), "the agent's request was never answered")
    ctx.check(ctx.ed.wait_for_text(["turn ended"], 5, chat_only=True), "the turn never ended")
