"""The chat's subcommands (``:Ai sessions``, ``mode``, ``model``, ``config``, ``queue``,
``locations``) and the actions of its keys (open a block, its locations, the edited queue).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core import tasks
from ..core.errors import AcpNvimError
from ..core.session.details import ConfigOption
from ..core.session.session import Prompt, Session

if TYPE_CHECKING:
    from .app import App

Handler = Callable[[dict[str, Any]], None]
QUEUE_PREVIEW = 80


class ChatCommands:
    """Registered into ``App.subcommands``; ``action`` serves the chat buffer's keys."""

    def __init__(self, app: App) -> None:
        self._app = app
        self._queue_snapshot: dict[str, list[Prompt]] = {}

    def subcommands(self) -> dict[str, Handler]:
        return {"sessions": self.cmd_sessions, "mode": self.cmd_mode, "model": self.cmd_model,
                "config": self.cmd_config, "queue": self.cmd_queue, "locations": self.cmd_locations}

    @property
    def _editor(self) -> Any:
        return self._app.editor

    def _spawn(self, coro: Any, what: str) -> None:
        tasks.spawn(coro, self._app._report, what)

    # -- sessions --------------------------------------------------------------------

    def cmd_sessions(self, request: dict[str, Any]) -> None:
        """``:Ai sessions``: pick a session (vim.ui.select) and open its chat."""
        sessions = list(self._app.manager.sessions.values())
        if not sessions:
            raise AcpNvimError("no sessions yet: start one with :Ai or :Ai new [agent]")
        self._spawn(self._pick_session(sessions), "pick a session")

    async def _pick_session(self, sessions: list[Session]) -> None:
        labels = [_session_label(s, s.key == self._app.manager.current_key) for s in sessions]
        index = await self._editor.choose("acp.nvim sessions", labels)
        if index is not None:
            session = sessions[index]
            self._app.make_current(session.key)
            await self._app.bridge.call(lambda _: self._app._open_chat(session))

    # -- modes, models, config options -----------------------------------------------

    def cmd_mode(self, request: dict[str, Any]) -> None:
        """``:Ai mode [id]``: switch mode, or pick one (current marked)."""
        session = self._app._require_current()
        args = request.get("args") or []
        if session.modes:
            if args:
                self._spawn(self._set_mode(session, args[0]), "set mode")
            else:
                self._spawn(self._pick_mode(session), "pick a mode")
            return
        option = session.details.option("mode")
        if option is None:
            raise AcpNvimError(f"{session.key}: the agent offers no modes")
        self._option(session, option, args)

    async def _pick_mode(self, session: Session) -> None:
        labels = [f"{name} ({mid}){'  ← current' if mid == session.mode else ''}" for mid, name in session.modes]
        index = await self._editor.choose(f"{session.key}: mode", labels)
        if index is not None:
            await self._set_mode(session, session.modes[index][0])

    async def _set_mode(self, session: Session, mode_id: str) -> None:
        if mode_id not in {mid for mid, _ in session.modes}:
            known = ", ".join(mid for mid, _ in session.modes)
            raise AcpNvimError(f"{session.key}: no mode {mode_id!r} (modes: {known})")
        await session.set_mode(mode_id)

    def cmd_model(self, request: dict[str, Any]) -> None:
        """``:Ai model [value]``: the agent's model config option."""
        session = self._app._require_current()
        option = session.details.option("model")
        if option is None:
            raise AcpNvimError(f"{session.key}: the agent offers no model choice")
        self._option(session, option, request.get("args") or [])

    def cmd_config(self, request: dict[str, Any]) -> None:
        """``:Ai config [id [value]]``: any config option the agent offers."""
        session = self._app._require_current()
        args = request.get("args") or []
        if not session.details.options:
            raise AcpNvimError(f"{session.key}: the agent offers no config options")
        if not args:
            self._spawn(self._pick_option(session), "pick a config option")
            return
        option = session.details.option_by_id(args[0])
        if option is None:
            known = ", ".join(o.id for o in session.details.options)
            raise AcpNvimError(f"{session.key}: no config option {args[0]!r} (options: {known})")
        self._option(session, option, args[1:])

    async def _pick_option(self, session: Session) -> None:
        options = session.details.options
        labels = [f"{o.name}: {o.current_name()}" for o in options]
        index = await self._editor.choose(f"{session.key}: config option", labels)
        if index is not None:
            await self._pick_value(session, options[index])

    def _option(self, session: Session, option: ConfigOption, args: list[str]) -> None:
        if not args:
            self._spawn(self._pick_value(session, option), f"pick {option.name}")
            return
        self._spawn(self._set_option(session, option, _parse_value(option, args[0])), f"set {option.name}")

    async def _pick_value(self, session: Session, option: ConfigOption) -> None:
        values: list[str | bool]
        if option.is_boolean:
            labels, values = ["on", "off"], [True, False]
        else:
            labels = [f"{v.name}{'  ← current' if v.value == option.current else ''}" for v in option.values]
            values = [v.value for v in option.values]
        index = await self._editor.choose(f"{session.key}: {option.name}", labels)
        if index is not None:
            await self._set_option(session, option, values[index])

    async def _set_option(self, session: Session, option: ConfigOption, value: str | bool) -> None:
        await session.set_config_option(option.id, value)
        changed = session.details.option_by_id(option.id)
        session.transcript.notice(f"{option.name}: {(changed or option).current_name()}", "info")

    # -- the queue ---------------------------------------------------------------------

    def cmd_queue(self, request: dict[str, Any]) -> None:
        """``:Ai queue`` lists, ``:Ai queue edit`` edits, ``:Ai queue clear`` drops queued prompts."""
        session = self._app._require_current()
        sub = (request.get("args") or ["show"])[0]
        if sub == "clear":
            count = len(session.queue)
            session.edit_queue([])
            self._editor.notify(f"{session.key}: dropped {count} queued prompt(s)")
        elif sub == "edit":
            items = [{"id": i + 1, "text": p.text, "context": ", ".join(a.label for a in p.attachments)}
                     for i, p in enumerate(session.queue)]
            self._app.bridge.lua_async("require('acp_nvim.views').edit_queue(...)", session.key, items)
            self._queue_snapshot[session.key] = list(session.queue)
        elif sub == "show":
            lines = [f"{i + 1}. {_preview(p.text)}" for i, p in enumerate(session.queue)]
            self._editor.notify(f"{session.key}: " + ("\n".join(lines) if lines else "the queue is empty"))
        else:
            raise AcpNvimError("usage: :Ai queue [show|edit|clear]")

    def queue_set(self, key: str, items: list[dict[str, Any]]) -> None:
        """The queue editor was written: rebuild the queue (prompts already sent are skipped)."""
        session = self._app._session(key)
        snapshot = self._queue_snapshot.get(key, [])
        waiting = {id(p) for p in session.queue}
        prompts: list[Prompt] = []
        for item in items:
            index, text = int(item.get("id") or 0), str(item.get("text") or "")
            base = snapshot[index - 1] if 0 < index <= len(snapshot) else None
            if base is not None and id(base) not in waiting:
                continue  # it started while the editor was open
            if text or (base is not None and base.attachments):
                prompts.append(Prompt(text, list(base.blocks), list(base.attachments)) if base else Prompt(text))
        session.edit_queue(prompts)
        self._editor.notify(f"{key}: {len(prompts)} prompt(s) queued")

    # -- locations and blocks ------------------------------------------------------------

    def cmd_locations(self, request: dict[str, Any]) -> None:
        """``:Ai locations``: every tool call location of the session to the quickfix list."""
        session = self._app._require_current()
        self._quickfix(session, session.transcript.locations(), f"{session.key}: tool call locations")

    def _quickfix(self, session: Session, locations: list[tuple[str, int | None, str]], title: str) -> None:
        if not locations:
            raise AcpNvimError(f"{session.key}: no tool call locations yet")
        items = [{"filename": path, "lnum": line or 1, "text": label} for path, line, label in locations]
        self._app.bridge.lua_async("require('acp_nvim.views').quickfix(...)", title, items)

    def action(self, name: str, key: str, block_id: int | Any) -> None:
        """A chat key: ``open`` a block (diff, or full text) or its ``locations``."""
        if name == "queue_set":
            self.queue_set(key, block_id if isinstance(block_id, list) else [])
            return
        session = self._app._session(key)
        state = session.transcript.tool_call_of(int(block_id or 0))
        if name == "locations":
            if state is not None and state.locations:
                self._quickfix(session, [(p, ln, state.title) for p, ln in state.locations], state.title)
            else:
                self.cmd_locations({})
        elif name == "open":
            self._open_block(session, int(block_id), state)
        else:
            raise AcpNvimError(f"unknown chat action {name!r}")

    def _open_block(self, session: Session, block_id: int, state: Any) -> None:
        if state is not None and state.diffs():
            name, text, filetype = f"acp://diff/{session.key}/{block_id}", state.diff_text(), "diff"
        else:
            text = session.transcript.full_text(block_id)
            if text is None:
                return
            name, filetype = f"acp://block/{session.key}/{block_id}", "markdown"
        self._app.bridge.lua_async("require('acp_nvim.views').show(...)", name, text.split("\n"), filetype)


