"""``:Ai open``, ``new``, ``send``, ``cancel``, ``close`` and ``restart``: a session's lifecycle."""

from __future__ import annotations

from ..core.errors import AcpNvimError
from ..core.session.session import Session
from .command_context import CommandContext, CommandRequest
from .context import prompt_from_request


def cmd_open(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai [open] [session]``: the chat of ``session`` (made current) or of the current one."""
    if request.args:
        ctx.make_current(ctx.session(request.args[0]).key)
    ctx.open_chat(ctx.current_or_new(None))


def cmd_new(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai new [agent]``: another session, with its own agent process."""
    ctx.open_chat(ctx.start(request.args[0] if request.args else None))


def cmd_send(ctx: CommandContext, request: CommandRequest) -> None:
    """``:[range]Ai send {text}``: a prompt with its context, to the current session (started if needed)."""
    session = ctx.current_or_new(None)
    prompt = prompt_from_request(ctx.nvim, request, session.cwd)
    if not prompt.text.strip() and not prompt.blocks and not prompt.attachments:
        raise AcpNvimError("nothing to send: give a prompt, e.g. :Ai send explain this")
    ctx.submit(session, prompt)
    ctx.open_chat(session, focus=False)


def cmd_cancel(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai cancel``: end the running turn."""
    session = ctx.require_current()
    ctx.spawn(_cancel(ctx, session), "cancel")


async def _cancel(ctx: CommandContext, session: Session) -> None:
    if not await session.cancel():
        ctx.notify(f"{session.key}: no turn is running")


def cmd_close(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai close``: stop the current session's agent."""
    session = ctx.require_current()
    ctx.manager.forget(session.key)
    ctx.spawn(session.close(), "close")
    ctx.session_changed(session.key)


def cmd_restart(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai restart``: a fresh agent process for the current session."""
    session = ctx.require_current()
    ctx.open_chat(session, focus=False)
    ctx.spawn(session.restart(), f"restart {session.key}")
