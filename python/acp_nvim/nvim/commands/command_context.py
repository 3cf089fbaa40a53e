"""What a subcommand handler may use: the request it answers, and a small public face of the app.

Handlers (``:Ai`` subcommands, chat keys) run in a pynvim handler greenlet: blocking Neovim
calls are legal, but every call yields the greenlet and lets a later ``:Ai`` overtake this
one, so handlers prefer what the request carries, and leave agent work to ``spawn``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pynvim

from ...core import tasks
from ...core.errors import AcpNvimError
from ...core.session.manager import SessionManager
from ...core.session.recording import Recorder
from ...core.session.session import Prompt, Session
from ...core.transcript.block_view import ViewLimits
from ...core.worktrees.worktree import Worktree
from ..bridge import Bridge
from ..files.editor import NvimEditor

S = TypeVar("S")


@dataclass(frozen=True)
class CommandRequest:
    """One ``:Ai`` invocation as ``require('acp_nvim').command`` sends it."""

    sub: str = "open"
    args: list[str] = field(default_factory=list)
    """The words after the subcommand."""
    text: str = ""
    """Everything after the subcommand, as typed (``%`` and ``#`` already expanded for ``send``)."""
    range: int = 0
    line1: int = 0
    line2: int = 0
    buf: int = 0
    """The buffer the command ran from."""
    bufname: str = ""
    lines: list[str] | None = None
    """The range's lines as they were when the command ran (unsaved edits included)."""
    session: str | None = None
    """The session of the chat buffer the command ran from, if any."""
    block: int = 0
    """``:Ai cancel`` from a chat: the block under the cursor (0: none) and that chat's session."""
    block_session: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    cwd: str = ""

    @classmethod
    def from_lua(cls, raw: Any) -> CommandRequest:
        """The request table from Lua; missing or mistyped fields take their defaults."""
        raw = raw if isinstance(raw, dict) else {}
        lines = raw.get("lines")
        return cls(
            sub=str(raw.get("sub") or "open"), args=[str(a) for a in raw.get("args") or []],
            text=str(raw.get("text") or ""), range=int(raw.get("range") or 0),
            line1=int(raw.get("line1") or 0), line2=int(raw.get("line2") or 0), buf=int(raw.get("buf") or 0),
            bufname=str(raw.get("bufname") or ""),
            lines=[str(line) for line in lines] if isinstance(lines, list) else None,
            session=str(raw["session"]) if raw.get("session") else None, block=_int(raw.get("block")),
            block_session=str(raw["block_session"]) if raw.get("block_session") else None,
            config=raw["config"] if isinstance(raw.get("config"), dict) else {}, cwd=str(raw.get("cwd") or ""))


class CommandContext:
    """The app as handlers see it: sessions, the chat, messages, tasks, and Neovim itself."""

    def __init__(self, nvim: pynvim.Nvim, bridge: Bridge, editor: NvimEditor, manager: SessionManager) -> None:
        self.nvim = nvim
        """Blocking Neovim calls (greenlet context only)."""
        self.bridge = bridge
        """Neovim from coroutines: ``await bridge.call/lua``, ``bridge.lua_async``."""
        self.editor = editor
        self.manager = manager
        self.request = CommandRequest()
        """The ``:Ai`` request being run (or the last one, for chat keys and prompts)."""
        self._services: dict[Callable[[], Any], Any] = {}
        self.recorder = Recorder(editor, lambda: manager.settings.history, self.report,
                                 worktrees=lambda: manager.settings.worktrees)
        """The local session history (``:Ai resume``)."""

    # -- messages and tasks --------------------------------------------------------

    def notify(self, message: str, level: str = "info") -> None:
        """A ``[acp.nvim]`` message (after the chat shows what it is about)."""
        self.editor.notify(message, level)

    def report(self, message: str) -> None:
        """An error message: the reporter of every task ``spawn`` starts."""
        self.editor.notify(message, "error")

    def spawn(self, coro: Coroutine[Any, Any, Any], what: str) -> asyncio.Task[Any]:
        """Run ``coro`` on the loop; a failure is reported as ``{what} failed: ...``."""
        return tasks.spawn(coro, self.report, what)

    def service(self, kind: Callable[[], S]) -> S:
        """The app's one instance of ``kind`` (made on first use): state a feature keeps between commands."""
        if kind not in self._services:
            self._services[kind] = kind()
        return self._services[kind]

    # -- sessions ------------------------------------------------------------------

    def current(self) -> Session | None:
        return self.manager.current

    def require_current(self) -> Session:
        """The current session, or a clear error when there is none."""
        current = self.manager.current
        if current is None:
            raise AcpNvimError("no session yet: start one with :Ai or :Ai new [agent]")
        return current

    def session(self, key: str) -> Session:
        """The open session ``key``, or a clear error."""
        session = self.manager.get(key)
        if session is None:
            raise AcpNvimError(f"session {key} is closed; start a new one with :Ai new")
        return session

    def current_or_new(self, agent: str | None = None) -> Session:
        """The current session, else a new one of ``agent``. A session whose agent stopped stays
        current (a prompt restarts it on the same conversation) unless it never got started."""
        current = self.manager.current
        if current is not None and (not current.view.ended or current.session_id is not None):
            return current
        return self.start(agent)

    def start(self, agent: str | None, cwd: str | None = None, worktree: Worktree | None = None) -> Session:
        """A new session of ``agent`` (default agent when None), made current; it starts in a task, on a warm
        process of that agent when one fits (|acp_nvim-warm|)."""
        session = self.create(agent, cwd, worktree, warm=True)
        self.recorder.watch(session)
        self.spawn(self._start_session(session), f"start {session.key}")
        return session

    def create(self, agent: str | None, cwd: str | None = None, worktree: Worktree | None = None,
               warm: bool = False) -> Session:
        """A new session of ``agent`` in ``cwd`` (the request's), made current, not started (``start`` starts one;
        ``warm``: it takes a warm process that fits)."""
        session = self.manager.create(agent, cwd or self.request.cwd or self.nvim.funcs.getcwd(), worktree, warm)
        chat = self.request.config.get("chat") or self.nvim.exec_lua("return require('acp_nvim').config.chat")
        session.chat.limits = ViewLimits(int(chat["max_block_lines"]), int(chat["max_line_chars"]))
        return session

    async def _start_session(self, session: Session) -> None:
        try:
            await self.manager.start(session)
        except AcpNvimError as exc:
            self.notify(str(exc), "error")

    def make_current(self, key: str) -> None:
        """Make ``key`` the current session; every session's state says whether it is."""
        if self.manager.current_key != key:
            self.manager.current_key = key
            for other in self.manager.sessions:
                self.editor.session_changed(other)

    def session_changed(self, key: str) -> None:
        """Tell Lua (statusline, chat header, completion) that ``key``'s state changed."""
        self.editor.session_changed(key)

    def submit(self, session: Session, prompt: Prompt) -> None:
        """Send ``prompt`` now, or queue it behind the running turn (and say so)."""
        if session.submit(prompt) == "queued":  # "starting" queues too, silently
            self.notify(f"{session.key}: queued ({len(session.queue)} waiting)")

    def open_chat(self, session: Session, focus: bool = True) -> None:
        """Show ``session``'s chat buffer, filled with its transcript so far when it is new: after the
        operations queued before (ignored while there is no chat), before those queued after (the
        replay holds the transcript as it is now)."""
        replay = session.chat.replay_ops()
        self.editor.queue.call("require('acp_nvim.chat').open(...)", session.key, focus, replay)
        self.editor.session_changed(session.key)


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
