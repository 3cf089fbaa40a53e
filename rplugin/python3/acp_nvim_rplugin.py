"""acp.nvim remote-plugin shim: registers functions, each a single call into the package.

The package lives in ``<plugin root>/python``; it is imported on first use so that
Neovim's start-up never pays for the ACP SDK's import.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pynvim

_PYTHON_DIR = str(Path(__file__).resolve().parents[2] / "python")
if _PYTHON_DIR not in sys.path:
    sys.path.insert(0, _PYTHON_DIR)


@pynvim.plugin
class AcpNvimRplugin:
    def __init__(self, nvim: pynvim.Nvim) -> None:
        self._nvim = nvim
        self._app: Any = None

    def app(self) -> Any:
        if self._app is None:
            from acp_nvim.nvim.app import App

            self._app = App(self._nvim)
        return self._app

    @pynvim.function("AcpNvimCommand")
    def command(self, args: list[Any]) -> None:
        self.app().command(args[0])

    @pynvim.function("AcpNvimSubmit")
    def submit(self, args: list[Any]) -> None:
        self.app().submit(args[0], args[1])

    @pynvim.function("AcpNvimAnswer")
    def answer(self, args: list[Any]) -> None:
        self.app().answer(args[0], args[1] if len(args) > 1 else None)

    @pynvim.function("AcpNvimReviewDone")
    def review_done(self, args: list[Any]) -> None:
        self.app().review_done(args[0], args[1] if len(args) > 1 else None)

    @pynvim.function("AcpNvimChat")
    def chat(self, args: list[Any]) -> None:
        self.app().chat_action(args[0], args[1], args[2] if len(args) > 2 else None)

    @pynvim.function("AcpNvimTerminal")
    def terminal(self, args: list[Any]) -> None:
        self.app().terminal_event(args[0], args[1], args[2] if len(args) > 2 else None)

    @pynvim.function("AcpNvimShutdown", sync=True)
    def shutdown(self, args: list[Any]) -> None:
        if self._app is not None:
            self._app.shutdown()