def _session_label(session: Session, current: bool) -> str:
    title = f" · {session.title}" if session.title else ""
    return f"{session.key} · {session.state}{title}{'  ← current' if current else ''}"


def _parse_value(option: ConfigOption, raw: str) -> str | bool:
    if option.is_boolean:
        if raw.lower() not in ("on", "off", "true", "false"):
            raise AcpNvimError(f"{option.name}: expected on or off")
        return raw.lower() in ("on", "true")
    values = {v.value for v in option.values}
    if values and raw not in values:
        raise AcpNvimError(f"{option.name}: no value {raw!r} (values: {', '.join(sorted(values))})")
    return raw


def _preview(text: str) -> str:
    line = text.split("\n", 1)[0]
    return line if len(line) <= QUEUE_PREVIEW and "\n" not in text else line[:QUEUE_PREVIEW] + " …"


def describe_chat(session: Session) -> dict[str, Any]:
    """The chat's part of a session's state in Lua: model, tokens, queue, counters, commands."""
    model = session.details.option("model")
    return {
        "model": model.current_name() if model is not None else "",
        "tokens": session.details.tokens(),
        "queue": [_preview(p.text) for p in session.queue],
        "command_info": [{"name": n, "description": d} for n, d in session.details.commands],
        "turns": session.details.turns, "stop_reason": session.details.stop_reason,
        "asked": session.details.asked, "started": session.session_id is not None,
    }
