"""``:Ai rules`` and ``:Ai policy``: remembered permission rules and per-session policy modes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import tasks
from ..core.errors import AcpNvimError
from ..core.permissions.policy import POLICIES
from ..core.permissions.rules import RuleStore

if TYPE_CHECKING:
    from .app import App

Handler = Callable[[dict[str, Any]], None]


class PermissionCommands:
    """The subcommands, registered into ``App.subcommands``."""

    def __init__(self, app: App) -> None:
        self._app = app
        self._store: RuleStore | None = None

    def subcommands(self) -> dict[str, Handler]:
        return {"rules": self.cmd_rules, "policy": self.cmd_policy}

    def store(self) -> RuleStore:
        """The rules file every session shares (greenlet context: may call Neovim)."""
        if self._store is None:
            state = self._app.nvim.funcs.stdpath("state")
            self._store = RuleStore(Path(state, "acp_nvim", "rules.json"))
        return self._store

    def cmd_rules(self, request: dict[str, Any]) -> None:
        """``:Ai rules`` lists the rules; ``:Ai rules remove {n}`` forgets rule n."""
        args = request.get("args") or []
        self.store()  # resolve the path here: the tasks below may not call Neovim directly
        if not args:
            tasks.spawn(self._show(), self._app._report, "rules")
            return
        if args[0] != "remove" or len(args) != 2 or not args[1].isdigit():
            raise AcpNvimError("usage: :Ai rules  or  :Ai rules remove {number}")
        tasks.spawn(self._remove(int(args[1]) - 1), self._app._report, "remove rule")

    def cmd_policy(self, request: dict[str, Any]) -> None:
        """``:Ai policy`` shows the current session's policy; ``:Ai policy {mode}`` sets it."""
        session = self._app._require_current()
        args = request.get("args") or []
        if not args:
            self._app.editor.notify(f"{session.key}: permission policy {session.permissions.policy} "
                                    f"(one of {', '.join(POLICIES)})")
            return
        try:
            session.permissions.set_policy(args[0])
        except ValueError as exc:
            raise AcpNvimError(str(exc)) from None
        self._app.editor.session_changed(session.key)
        self._app.editor.notify(f"{session.key}: permission policy {args[0]}")

    async def _show(self) -> None:
        rules = await self.store().all()
        lines = [f"{i}. {rule.describe()}" for i, rule in enumerate(rules, 1)]
        self._app.editor.bridge.lua_async("require('acp_nvim.rules').show(...)", lines)

    async def _remove(self, index: int) -> None:
        try:
            removed = await self.store().remove(index)
        except AcpNvimError as exc:
            self._app.editor.notify(str(exc), "error")
            return
        self._app.editor.notify(f"forgot: {removed.describe()}")
        await self._show()
