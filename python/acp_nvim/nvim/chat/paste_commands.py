"""``:Ai paste [text]``: the system clipboard's image, attached to a prompt.

The image is saved under Neovim's state folder (``acp_nvim/pasted/``). Without text, an
``@path`` mention of it is added to the chat's prompt area: it goes with the next prompt
(delete the mention to drop it). With text, the prompt is sent at once with the image.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from pathlib import Path

from ...core.errors import AcpNvimError
from ...core.prompting import attachments, clipboard, media
from ...core.session.session import Prompt, Session
from ..commands.command_context import CommandContext, CommandRequest

EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}
KEEP_SECONDS = 7 * 24 * 3600
"""Pasted images older than a week are deleted at the next paste."""


def cmd_paste(ctx: CommandContext, request: CommandRequest) -> None:
    """``:Ai paste [text]``: attach the clipboard's image (to the prompt area, or send it with ``text``)."""
    session = ctx.current_or_new(None)
    ctx.open_chat(session, focus=False)
    ctx.spawn(_paste(ctx, session, request.text.strip()), "paste")


async def _paste(ctx: CommandContext, session: Session, text: str) -> None:
    try:
        image = await clipboard.read_image()
    except AcpNvimError as exc:
        ctx.notify(str(exc), "error")
        return
    path = await _save(await ctx.editor.state_dir(), image)
    shown = f"{path} ({media.size_text(len(image.data))}, from {image.tool})"
    if text:
        ctx.submit(session, Prompt(text, attachments=[attachments.for_file(str(path), session.cwd)]))
        ctx.notify(f"pasted image: {shown}")
        return
    added = await ctx.bridge.lua("return require('acp_nvim.host.editor_tools').add_to_prompt(...)", session.key,
                                 f"@{path}")
    where = "it goes with your next prompt" if added else f"mention @{path} in a prompt to send it"
    ctx.notify(f"pasted image: {shown}: {where}")


async def _save(state_dir: str, image: clipboard.ClipboardImage) -> Path:
    if not state_dir:
        raise AcpNvimError("no state folder to keep the pasted image in (stdpath('state') is empty)")
    folder = Path(state_dir) / "acp_nvim" / "pasted"
    name = f"paste-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}{EXTENSIONS.get(image.mime_type, '.png')}"
    path = folder / name
    await asyncio.to_thread(_write, path, image.data)
    return path


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    _prune(path.parent, time.time() - KEEP_SECONDS)


def _prune(folder: Path, before: float) -> None:
    """Delete the pasted images older than ``before`` (they were sent long ago, or never)."""
    for old in folder.glob("paste-*"):
        try:
            if old.is_file() and old.stat().st_mtime < before:
                old.unlink()
        except OSError:
            continue  # gone already, or not ours to delete: the next paste tries again
