"""The plugin application: ``:Ai`` subcommands and callbacks from Lua, run on the host's loop.

Every entry point is called from a pynvim handler greenlet; it returns at once and
leaves agent work to tasks, so Neovim never waits on an agent. Subcommands come from
the registry (``subcommands.py``) and reach the app only through ``CommandContext``.
"""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Callable
from typing import Any

import pynvim

from ..core.checkpoints.recorder import Recorder
from ..core.config import parse_settings
from ..core.conversation.prompt import warm_redaction
from ..core.errors import AcpNvimError
from ..core.log.redact import Redactor
from ..core.mcp import servers
from ..core.mcp.http_server import EditorMcpServer
from ..core.mcp.tools import EditorTools
from ..core.questions import Questions
from ..core.session.manager import SessionManager
from .bridge import Bridge
from .chat.chat_commands import chat_action, describe_chat
from .chat.context import prompt_from_text
from .commands.command_context import CommandContext, CommandRequest
from .commands.subcommands import BY_NAME, handler_of
from .files.editor import NvimEditor
from .files.editor_tools import NvimEditorState
from .log.log_commands import log_page
from .sessions.board_commands import BoardFeed, describe_board

WARM_EXIT = 1.5
CHECKPOINTS_EXIT = 1.5
"""Seconds editor exit waits for the checkpoints of turns that just ended to be stored."""
"""Seconds editor exit waits for the warm agents to close their sessions and exit (then they are killed)."""


