"""Turns what the user sends (``:Ai send`` with its range, or the chat's prompt area) into a
prompt with context: the selected lines as they are in the buffer now, unsaved edits
included, and every ``@path`` mention that names an existing file or folder.
"""

from __future__ import annotations

from typing import Any

import pynvim

from ..core.session import attachments
from ..core.session.session import Prompt


def prompt_from_request(nvim: pynvim.Nvim, request: dict[str, Any], cwd: str) -> Prompt:
    """An ``:Ai send`` request: its text, its range (if any) and its mentions."""
    text = str(request.get("text") or "")
    context = attachments.mentions(text, cwd)
    if request.get("range"):
        context.insert(0, _range(nvim, request, cwd))
        text = text or f"(context: {context[0].label})"
    return Prompt(text, attachments=context)


def prompt_from_text(text: str, cwd: str) -> Prompt:
    """Text typed in a chat buffer's prompt area, with its ``@path`` mentions attached."""
    return Prompt(text, attachments=attachments.mentions(text, cwd))


def _range(nvim: pynvim.Nvim, request: dict[str, Any], cwd: str) -> attachments.Attachment:
    line1, line2 = int(request["line1"]), int(request["line2"])
    if "lines" in request:  # sent by :Ai itself, so the handler makes no call that could yield
        return attachments.for_range(str(request.get("bufname") or ""), cwd, line1, line2, request["lines"])
    buf = nvim.buffers[int(request["buf"])]
    return attachments.for_range(buf.name, cwd, line1, line2, buf[line1 - 1 : line2])
