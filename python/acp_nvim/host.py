"""The Python host of acp.nvim: a process of its own, started by ``lua/acp_nvim/host.lua``.

Neovim starts it with ``jobstart(…, {rpc = true})`` and talks msgpack-RPC over its stdio. It is
not a remote plugin: there is no manifest to source at every startup and no blocking wait while
the host starts, and it needs no ``:UpdateRemotePlugins``. Lua sends notifications (one channel,
so they keep their order); each runs in a greenlet on the host's loop, where ``nvim/app.py``
takes over. The only request is ``shutdown`` (editor exit). ``warm`` loads the protocol ahead of
the first ``:Ai`` (Lua sends it when Neovim is idle after startup).

Like pynvim's own host, it logs to ``$NVIM_PYTHON_LOG_FILE`` (``…_py3_acp_nvim``) and shows
errors of its asynchronous calls to Neovim (``nvim_error_event``) as error messages.
"""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Callable
from typing import Any

import pynvim

LOG_NAME = "acp_nvim"
ERROR_PREFIX = "[acp.nvim] "


class Host:
    """Routes Neovim's notifications to the app, which it creates on first use."""

    def __init__(self, nvim: pynvim.Nvim) -> None:
        self._nvim = nvim
        self._app: Any = None
        self._notifications: dict[str, Callable[..., None]] = {
            "command": lambda request: self.app().command(request),
            "submit": lambda key, text: self.app().submit(key, text),
            "answer": lambda qid, option=None: self.app().answer(qid, option),
            "review_done": lambda rid, verdict=None: self.app().review_done(rid, verdict),
            "chat": lambda name, key, arg=None: self.app().chat_action(name, key, arg),
            "tool_done": lambda qid, answer=None: self.app().tool_done(qid, answer),
            "warm": lambda: self.app(),
            "nvim_error_event": self._nvim_error,
        }

    def app(self) -> Any:
        """The plugin application (importing it loads the ACP SDK: about half a second)."""
        if self._app is None:
            from .nvim.app import App

            self._app = App(self._nvim)
        return self._app

    def on_notification(self, name: str, args: list[Any]) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            # sent while the host was still connecting: pynvim hands it over before its loop runs;
            # run it on the loop, in order with what follows (the app needs the loop)
            self._nvim.async_call(self.on_notification, name, args)
            return
        handler = self._notifications.get(name)
        if handler is None:
            self.error(f"unknown call {name!r} from Lua (the plugin's Lua and Python differ?)")
            return
        try:
            handler(*args)
        except Exception as exc:  # the app reports its own errors; this is what it could not
            self.error(f"{name} failed: {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=-6)}")

    def on_request(self, name: str, args: list[Any]) -> Any:
        if name == "shutdown":
            if self._app is not None:
                self._app.shutdown()
            return None
        raise pynvim.ErrorResponse(f"acp.nvim host: unknown request {name!r}")

    def _nvim_error(self, kind: Any, message: Any) -> None:
        """An asynchronous call to Neovim failed (a Lua error in a render batch, say)."""
        self.error(f"Async request caused an error:\n{message}")

    def error(self, message: str) -> None:
        self._nvim.err_write(f"{ERROR_PREFIX}{message}\n", async_=True)


def main() -> None:
    """Run the host until Neovim closes its stdin."""
    pynvim.setup_logging(LOG_NAME)
    nvim = pynvim.attach("stdio")
    host = Host(nvim)
    nvim.run_loop(host.on_request, host.on_notification, err_cb=host.error)
