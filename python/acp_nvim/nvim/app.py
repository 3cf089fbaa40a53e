"""The plugin application: ``:Ai`` subcommands and callbacks from Lua, run on the host's loop.

Every entry point is called from a pynvim handler greenlet; it returns at once and
leaves agent work to tasks, so Neovim never waits on an agent.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

import pynvim

from ..core import tasks
from ..core.config import parse_settings
from ..core.errors import AcpNvimError
from ..core.questions import Questions
from ..core.session.manager import SessionManager
from ..core.session.session import Prompt, Session
from ..core.transcript.block_view import ViewLimits
from .bridge import Bridge
from .changes import show_changes
from .chat_commands import ChatCommands, describe_chat
from .context import prompt_from_request, prompt_from_text
from .editor import NvimEditor
from .log_commands import LogCommands
from .permission_commands import PermissionCommands


class App:
    """Owns the session manager and the Neovim editor port."""

    def __init__(self, nvim: pynvim.Nvim) -> None:
        self.nvim = nvim
        self.bridge = Bridge(nvim)
        questions = Questions()
        self.editor = NvimEditor(self.bridge, questions, self.describe)
        self.manager = SessionManager(self.editor, parse_settings({}), questions)
        self.subcommands: dict[str, Callable[[dict[str, Any]], None]] = {
            "open": self.cmd_open, "send": self.cmd_send, "cancel": self.cmd_cancel,
            "new": self.cmd_new, "close": self.cmd_close,
            "restart": self.cmd_restart,
            "changes": lambda request: show_changes(self.nvim, self._require_current()),
        }
        self.logs = LogCommands(self)
        self.subcommands.update(self.logs.subcommands())
        self.subcommands.update(PermissionCommands(self).subcommands())
        self.chat = ChatCommands(self)
        self.subcommands.update(self.chat.subcommands())

    # -- entry points (greenlet context) -------------------------------------------

    def command(self, request: dict[str, Any]) -> None:
        """Run one ``:Ai`` invocation; errors become a message, never a traceback."""
        self._guard(lambda: self._dispatch(request))

    def submit(self, key: str, text: str) -> None:
        """Text typed into a chat buffer's prompt area."""
        self._guard(lambda: self._submit_from_chat(self._session(key), text))

    def _submit_from_chat(self, session: Session, text: str) -> None:
        self.make_current(session.key)  # the chat typed in becomes current
        self._submit_to(session, prompt_from_text(text, session.cwd))

    def make_current(self, key: str) -> None:
        """Make ``key`` the current session; every session's state says whether it is."""
        if self.manager.current_key != key:
            self.manager.current_key = key
            for other in self.manager.sessions:
                self.editor.session_changed(other)

    def chat_action(self, name: str, key: str, arg: Any) -> None:
        """A key in a chat buffer (open a block, locations, the edited queue)."""
        self._guard(lambda: self.chat.action(name, key, arg))

    def answer(self, qid: int, option_id: str | None) -> None:
        self._guard(lambda: self.editor.answer(int(qid), option_id))

    def review_done(self, rid: int, verdict: Any) -> None:
        """The verdict of a review view (accepted texts per file)."""
        self._guard(lambda: self.editor.review_done(int(rid), verdict))

    def shutdown(self) -> None:
        """Editor exit: signal every agent at once (nothing can be awaited here)."""
        self.manager.kill_all()

    def _guard(self, action: Callable[[], None]) -> None:
        try:
            action()
        except AcpNvimError as exc:
            self.editor.notify(str(exc), "error")
        except Exception as exc:
            self.editor.notify(f"internal error: {exc}\n{traceback.format_exc(limit=6)}", "error")

    def _dispatch(self, request: dict[str, Any]) -> None:
        self.manager.settings = parse_settings(request.get("config"))
        self._request = request
        name = request.get("sub") or "open"
        if request.get("session") in self.manager.sessions:  # run from a chat buffer: its session
            self.make_current(request["session"])
        handler = self.subcommands.get(name)
        if handler is None:
            raise AcpNvimError(f"unknown subcommand {name!r}; try one of: {', '.join(self.subcommands)}")
        handler(request)

    # -- subcommands ---------------------------------------------------------------

    def cmd_open(self, request: dict[str, Any]) -> None:
        args = request.get("args") or []
        if args:
            self.make_current(self._session(args[0]).key)
        self._open_chat(self._current_or_new(None))

    def cmd_new(self, request: dict[str, Any]) -> None:
        agent = request["args"][0] if request.get("args") else None
        self._open_chat(self._start(agent))

    def cmd_send(self, request: dict[str, Any]) -> None:
        session = self._current_or_new(None)
        prompt = prompt_from_request(self.nvim, request, session.cwd)
        if not prompt.text.strip() and not prompt.blocks and not prompt.attachments:
            raise AcpNvimError("nothing to send: give a prompt, e.g. :Ai send explain this")
        self._submit_to(session, prompt)
        self._open_chat(session, focus=False)

    def cmd_cancel(self, request: dict[str, Any]) -> None:
        session = self._require_current()
        tasks.spawn(self._cancel(session), self._report, "cancel")

    def cmd_close(self, request: dict[str, Any]) -> None:
        session = self._require_current()
        self.manager.forget(session.key)
        tasks.spawn(session.close(), self._report, "close")
        self.editor.session_changed(session.key)

    def cmd_restart(self, request: dict[str, Any]) -> None:
        session = self._require_current()
        self._open_chat(session, focus=False)
        tasks.spawn(session.restart(), self._report, f"restart {session.key}")

    # -- helpers -------------------------------------------------------------------

    async def _cancel(self, session: Session) -> None:
        if not await session.cancel():
            self.editor.notify(f"{session.key}: no turn is running")

    def _submit_to(self, session: Session, prompt: Prompt) -> None:
        if session.submit(prompt) == "queued":  # "starting" queues too, silently
            self.editor.notify(f"{session.key}: queued ({len(session.queue)} waiting)")

    def _current_or_new(self, agent: str | None) -> Session:
        current = self.manager.current
        if current is not None and not current.ended:
            return current
        return self._start(agent)

    def _require_current(self) -> Session:
        current = self.manager.current
        if current is None:
            raise AcpNvimError("no session yet: start one with :Ai or :Ai new [agent]")
        return current

    def _session(self, key: str) -> Session:
        session = self.manager.get(key)
        if session is None:
            raise AcpNvimError(f"session {key} is closed; start a new one with :Ai new")
        return session

    def _start(self, agent: str | None) -> Session:
        request = getattr(self, "_request", {})
        session = self.manager.create(agent, request.get("cwd") or self.nvim.funcs.getcwd())
        chat = (request.get("config") or {}).get("chat") or self.nvim.exec_lua(
            "return require('acp_nvim').config.chat")
        session.transcript.limits = ViewLimits(int(chat["max_block_lines"]), int(chat["max_line_chars"]))
        tasks.spawn(self._start_session(session), self._report, f"start {session.key}")
        return session

    async def _start_session(self, session: Session) -> None:
        try:
            await session.start()
        except AcpNvimError as exc:
            self.editor.notify(str(exc), "error")

    def _open_chat(self, session: Session, focus: bool = True) -> None:
        self.editor.queue.flush()
        replay = session.transcript.replay_ops()
        self.nvim.exec_lua("require('acp_nvim.chat').open(...)", session.key, focus, replay)
        self.editor.session_changed(session.key)

    def _report(self, message: str) -> None:
        self.editor.notify(message, "error")

    def describe(self, key: str) -> dict[str, Any]:
        """The state Lua keeps for the statusline and completion."""
        session = self.manager.get(key)
        if session is None:
            return {"closed": True}
        return {
            "agent": session.agent_name, "state": session.state, "mode": session.mode or "",
            "modes": [mid for mid, _ in session.modes], "title": session.title or "",
            "usage": session.usage or "", "queued": len(session.queue), "pending": len(session.pending),
            "commands": session.commands, "current": key == self.manager.current_key,
            "policy": session.permissions.policy,
            **describe_chat(session),
        }
