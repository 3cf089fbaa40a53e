"""acp.nvim's remote plugin: the one Python entry point, loaded by pynvim's own host.

``rplugin/python3/acp_nvim`` is the plugin path; it re-exports ``AcpNvimPlugin``.
``lua/acp_nvim/host/init.lua`` starts pynvim's host on that path (``pynvim.start_host()``, as Neovim's
Python provider does, but lazily and without the provider's blocking poll) and calls the handlers
by the methods they are exported under (``nvim/commands/entry_points.py``). Each handler hands its call to
``nvim/app.py``, created on first use (importing it loads the ACP SDK: about half a second).

The handlers are ``rpc_export`` ones: they have no spec, so a user's ``:UpdateRemotePlugins``
writes nothing for acp.nvim into the manifest, and no Vim function can start a second host.
"""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING

import pynvim

from .nvim.commands.entry_points import ENTRY_POINTS, EntryPoint

if TYPE_CHECKING:
    from .nvim.app import App

ERROR_PREFIX = "[acp.nvim] "
# Not nvim_err_write: an error message Neovim flags as one makes the next key typed in Insert mode
# wait a second (:help acp_nvim-faults); acp_nvim.kit.notify echoes it in ErrorMsg instead.
REPORT_LUA = """
local ok, kit = pcall(require, 'acp_nvim.kit.notify')
if ok then kit.notify(..., vim.log.levels.ERROR) else vim.api.nvim_echo({ { ..., 'ErrorMsg' } }, true, {}) end
"""


class AcpNvimPlugin:
    """Routes the calls from Lua to the app."""

    def __init__(self, nvim: pynvim.Nvim) -> None:
        self._nvim = nvim
        self._app: App | None = None

    def app(self) -> App:
        """The plugin application, created on first use."""
        if self._app is None:
            from .nvim.app import App

            self._app = App(self._nvim)
        return self._app

    def dispatch(self, entry: EntryPoint, args: list[object]) -> None:
        """Run one call from Lua; what fails is told to the user, never raised into pynvim."""
        if not entry.sync and not _loop_runs():
            # sent while the host was still connecting: pynvim hands it over before its loop runs;
            # run it on the loop, in order with what follows (the app needs the loop)
            self._nvim.async_call(self.dispatch, entry, args)
            return
        try:
            self._run(entry, _arguments(entry, args))
        except Exception as exc:  # the app reports its own errors; this is what it could not
            self.error(f"{entry.name} failed: {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=-6)}")

    def _run(self, entry: EntryPoint, args: list[object]) -> None:
        if entry.sync:  # a request (editor exit) never creates the app
            if self._app is not None and entry.app is not None:
                getattr(self._app, entry.app)(*args)
            return
        app = self.app()
        if entry.app is not None:
            getattr(app, entry.app)(*args)

    def error(self, message: str) -> None:
        self._nvim.exec_lua(REPORT_LUA, f"{ERROR_PREFIX}{message}", async_=True)


def _loop_runs() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _arguments(entry: EntryPoint, args: list[object]) -> list[object]:
    """``args`` with the optional ones Lua left out as None; a wrong count says which call."""
    least = len(entry.params) - entry.optional
    if not least <= len(args) <= len(entry.params):
        raise TypeError(f"{entry.name} takes ({', '.join(entry.params)}), got {len(args)} arguments "
                        "(the plugin's Lua and Python differ?)")
    return [*args, *[None] * (len(entry.params) - len(args))]


def _handler(entry: EntryPoint) -> Callable[..., None]:
    def handle(self: AcpNvimPlugin, *args: object) -> None:
        self.dispatch(entry, list(args))

    handle.__name__ = handle.__qualname__ = f"on_{entry.name}"
    handle.__doc__ = entry.help
    exported: Callable[..., None] = pynvim.rpc_export(entry.method, sync=entry.sync)(handle)
    return exported


for _entry in ENTRY_POINTS:
    setattr(AcpNvimPlugin, f"on_{_entry.name}", _handler(_entry))
# after the handlers are set: plugin() marks the class and its handlers for pynvim's host
pynvim.plugin(AcpNvimPlugin)
