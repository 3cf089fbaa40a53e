"""Turns what the user sends (``:Ai send`` with its range, or the chat's prompt area) into a
prompt with context: the selected lines as they are in the buffer now, unsaved edits
included, and every ``@path`` mention that names an existing file or folder.
"""

from __future__ import annotations

import pynvim

from ...core.prompting import attachments
from ...core.session.session import Prompt
from ..commands.command_context import CommandRequest


def prompt_from_request(nvim: pynvim.Nvim, request: CommandRequest, cwd: str) -> Prompt:
    """An ``:Ai send`` request: its text, its range (if any) and its mentions."""
    text = request.text
    context = attachments.mentions(text, cwd)
    if request.range:
        context.insert(0, _range(nvim, request, cwd))
        text = text or f"(context: {context[0].label})"
    return Prompt(text, attachments=context)


def prompt_from_text(text: str, cwd: str) -> Prompt:
    """Text typed in a chat buffer's prompt area, with its ``@path`` mentions attached."""
    return Prompt(text, attachments=attachments.mentions(text, cwd))


def _range(nvim: pynvim.Nvim, request: CommandRequest, cwd: str) -> attachments.Attachment:
    line1, line2 = request.line1, request.line2
    if request.lines is not None:  # sent by :Ai itself, so the handler makes no call that could yield
        return attachments.for_range(request.bufname, cwd, line1, line2, request.lines)
    buf = nvim.buffers[request.buf]
    return attachments.for_range(buf.name, cwd, line1, line2, buf[line1 - 1 : line2])
