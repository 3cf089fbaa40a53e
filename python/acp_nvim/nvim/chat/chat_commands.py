"""The chat's subcommands (``:Ai sessions``, ``queue``, ``locations``), the actions of its keys
(open a block, its locations, the edited queue) and its part of a session's state in Lua.
"""

from __future__ import annotations

from typing import Any

from ...core.errors import AcpNvimError
from ...core.session.session import Prompt, Session
from ...core.session.view import SessionView
from ...core.transcript.tool_calls import ToolCallState
from ..checkpoints import checkpoint_commands
from ..commands.command_context import CommandContext, CommandRequest
from ..permissions.unreviewed import diff_flagged, revert_flagged
from . import media_commands, turn_keys

QUEUE_PREVIEW = 80


class QueueSnapshots:
    """Per session, the queue as ``:Ai queue edit`` showed it (a service of the context)."""

    def __init__(self) -> None:
        self.shown: dict[str, list[Prompt]] = {}


# -- sessions --------------------------------------------------------------------------

def cmd_sessions(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai sessions``: pick a session (vim.ui.select) and open its chat."""
    sessions = list(ctx.manager.sessions.values())
    if not sessions:
        raise AcpNvimError("no sessions yet: start one with :Ai or :Ai new [agent]")
    ctx.spawn(_pick_session(ctx, sessions), "pick a session")


async def _pick_session(ctx: CommandContext, sessions: list[Session]) -> None:
    labels = [_session_label(s, s.key == ctx.manager.current_key) for s in sessions]
    index = await ctx.editor.choose("acp.nvim sessions", labels)
    if index is not None:
        session = sessions[index]
        ctx.make_current(session.key)
        await ctx.bridge.call(lambda _: ctx.open_chat(session))


def _session_label(session: Session, current: bool) -> str:
    view = session.view
    title = f" · {view.title}" if view.title else ""
    return f"{session.key} · {view.state}{title}{'  ← current' if current else ''}"


# -- the queue -------------------------------------------------------------------------

def cmd_queue(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai queue`` lists, ``:Ai queue edit`` edits, ``:Ai queue clear`` drops queued prompts."""
    session = ctx.require_current()
    sub = (request.args or ["show"])[0]
    if sub == "clear":
        count = len(session.queue)
        session.edit_queue([])
        ctx.notify(f"{session.key}: dropped {count} queued prompt(s)")
    elif sub == "edit":
        items = [{"id": i + 1, "text": p.text, "context": ", ".join(a.label for a in p.attachments)}
                 for i, p in enumerate(session.queue)]
        ctx.bridge.lua_async("require('acp_nvim.chat.opens').edit_queue(...)", session.key, items)
        ctx.service(QueueSnapshots).shown[session.key] = list(session.queue)
    elif sub == "show":
        lines = [f"{i + 1}. {_marked(session, p)}" for i, p in enumerate(session.queue)]
        ctx.notify(f"{session.key}: " + ("\n".join(lines) if lines else "the queue is empty"))
    else:
        raise AcpNvimError("usage: :Ai queue [show|edit|clear]")


def queue_set(ctx: CommandContext, key: str, items: list[dict[str, Any]]) -> None:
    """The queue editor was written: rebuild the queue (prompts already sent are skipped)."""
    session = ctx.session(key)
    snapshot = ctx.service(QueueSnapshots).shown.get(key, [])
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
    ctx.notify(f"{key}: {len(prompts)} prompt(s) queued")


def _marked(session: Session, prompt: Prompt) -> str:
    """A queued prompt's preview, with its steering mark (``[steering]``, ``[not steered: …]``)."""
    mark = session.steering.mark(prompt)
    return f"[{mark}] {_preview(prompt.text)}" if mark else _preview(prompt.text)


def _preview(text: str) -> str:
    line = text.split("\n", 1)[0]
    return line if len(line) <= QUEUE_PREVIEW and "\n" not in text else line[:QUEUE_PREVIEW] + " …"


# -- locations and blocks --------------------------------------------------------------

def cmd_locations(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai locations``: every tool call location of the session to the quickfix list."""
    session = ctx.require_current()
    _quickfix(ctx, session, session.transcript.tools.locations(), f"{session.key}: tool call locations")


def _quickfix(ctx: CommandContext, session: Session, locations: list[tuple[str, int | None, str]],
              title: str) -> None:
    if not locations:
        raise AcpNvimError(f"{session.key}: no tool call locations yet")
    items = [{"filename": path, "lnum": line or 1, "text": label} for path, line, label in locations]
    ctx.bridge.lua_async("require('acp_nvim.chat.opens').quickfix(...)", title, items)


def chat_action(ctx: CommandContext, name: str, key: str, arg: Any) -> None:
    """A chat key: ``open`` a block (diff, or full text), ``fold`` its ▸ line (a subagent's calls, a
    compaction's summary), its ``locations``, ``revert`` a flagged unreviewed edit, or ``queue_set``;
    or ``page``: the chat scrolled up to blocks not drawn yet."""
    if name == "queue_set":
        queue_set(ctx, key, arg if isinstance(arg, list) else [])
        return
    if name in checkpoint_commands.ACTIONS:
        checkpoint_commands.act(ctx, name, key, arg)
        return
    session = ctx.session(key)
    if name == "page":
        _page(ctx, session, arg)
        return
    if name in turn_keys.NAMES:
        turn_keys.act(ctx, name, session)
        return
    if name in media_commands.ACTIONS:
        media_commands.act(ctx, name, session, arg)
        return
    state = session.transcript.tools.tool_call_of(int(arg or 0))
    if name == "locations":
        if state is not None and state.locations:
            _quickfix(ctx, session, [(p, ln, state.title) for p, ln in state.locations], state.title)
        else:
            cmd_locations(ctx, CommandRequest(sub="locations"))
    elif name == "open":
        if not diff_flagged(ctx, session, int(arg)):
            _open_block(ctx, session, int(arg), state)
    elif name == "fold":
        if not session.transcript.toggle(int(arg or 0)):
            _open_block(ctx, session, int(arg or 0), state)
    elif name == "revert":
        revert_flagged(ctx, session, int(arg or 0))
    else:
        raise AcpNvimError(f"unknown chat action {name!r}")


def _page(ctx: CommandContext, session: Session, arg: Any) -> None:
    """The chat scrolled up to a gap: draw the newest page of its blocks (a long transcript)."""
    if not isinstance(arg, dict) or not isinstance(arg.get("before"), int):
        raise AcpNvimError(f"chat page: expected {{before, after}}, got {arg!r:.80}")
    after = arg.get("after")
    ctx.editor.render(session.key, session.chat.page(arg["before"], after if isinstance(after, int) else None))


def _open_block(ctx: CommandContext, session: Session, block_id: int, state: ToolCallState | None) -> None:
    terminal = next((t for t in (state.terminal_ids() if state else []) if session.terminals.shown(t)), None)
    if terminal is not None:  # <CR> opens the terminal buffer
        ctx.bridge.lua_async("require('acp_nvim.host.terminal').show(...)", terminal)
        return
    if state is not None and state.diffs():
        name, text, filetype = f"acp://diff/{session.key}/{block_id}", state.diff_text(), "diff"
    else:
        full = session.transcript.full_text(block_id)
        if full is None:
            return
        name, text, filetype = f"acp://block/{session.key}/{block_id}", full, "markdown"
    ctx.bridge.lua_async("require('acp_nvim.chat.opens').show(...)", name, text.split("\n"), filetype)


# -- state for Lua ---------------------------------------------------------------------

def describe_chat(view: SessionView) -> dict[str, Any]:
    """The chat's part of a session's state in Lua: model, tokens, queue, counters, commands."""
    model = view.option("model")
    return {
        "model": model.current_name() if model is not None else "",
        "tokens": view.tokens,
        "limits": view.limits,
        "queue": [f"[{mark}] {_preview(text)}" if mark else _preview(text)
                  for text, mark in zip(view.queued, view.marks, strict=True)],
        "command_info": [{"name": n, "description": d, "hint": dict(view.command_hints).get(n, "")}
                         for n, d in view.commands],
        "turns": view.turns, "stop_reason": view.stop_reason,
        "asked": view.asked, "started": view.started,
        "recovery": view.recovery,
        "steer": view.steer, "steer_flipped": view.steer_flipped, "failure": view.failure or False,
        "subagents": view.subagents,
    }
