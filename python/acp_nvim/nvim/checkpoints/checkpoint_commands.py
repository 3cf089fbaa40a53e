"""``:Ai checkpoints`` (the turns of the current session, newest first: ``lua/acp_nvim/checkpoints/init.lua``),
``:Ai rewind [turn]``, ``:Ai rewind undo``, and the keys behind them: a turn's diff, a past prompt
put in the chat's prompt area, and that prompt sent again from before its turn.

The work is the session's (``core/session/rewind.py``); this module parses, runs it in a task and
tells the user how it went. Files a rewind deleted lose their clean buffers.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ...core.checkpoints import listing
from ...core.checkpoints.errors import CheckpointError
from ...core.errors import AcpNvimError
from ...core.session.rewind import Done
from ...core.session.session import Session
from ..chat.context import prompt_from_text
from ..commands.command_context import CommandContext, CommandRequest

UNDO = "undo"
USAGE = "usage: :Ai rewind [turn] | :Ai rewind undo"
ACTIONS = ("edit_turn", "resubmit", "checkpoint_diff", "checkpoints_refresh")
"""The chat and list keys this module answers (``host.call.chat(action, key, arg)``)."""


def cmd_checkpoints(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai checkpoints``: the list of the current session's turns."""
    session = ctx.require_current()
    _enabled(session)
    ctx.spawn(_show(ctx, session, open_view=True), f"{session.key} checkpoints")


def cmd_rewind(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai rewind [turn]`` / ``:Ai rewind undo``."""
    session = ctx.require_current()
    if len(request.args) > 1:
        raise AcpNvimError(USAGE)
    if request.args == [UNDO]:
        ctx.spawn(_run(ctx, session, session.rewinder.undo()), f"{session.key} rewind undo")
        return
    turn = _turn(request.args[0]) if request.args else None
    ctx.spawn(_run(ctx, session, session.rewinder.rewind(turn)), f"{session.key} rewind")


def act(ctx: CommandContext, name: str, key: str, arg: Any) -> None:
    """A key of the checkpoints list or the chat (one of ``ACTIONS``)."""
    session = ctx.session(key)
    _enabled(session)
    table = arg if isinstance(arg, dict) else {}
    if name == "edit_turn":
        checkpoint = (session.checkpoints.of_block(int(table.get("block") or 0)) if "block" in table
                      else session.checkpoints.find(_turn(table.get("turn"))))
        if checkpoint is None:
            raise AcpNvimError(f"{key}: this prompt has no checkpoint (it was sent before this chat, or did not "
                               "reach the agent): nothing to edit and run again")
        if not checkpoint.live:
            raise AcpNvimError(f"{key}: turn {checkpoint.turn} was taken back by a rewind: :Ai rewind undo brings it "
                               "back first")
        ctx.bridge.lua_async("require('acp_nvim.prompt').edit_turn(...)", key, checkpoint.turn, checkpoint.prompt)
    elif name == "resubmit":
        text = str(table.get("text") or "")
        prompt = prompt_from_text(text, session.cwd)
        ctx.make_current(session.key)
        ctx.spawn(_run(ctx, session, session.rewinder.resubmit(_turn(table.get("turn")), prompt)),
                  f"{key} resubmit")
    elif name == "checkpoint_diff":
        ctx.spawn(_diff(ctx, session, _turn(arg if not isinstance(arg, dict) else table.get("turn"))),
                  f"{key} checkpoint diff")
    elif name == "checkpoints_refresh":
        ctx.spawn(_show(ctx, session, open_view=False), f"{key} checkpoints")


def _turn(value: object) -> int:
    try:
        turn = int(str(value))
    except ValueError:
        raise AcpNvimError(f"{USAGE} (not a turn number: {value!r})") from None
    if turn < 1:
        raise AcpNvimError(f"{USAGE} (turns are numbered from 1)")
    return turn


def _enabled(session: Session) -> None:
    if not session.checkpoints.enabled:
        raise CheckpointError(f"{session.key}: checkpoints are off (setup: checkpoints = false)")


async def _run(ctx: CommandContext, session: Session, work: Any) -> None:
    try:
        done: Done = await work
    except AcpNvimError as exc:
        ctx.notify(str(exc), "error")
        return
    for path in done.removed:
        await ctx.editor.drop_buffer(path)
    ctx.notify(f"{session.key}: {done.message}")
    ctx.bridge.lua_async("require('acp_nvim.review.changes').refresh()")
    await _show(ctx, session, open_view=False)


async def _show(ctx: CommandContext, session: Session, *, open_view: bool) -> None:
    """Send the rows to the list (``open_view``: open it; else only refresh one that is open)."""
    recorder = session.checkpoints
    await recorder.flush()
    store = recorder.store_now
    rows = [] if store is None else await asyncio.to_thread(
        listing.rows, list(recorder.checkpoints), store, session.files.opener, recorder.settings.max_file_bytes)
    undo = session.rewinder.done[-1].label if session.rewinder.done else ""
    function = "open" if open_view else "refresh"
    ctx.bridge.lua_async(f"require('acp_nvim.checkpoints').{function}(...)", session.key,
                         [row.to_lua() for row in rows], undo)


async def _diff(ctx: CommandContext, session: Session, turn: int) -> None:
    recorder = session.checkpoints
    await recorder.flush()
    checkpoint, store = recorder.find(turn), recorder.store_now
    if checkpoint is None or store is None:
        ctx.notify(f"{session.key}: there is no turn {turn}", "error")
        return
    lines = await asyncio.to_thread(listing.diff_lines, checkpoint, store, session.transcript.paths.show)
    ctx.bridge.lua_async("require('acp_nvim.checkpoints').show_diff(...)", session.key, turn, lines)
