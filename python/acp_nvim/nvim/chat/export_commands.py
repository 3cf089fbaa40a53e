"""``:Ai export {file}``: the current session's transcript as Markdown (``core/transcript/export.py``),
written like ``:Ai log export``: never through a symlink, a temp file renamed over it, mode 0600,
redacted by the session's redactor."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path

from ...core.errors import AcpNvimError
from ...core.session.session import Session
from ...core.transcript.export import markdown
from ..commands.command_context import CommandContext, CommandRequest
from ..log.log_commands import write_private


def cmd_export(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai export {file}``: the chat's session (or the current one) to ``file``."""
    if len(request.args) != 1:
        raise AcpNvimError("usage: :Ai export {file}")
    session = ctx.require_current()
    path = Path(ctx.nvim.funcs.fnamemodify(ctx.nvim.funcs.expand(request.args[0]), ":p"))
    text = session.redact(transcript_markdown(session))
    ctx.spawn(_write(ctx, session, path, text), f"export {session.key} transcript")


def transcript_markdown(session: Session) -> str:
    view = session.view
    title = f"acp.nvim · {session.key}{f' · {view.title}' if view.title else ''}"
    about = (f"acp.nvim export: agent {session.agent_name}, session {session.session_id or '(none)'}, "
             f"cwd {session.cwd}, {datetime.now().astimezone().isoformat(timespec='seconds')}")
    return markdown(session.transcript, title, about)


async def _write(ctx: CommandContext, session: Session, path: Path, text: str) -> None:
    try:
        await asyncio.to_thread(write_private, path, text.encode("utf-8", "replace"))
    except OSError as exc:
        raise AcpNvimError(f"cannot write {path}: {exc.strerror or exc}") from None
    blocks = len(session.transcript.blocks)
    ctx.notify(f"{session.key}: wrote the transcript ({blocks} block{'s' if blocks != 1 else ''}) to {path}")
