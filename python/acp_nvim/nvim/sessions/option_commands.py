"""``:Ai mode``, ``:Ai model`` and ``:Ai config``: the agent's modes and session config options."""

from __future__ import annotations

from ...core.conversation.details import ConfigOption
from ...core.errors import AcpNvimError
from ...core.session.session import Session
from ..commands.command_context import CommandContext, CommandRequest

ABOUT_CHARS = 80
"""Characters of a mode's, option's or value's description shown beside it in a picker."""


def cmd_mode(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai mode [id]``: switch mode, or pick one (current marked)."""
    session = ctx.require_current()
    option = session.view.option("mode")
    if option is not None and option.category == "mode" and not option.is_boolean:
        _option(ctx, session, option, request.args)  # a mode option wins over modes (ACP)
        return
    if session.view.modes:
        if request.args:
            ctx.spawn(_set_mode(session, request.args[0]), "set mode")
        else:
            ctx.spawn(_pick_mode(ctx, session), "pick a mode")
        return
    option = session.view.option("mode")
    if option is None:
        raise AcpNvimError(f"{session.key}: the agent offers no modes")
    _option(ctx, session, option, request.args)


async def _pick_mode(ctx: CommandContext, session: Session) -> None:
    view = session.view
    labels = [f"{name} ({mid}){'  ← current' if mid == view.mode else ''}" for mid, name in view.modes]
    notes = [_about(session.details.mode_descriptions.get(mid, "")) for mid, _ in view.modes]
    index = await ctx.editor.choose(f"{session.key}: mode", labels, notes)
    if index is not None:
        await _set_mode(session, view.modes[index][0])


async def _set_mode(session: Session, mode_id: str) -> None:
    modes = session.view.modes
    if mode_id not in {mid for mid, _ in modes}:
        known = ", ".join(mid for mid, _ in modes)
        raise AcpNvimError(f"{session.key}: no mode {mode_id!r} (modes: {known})")
    await session.set_mode(mode_id)


def cmd_model(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai model [value]``: the agent's model config option."""
    session = ctx.require_current()
    option = session.view.option("model")
    if option is None:
        raise AcpNvimError(f"{session.key}: the agent offers no model choice")
    _option(ctx, session, option, request.args)


def cmd_config(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai config [id [value]]``: any config option the agent offers."""
    session = ctx.require_current()
    args = request.args
    if not session.view.options:
        raise AcpNvimError(f"{session.key}: the agent offers no config options")
    if not args:
        ctx.spawn(_pick_option(ctx, session), "pick a config option")
        return
    option = session.view.option_by_id(args[0])
    if option is None:
        known = ", ".join(o.id for o in session.view.options)
        raise AcpNvimError(f"{session.key}: no config option {args[0]!r} (options: {known})")
    _option(ctx, session, option, args[1:])


async def _pick_option(ctx: CommandContext, session: Session) -> None:
    options = session.view.options
    labels = [f"{o.name}: {o.current_name()}" for o in options]
    notes = [_about(o.description) for o in options]
    index = await ctx.editor.choose(f"{session.key}: config option", labels, notes)
    if index is not None:
        await _pick_value(ctx, session, options[index])


def _option(ctx: CommandContext, session: Session, option: ConfigOption, args: list[str]) -> None:
    if not args:
        ctx.spawn(_pick_value(ctx, session, option), f"pick {option.name}")
        return
    ctx.spawn(_set_option(session, option, _parse_value(option, args[0])), f"set {option.name}")


async def _pick_value(ctx: CommandContext, session: Session, option: ConfigOption) -> None:
    values: list[str | bool]
    notes: list[str]
    if option.is_boolean:
        labels, values, notes = ["on", "off"], [True, False], []
    else:
        labels = [f"{v.name}{'  ← current' if v.value == option.current else ''}" for v in option.values]
        values = [v.value for v in option.values]
        notes = [_about(v.description) for v in option.values]
    index = await ctx.editor.choose(f"{session.key}: {option.name}", labels, notes)
    if index is not None:
        await _set_option(session, option, values[index])


async def _set_option(session: Session, option: ConfigOption, value: str | bool) -> None:
    await session.set_config_option(option.id, value)
    changed = session.view.option_by_id(option.id)
    session.transcript.notice(f"{option.name}: {(changed or option).current_name()}", "info")


def _about(description: str) -> str:
    """A description as a picker shows it beside its choice: its first line, cut to ``ABOUT_CHARS``."""
    line = description.strip().split("\n", 1)[0]
    return line if len(line) <= ABOUT_CHARS else line[:ABOUT_CHARS - 1] + "…"


def _parse_value(option: ConfigOption, raw: str) -> str | bool:
    if option.is_boolean:
        if raw.lower() not in ("on", "off", "true", "false"):
            raise AcpNvimError(f"{option.name}: expected on or off")
        return raw.lower() in ("on", "true")
    values = {v.value for v in option.values}
    if values and raw not in values:
        raise AcpNvimError(f"{option.name}: no value {raw!r} (values: {', '.join(sorted(values))})")
    return raw
