"""``:Ai log [session]``, ``:Ai log export {file}``, ``:Ai log level [{level}]``."""

from __future__ import annotations

import asyncio
import errno
import os
import re
from pathlib import Path
from typing import Any

from ...core.config import LOG_LEVELS
from ...core.errors import AcpNvimError
from ...core.permissions.rules import write_atomic
from ...core.session.session import Session
from ..commands.command_context import CommandContext, CommandRequest
from .log_view import LogView

SESSION_BUFFER = re.compile(r"^acp://(?:chat|log)/(.+)$")
USAGE = "usage: :Ai log [session]  |  :Ai log export {file}  |  :Ai log level [{level}]"


class LogViews:
    """The log buffer views, one per session (a service of the context)."""

    def __init__(self) -> None:
        self.views: dict[str, LogView] = {}


def cmd_log(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai log [session]``, ``:Ai log export {file}``, ``:Ai log level [{level}]``."""
    args = request.args
    if args[:1] == ["export"]:
        _export(ctx, _session(ctx, request, None), args[1:])
    elif args[:1] == ["level"]:
        _level(ctx, _session(ctx, request, None), args[1:])
    elif len(args) <= 1:
        open_log(ctx, _session(ctx, request, args[0] if args else None))
    else:
        raise AcpNvimError(USAGE)


def open_log(ctx: CommandContext, session: Session, focus: bool = True) -> None:
    """Show the log buffer of ``session`` (greenlet context)."""
    views = ctx.service(LogViews).views
    view = views.get(session.key)
    if view is None or view.ring is not session.log:
        view = views[session.key] = LogView(ctx.bridge, session.key, session.log, ctx.report)
    view.open(ctx.nvim, focus)


def log_page(ctx: CommandContext, key: str) -> None:
    """The log buffer of session ``key`` asks for its older entries (ignored without a view)."""
    view = ctx.service(LogViews).views.get(key)
    if view is not None and view.attached:
        view.want_older()


# -- session choice --------------------------------------------------------------------

def _session(ctx: CommandContext, request: CommandRequest, key: str | None) -> Session:
    """The named session, else the one whose chat or log buffer is current, else the current one."""
    if key is not None:
        session = ctx.manager.get(key)
        if session is None:
            known = ", ".join(ctx.manager.sessions) or "none"
            raise AcpNvimError(f"no session {key!r}; sessions: {known}")
        return session
    return _buffer_session(ctx, request.buf) or ctx.require_current()


def _buffer_session(ctx: CommandContext, buf: int) -> Session | None:
    if not buf:
        return None
    match = SESSION_BUFFER.match(ctx.nvim.api.buf_get_name(buf))
    return ctx.manager.get(match.group(1)) if match else None


# -- level -----------------------------------------------------------------------------

def _level(ctx: CommandContext, session: Session, args: list[str]) -> None:
    if len(args) > 1:
        raise AcpNvimError(USAGE)
    if args:
        try:
            session.log.set_level(args[0])
        except ValueError as exc:
            raise AcpNvimError(str(exc)) from None
    ctx.notify(f"{session.key}: log level {session.log.level} (one of {', '.join(LOG_LEVELS)})")


# -- export ----------------------------------------------------------------------------

def _export(ctx: CommandContext, session: Session, args: list[str]) -> None:
    if len(args) != 1:
        raise AcpNvimError("usage: :Ai log export {file}")
    path = Path(ctx.nvim.funcs.fnamemodify(ctx.nvim.funcs.expand(args[0]), ":p"))
    lines = list(session.log.export(_header(session)))
    ctx.spawn(_write(ctx, session, path, lines), f"export {session.key} log")


async def _write(ctx: CommandContext, session: Session, path: Path, lines: list[str]) -> None:
    try:
        await asyncio.to_thread(write_private, path, ("\n".join(lines) + "\n").encode("utf-8"))
    except OSError as exc:
        raise AcpNvimError(f"cannot write {path}: {exc.strerror or exc}") from None
    ctx.notify(f"{session.key}: wrote {len(lines) - 1} log entries to {path}{_completeness(session)}")


def write_private(path: Path, data: bytes) -> None:
    """Written like the history: never through a symlink at ``path``, a temp file in the same
    folder renamed over it, mode 0600 (the log names the user's files and commands). ``:Ai export``
    writes the same way."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        pass
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise AcpNvimError(f"not exporting to {path}: it is a symbolic link (symlinks are not followed; "
                               "name the file itself)") from None
        raise
    else:
        os.close(fd)
    write_atomic(path, data)


def _header(session: Session) -> dict[str, Any]:
    spec = session.spec
    return {"session": session.key, "agent": session.agent_name, "command": [spec.command, *spec.args],
            "cwd": session.cwd, "level": session.log.level, "first_seq": session.log.first_seq}


def _completeness(session: Session) -> str:
    """Why a replay of this export might differ from the session (nothing when it will not)."""
    if not session.log.enabled:
        return " (the log is off: log.max_entries or log.max_bytes is 0)"
    notes = []
    if session.log.first_seq > 1:
        notes.append(f"the ring dropped the first {session.log.first_seq - 1} entries")
    if session.log.level != "trace":
        notes.append(f"level {session.log.level} leaves out streamed chunks (:Ai log level trace)")
    return f" (for a faithful replay: {'; '.join(notes)})" if notes else ""
