"""``:Ai log [session]``, ``:Ai log export {file}``, ``:Ai log level [{level}]``."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import tasks
from ..core.config import LOG_LEVELS
from ..core.errors import AcpNvimError
from ..core.session.session import Session
from .log_view import LogView

if TYPE_CHECKING:
    from .app import App

Handler = Callable[[dict[str, Any]], None]
SESSION_BUFFER = re.compile(r"^acp://(?:chat|log)/(.+)$")
USAGE = "usage: :Ai log [session]  |  :Ai log export {file}  |  :Ai log level [{level}]"


class LogCommands:
    """The ``log`` subcommand, registered into ``App.subcommands``; owns the log views."""

    def __init__(self, app: App) -> None:
        self._app = app
        self.views: dict[str, LogView] = {}

    def subcommands(self) -> dict[str, Handler]:
        return {"log": self.cmd_log}

    def cmd_log(self, request: dict[str, Any]) -> None:
        args = request.get("args") or []
        if args[:1] == ["export"]:
            self._export(self._session(request, None), args[1:])
        elif args[:1] == ["level"]:
            self._level(self._session(request, None), args[1:])
        elif len(args) <= 1:
            self.open(self._session(request, args[0] if args else None))
        else:
            raise AcpNvimError(USAGE)

    def open(self, session: Session, focus: bool = True) -> None:
        """Show the log buffer of ``session`` (greenlet context)."""
        view = self.views.get(session.key)
        if view is None or view.ring is not session.log:
            view = self.views[session.key] = LogView(self._app.bridge, session.key, session.log,
                                                     self._app._report)
        view.open(self._app.nvim, focus)

    # -- session choice ------------------------------------------------------------

    def _session(self, request: dict[str, Any], key: str | None) -> Session:
        """The named session, else the one whose chat or log buffer is current, else the current one."""
        if key is not None:
            session = self._app.manager.get(key)
            if session is None:
                known = ", ".join(self._app.manager.sessions) or "none"
                raise AcpNvimError(f"no session {key!r}; sessions: {known}")
            return session
        from_buffer = self._buffer_session(request.get("buf"))
        return from_buffer or self._app._require_current()

    def _buffer_session(self, buf: Any) -> Session | None:
        if not buf:
            return None
        match = SESSION_BUFFER.match(self._app.nvim.api.buf_get_name(buf))
        return self._app.manager.get(match.group(1)) if match else None

    # -- level ---------------------------------------------------------------------

    def _level(self, session: Session, args: list[str]) -> None:
        if len(args) > 1:
            raise AcpNvimError(USAGE)
        if args:
            try:
                session.log.set_level(args[0])
            except ValueError as exc:
                raise AcpNvimError(str(exc)) from None
        self._app.editor.notify(f"{session.key}: log level {session.log.level} (one of {', '.join(LOG_LEVELS)})")

    # -- export --------------------------------------------------------------------

    def _export(self, session: Session, args: list[str]) -> None:
        if len(args) != 1:
            raise AcpNvimError("usage: :Ai log export {file}")
        path = Path(self._app.nvim.funcs.fnamemodify(self._app.nvim.funcs.expand(args[0]), ":p"))
        lines = list(session.log.export(_header(session)))
        tasks.spawn(self._write(session, path, lines), self._app._report, f"export {session.key} log")

    async def _write(self, session: Session, path: Path, lines: list[str]) -> None:
        try:
            await asyncio.to_thread(path.write_text, "\n".join(lines) + "\n", "utf-8")
        except OSError as exc:
            raise AcpNvimError(f"cannot write {path}: {exc.strerror or exc}") from None
        self._app.editor.notify(f"{session.key}: wrote {len(lines) - 1} log entries to {path}"
                                f"{_completeness(session)}")


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
