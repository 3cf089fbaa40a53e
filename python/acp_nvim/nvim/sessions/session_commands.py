"""``:Ai open``, ``new``, ``send``, ``cancel``, ``close`` and ``restart``: a session's lifecycle."""

from __future__ import annotations

from ...core.errors import AcpNvimError
from ...core.session.session import Session
from ...core.session.subagent_cancel import cancel_subagent
from ..chat.context import prompt_from_request
from ..commands.command_context import CommandContext, CommandRequest
from .worktree_commands import new_args, start_in_worktree


def cmd_open(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai [open] [session]``: the chat of ``session`` (made current) or of the current one."""
    if request.args:
        ctx.make_current(ctx.session(request.args[0]).key)
    ctx.open_chat(ctx.current_or_new(None))


def cmd_new(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai new [agent] [--worktree [name]]``: another session, with its own agent process (in a new git
    worktree of its own with ``--worktree``)."""
    agent, in_worktree, name = new_args(request.args)
    if in_worktree:
        start_in_worktree(ctx, agent, name, request.cwd or ctx.nvim.funcs.getcwd())
        return
    ctx.open_chat(ctx.start(agent))


def cmd_send(ctx: CommandContext, request: CommandRequest) -> None:
    """``:[range]Ai send {text}``: a prompt with its context, to the current session (started if needed)."""
    session = ctx.current_or_new(None)
    prompt = prompt_from_request(ctx.nvim, request, session.cwd)
    if not prompt.text.strip() and not prompt.blocks and not prompt.attachments:
        raise AcpNvimError("nothing to send: give a prompt, e.g. :Ai send explain this")
    ctx.submit(session, prompt)
    ctx.open_chat(session, focus=False)


def cmd_cancel(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai cancel``: end the running turn; on a running subagent's block in the chat, only that subagent
    (``core/session/subagent_cancel.py``)."""
    in_chat = ctx.manager.get(request.block_session) if request.block and request.block_session else None
    session = in_chat or ctx.require_current()
    ctx.spawn(_cancel(ctx, session, request.block if in_chat is not None else 0), "cancel")


async def _cancel(ctx: CommandContext, session: Session, block: int = 0) -> None:
    told = await cancel_subagent(session, block) if block else None
    if told is not None:
        ctx.notify(told)
        return
    if not await session.cancel():
        ctx.notify(f"{session.key}: no turn is running")


def cmd_close(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai close``: stop the current session's agent."""
    session = _own_session(ctx, request)
    closing = ctx.manager.close(session)  # forgets the session now; the agent ends in the task
    ctx.spawn(closing, "close")
    ctx.session_changed(session.key)


def cmd_restart(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai restart``: a fresh agent process for the current session, back on its conversation."""
    session = _own_session(ctx, request)
    ctx.open_chat(session, focus=False)
    ctx.spawn(session.restart(), f"restart {session.key}")


def _own_session(ctx: CommandContext, request: CommandRequest) -> Session:
    """The session of the chat the command ran from (an error when it is closed), else the current one."""
    if request.session is not None and ctx.manager.get(request.session) is None:
        raise AcpNvimError(f"session {request.session} is closed; start a new one with :Ai new")
    return ctx.require_current()
