"""The chat's media keys (``:help acp_nvim-media``): ``gf``/``<CR>`` open a link or a resource in a
buffer, ``gx`` saves an image or audio and opens it with ``vim.ui.open``, and an image is shown inline
where an image plugin is installed. Lua sends the block and the line under the cursor; only a line the
session's media shelf made for that block opens anything."""

from __future__ import annotations

from typing import Any

from ...core.errors import AcpNvimError
from ...core.files.paths import PathRefused
from ...core.media import store
from ...core.media.items import MediaItem
from ...core.session.session import Session
from ..commands.command_context import CommandContext

ACTIONS = ("media_file", "media_open", "media_inline")
WEB_SCHEMES = ("http://", "https://")


def act(ctx: CommandContext, name: str, session: Session, arg: Any) -> None:
    """Run media action ``name`` on the item at ``arg`` ({id, line}); a problem is one line."""
    if not isinstance(arg, dict) or not isinstance(arg.get("id"), int) or not isinstance(arg.get("line"), str):
        raise AcpNvimError(f"chat {name}: expected {{id, line}}, got {arg!r:.80}")
    item = _item(session, arg["id"], arg["line"])
    if name == "media_file":
        _file(ctx, session, item, arg["id"])
    else:
        ctx.spawn(_saved(ctx, session, item, arg["id"], inline=name == "media_inline"), "open media")


def _item(session: Session, block_id: int, line: str) -> MediaItem:
    state = session.transcript.tools.tool_call_of(block_id)
    contents = [c.content for c in state.content if getattr(c, "type", None) == "content"] if state else None
    item = session.transcript.media.find(block_id, line, contents)
    if item is None:
        raise AcpNvimError("this media line is no longer available (a reopened session keeps only its text)")
    return item


def _file(ctx: CommandContext, session: Session, item: MediaItem, block_id: int) -> None:
    """A link or resource into a buffer: a workspace file (the path policy of fs/read) or a scratch buffer."""
    if item.kind in ("image", "audio", "blob"):
        raise AcpNvimError(f"{item.kind}: {item.problem}" if item.problem else f"gx opens the {item.kind}")
    if item.kind == "resource" and item.text is not None:
        name = f"acp://resource/{session.key}/{block_id}/{item.scratch_name()}"
        ctx.bridge.lua_async("require('acp_nvim.chat.media').show_text(...)", name, item.text.split("\n"))
        return
    ctx.bridge.lua_async("require('acp_nvim.chat.media').edit(...)", _workspace_path(session, item))


def _workspace_path(session: Session, item: MediaItem) -> str:
    path = item.file_path()
    if path is None:
        hint = " (gx opens web links)" if item.uri.startswith(WEB_SCHEMES) else ""
        raise AcpNvimError(f"{item.uri}: not a file:// uri{hint}")
    try:
        return str(session.files.policy.check(path))
    except PathRefused as exc:
        raise AcpNvimError(f"refused to open {exc.path}: {exc.reason}") from None


async def _saved(ctx: CommandContext, session: Session, item: MediaItem, block_id: int, inline: bool) -> None:
    try:
        if item.kind in ("link", "resource"):
            target = item.uri if item.uri.startswith(WEB_SCHEMES) else _workspace_path(session, item)
        else:
            target = store.save(item, await ctx.editor.state_dir())
    except (AcpNvimError, OSError) as exc:
        if not inline:
            ctx.notify(str(exc), "warn")
        return
    if inline:
        ctx.bridge.lua_async("require('acp_nvim.chat.media').inline(...)", session.key, block_id, target)
    else:
        ctx.bridge.lua_async("require('acp_nvim.chat.media').ui_open(...)", target)
