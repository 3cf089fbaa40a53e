"""The chat's keys for the next prompt and the failed one: switch steer/queue, retry, retry when
a limit resets, and a new session that takes the failed prompt (``L`` runs ``:Ai login`` in Lua)."""

from __future__ import annotations

from ...core.errors import AcpNvimError
from ...core.session.session import Session
from ..commands.command_context import CommandContext

NAMES = ("steer", "retry", "wait", "new_session")


def act(ctx: CommandContext, name: str, session: Session) -> None:
    """Run the chat key ``name`` (one of ``NAMES``) for ``session``."""
    if name == "steer":
        way = session.steering.toggle()
        ctx.notify(f"{session.key}: the next prompt sent during a turn is {'steered' if way == 'steer' else 'queued'}")
    elif name == "retry":
        if not session.failed_turns.retry():
            raise AcpNvimError(f"{session.key}: no failed prompt to retry")
    elif name == "wait":
        if session.failed_turns.wait() is None:
            raise AcpNvimError(f"{session.key}: no reset time is known for this failure: R retries now")
    elif name == "new_session":
        _new_session(ctx, session)


def _new_session(ctx: CommandContext, session: Session) -> None:
    """A new session of the same agent, which gets the failed prompt (kept here if none failed)."""
    prompt = session.failed_turns.take()
    fresh = ctx.start(session.agent_name, session.cwd)
    if prompt is not None:
        ctx.submit(fresh, prompt)
    ctx.open_chat(fresh)
