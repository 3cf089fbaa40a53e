"""The calls from Lua into the Python host, defined once: name, parameters, the App method.

Everything else is made from this table: the remote plugin's handlers (``acp_nvim/plugin.py``
exports one pynvim ``rpc_export`` handler per entry, named ``method``); the Lua table
``lua/acp_nvim/host/entry_points.lua`` from which ``require('acp_nvim.host').call`` is built
(``make docs`` writes it; a test fails when it is stale). Lua code calls
``require('acp_nvim.host').call.answer(id, option)``: one way from Lua to Python, no Vimscript.

This module imports nothing of the plugin: the remote plugin reads it while pynvim's host loads,
before the ACP SDK is imported.
"""

from __future__ import annotations

from dataclasses import dataclass

METHOD_PREFIX = "acp_nvim:"
"""Before each handler's name in its msgpack-RPC method (pynvim's ``rpc_export`` names are global
to the host: the prefix keeps them apart from the host's own ``poll``, ``specs`` and ``shutdown``)."""


@dataclass(frozen=True)
class EntryPoint:
    """One call from Lua to the Python host."""

    name: str
    """Its Lua name: ``require('acp_nvim.host').call[name]``."""
    params: tuple[str, ...]
    """Its arguments, in order; the last ``optional`` of them may be left out (nil)."""
    app: str | None
    """The ``nvim.app.App`` method it calls with them (None: it only creates the App)."""
    help: str
    optional: int = 0
    sync: bool = False
    """A request (Lua waits for the answer): only editor exit; everything else is a notification."""

    @property
    def method(self) -> str:
        """The msgpack-RPC method pynvim's host registers the handler under."""
        return METHOD_PREFIX + self.name


ENTRY_POINTS: tuple[EntryPoint, ...] = (
    EntryPoint("command", ("request",), "command", "one `:Ai` invocation (lua/acp_nvim/host/ai.lua)"),
    EntryPoint("submit", ("key", "text"), "submit", "text sent from a chat's prompt area"),
    EntryPoint("answer", ("id", "option"), "answer",
               "the answer to a permission prompt, three-way view, picker or login terminal", optional=1),
    EntryPoint("review_done", ("id", "verdict"), "review_done", "the verdict of a review view", optional=1),
    EntryPoint("chat", ("action", "key", "arg"), "chat_action",
               "a key in a chat buffer (open a block, locations, revert, the edited queue)", optional=1),
    EntryPoint("tool_done", ("id", "answer"), "tool_done", "an LSP answer for the editor's MCP tools",
               optional=1),
    EntryPoint("terminal", ("event", "id", "data"), "terminal_event",
               "output or exit of a terminal job an agent runs", optional=1),
    EntryPoint("board", ("event",), "board_event", "the board's buffer went away (`closed`)"),
    EntryPoint("log_page", ("key",), "log_page", "a log window scrolled up to entries it does not show yet"),
    EntryPoint("warm", (), None, "load the protocol while Neovim is idle (prestart)"),
    EntryPoint("idle", ("config", "cwd"), "idle", "Neovim is idle: warm agents may start (lua/acp_nvim/host/idle.lua)"),
    EntryPoint("shutdown", (), "shutdown", "editor exit: end every agent", sync=True),
)

BY_NAME: dict[str, EntryPoint] = {entry.name: entry for entry in ENTRY_POINTS}