class App:
    """Owns the session manager and the Neovim editor port."""

    def __init__(self, nvim: pynvim.Nvim) -> None:
        self.nvim = nvim
        self.bridge = Bridge(nvim)
        questions = Questions()
        self.editor = NvimEditor(self.bridge, questions, self.describe)
        self.editor_state = NvimEditorState(self.bridge)
        self.editor_state.track()
        self.editor_mcp = EditorMcpServer(EditorTools(self.editor_state), lambda m: self.editor.notify(m, "error"))
        self.manager = SessionManager(self.editor, parse_settings({}), questions, self.editor_mcp)
        warm = self.manager.warm
        warm.want_idle = lambda: self.bridge.lua_async("require('acp_nvim.host.idle').want()")
        warm.changed = lambda: self.bridge.lua_async("require('acp_nvim.host.idle').set_warm(...)", warm.status())
        self.context = CommandContext(nvim, self.bridge, self.editor, self.manager)
        warm_redaction()  # before any session: the app is made at the prestart (Neovim idle) or the first :Ai

    # -- entry points (greenlet context) -------------------------------------------

    def command(self, request: dict[str, Any]) -> None:
        """Run one ``:Ai`` invocation; errors become a message, never a traceback."""
        self._guard(lambda: self._dispatch(CommandRequest.from_lua(request)))

    def submit(self, key: str, text: str) -> None:
        """Text typed into a chat buffer's prompt area."""
        self._guard(lambda: self._submit_from_chat(key, text))

    def _submit_from_chat(self, key: str, text: str) -> None:
        session = self.context.session(key)
        self.context.make_current(session.key)  # the chat typed in becomes current
        self.context.submit(session, prompt_from_text(text, session.cwd))

    def chat_action(self, name: str, key: str, arg: Any) -> None:
        """A key in a chat buffer (open a block, locations, the edited queue)."""
        self._guard(lambda: chat_action(self.context, name, key, arg))

    def answer(self, qid: int, option_id: object) -> None:
        """An answer from Lua: an option id, a picker's index, or a question's table."""
        self._guard(lambda: self.editor.answer(int(qid), option_id))

    def review_done(self, rid: int, verdict: Any) -> None:
        """The verdict of a review view (accepted texts per file)."""
        self._guard(lambda: self.editor.review_done(int(rid), verdict))

    def terminal_event(self, event: str, terminal_id: str, data: Any) -> None:
        """Output or exit of a terminal job the agent runs (lua/acp_nvim/host/terminal.lua)."""
        self._guard(lambda: self.editor.terminal_event(str(event), str(terminal_id), data))
    def log_page(self, key: str) -> None:
        """A log window scrolled up to the entries it does not show yet."""
        self._guard(lambda: log_page(self.context, str(key)))

    def tool_done(self, call: Any, answer: Any) -> None:
        """An LSP answer for the editor's MCP tools (``lua/acp_nvim/host/editor_tools.lua``)."""
        self._guard(lambda: self.editor_state.done(call, answer))

    def board_event(self, event: str) -> None:
        """The board's buffer went away (``closed``): its rows are no longer sent."""
        self._guard(lambda: self.context.service(BoardFeed).closed() if event == "closed" else None)

    def idle(self, config: Any, cwd: Any) -> None:
        """Neovim is idle: the warm agents that are missing start (|acp_nvim-warm|)."""
        def fill() -> None:
            self.manager.settings = parse_settings(config if isinstance(config, dict) else {})
            self.editor.redact = notification_redactor(self.manager)
            self.manager.warm.fill(str(cwd or "") or self.nvim.funcs.getcwd())
        self._guard(fill)

    def shutdown(self) -> None:
        """Editor exit: the warm agents close their sessions (a bounded wait: Neovim waits for this
        answer), then every agent is signalled at once."""
        if self.manager.warm.processes():
            self.bridge.wait(self.manager.warm.close_all(), WARM_EXIT)
        storing = [s.checkpoints for s in self.manager.sessions.values() if s.checkpoints.storing]
        if storing:  # the last turn's checkpoint, for a rewind after :Ai resume in the next Neovim
            self.bridge.wait(_flush_all(storing), CHECKPOINTS_EXIT)
        self.manager.kill_all()

    def _guard(self, action: Callable[[], None]) -> None:
        try:
            action()
        except AcpNvimError as exc:
            self.editor.notify(str(exc), "error")
        except Exception as exc:
            self.editor.notify(f"internal error: {exc}\n{traceback.format_exc(limit=6)}", "error")

    def _dispatch(self, request: CommandRequest) -> None:
        self.manager.settings = parse_settings(request.config)
        self.editor.redact = notification_redactor(self.manager)
        self.context.request = request
        if request.session in self.manager.sessions:  # run from a chat buffer: its session
            self.context.make_current(request.session)
        handler = handler_of(request.sub)
        if handler is None:
            raise AcpNvimError(f"unknown subcommand {request.sub!r}; try one of: {', '.join(BY_NAME)}")
        handler(self.context, request)

    # -- state for Lua -------------------------------------------------------------

    def describe(self, key: str) -> dict[str, Any]:
        """The state Lua keeps for the statusline and completion."""
        session = self.manager.get(key)
        if session is None:
            return {"closed": True}
        view = session.view
        return {
            "agent": view.agent, "state": view.state, "mode": view.mode or "",
            "modes": [mid for mid, _ in view.modes], "title": view.title or "",
            "usage": view.usage or "", "queued": len(view.queued), "pending": view.pending,
            "commands": view.command_names, "current": key == self.manager.current_key,
            "policy": view.policy,
            **describe_chat(view), **describe_board(self.manager, session, view),
        }


def notification_redactor(manager: SessionManager) -> Redactor:
    """Secrets of every configured agent and of every open session (which may predate the config):
    their env (and a remote agent's headers), and the env and header values of their MCP servers
    (and the editor server's token)."""
    settings = manager.settings
    envs = [{**spec.env, **spec.headers, **servers.secrets(servers.configured(settings, name))}
            for name, spec in settings.all_agents().items()]
    envs += [{**session.spec.env, **session.spec.headers, **session.mcp.secrets()}
             for session in manager.sessions.values()]
    return Redactor.for_envs(envs, patterns=settings.redaction.patterns)


async def _flush_all(recorders: list[Recorder]) -> None:
    await asyncio.gather(*(recorder.flush() for recorder in recorders))
