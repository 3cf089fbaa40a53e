"""Turns an ``:Ai send`` invocation (text, range, buffer) into a prompt with context blocks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pynvim
from acp import embedded_text_resource, resource_block

from ..core.session import Prompt


def prompt_from_request(nvim: pynvim.Nvim, request: dict[str, Any]) -> Prompt:
    """The prompt text plus, for a range, the selected lines as an embedded resource."""
    text = str(request.get("text") or "")
    if not request.get("range"):
        return Prompt(text)
    buf = nvim.buffers[int(request["buf"])]
    line1, line2 = int(request["line1"]), int(request["line2"])
    lines = buf[line1 - 1 : line2]
    name = buf.name or f"buffer-{buf.number}"
    uri = f"{Path(name).resolve().as_uri()}#L{line1}-L{line2}" if buf.name else f"untitled:{name}"
    block = resource_block(embedded_text_resource(uri, "\n".join(lines) + "\n"))
    label = f"{Path(name).name}:{line1}-{line2}"
    return Prompt(text or f"(context: {label})", [block])
