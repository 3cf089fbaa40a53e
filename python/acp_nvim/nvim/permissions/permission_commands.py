"""``:Ai rules`` and ``:Ai policy``: remembered permission rules and per-session policy modes."""

from __future__ import annotations

from pathlib import Path

from ...core.errors import AcpNvimError
from ...core.permissions.broker import RULES_FILE
from ...core.permissions.policy import POLICIES
from ...core.permissions.rules import RuleStore
from ..commands.command_context import CommandContext, CommandRequest


class RulesFile:
    """The rules file every session shares (a service of the context)."""

    def __init__(self) -> None:
        self.store: RuleStore | None = None


def rule_store(ctx: CommandContext) -> RuleStore:
    """The shared rule store (greenlet context: the first call asks Neovim for its state dir)."""
    holder = ctx.service(RulesFile)
    if holder.store is None:
        holder.store = RuleStore.at(Path(ctx.nvim.funcs.stdpath("state"), *RULES_FILE))
    return holder.store


def cmd_rules(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai rules`` lists the rules; ``:Ai rules remove {n}`` forgets rule n."""
    args = request.args
    store = rule_store(ctx)  # resolved here: the tasks below may not call Neovim directly
    if not args:
        ctx.spawn(_show(ctx, store), "rules")
        return
    if args[0] != "remove" or len(args) != 2 or not args[1].isdigit():
        raise AcpNvimError("usage: :Ai rules  or  :Ai rules remove {number}")
    ctx.spawn(_remove(ctx, store, int(args[1]) - 1), "remove rule")


def cmd_policy(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai policy`` shows the current session's policy; ``:Ai policy {mode}`` sets it."""
    session = ctx.require_current()
    if not request.args:
        ctx.notify(f"{session.key}: permission policy {session.view.policy} (one of {', '.join(POLICIES)})")
        return
    try:
        session.permissions.set_policy(request.args[0])
    except ValueError as exc:
        raise AcpNvimError(str(exc)) from None
    ctx.session_changed(session.key)
    ctx.notify(f"{session.key}: permission policy {request.args[0]}")


async def _show(ctx: CommandContext, store: RuleStore) -> None:
    rules = await store.all()
    lines = [f"{i}. {rule.describe()}" for i, rule in enumerate(rules, 1)]
    ctx.bridge.lua_async("require('acp_nvim.question.rules').show(...)", lines)


async def _remove(ctx: CommandContext, store: RuleStore, index: int) -> None:
    try:
        removed = await store.remove(index)
    except AcpNvimError as exc:
        ctx.notify(str(exc), "error")
        return
    ctx.notify(f"forgot: {removed.describe()}")
    await _show(ctx, store)
