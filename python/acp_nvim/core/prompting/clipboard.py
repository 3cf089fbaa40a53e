"""An image from the system clipboard, through the clipboard tools that are installed.

Tried in order: ``wl-paste`` (Wayland), ``xclip`` (X11), ``pngpaste`` (macOS). Each runs as
a subprocess on the event loop (never blocking it) with a timeout; the first that gives an
image wins. No tool installed, or no image in the clipboard, is a clear ``ClipboardError``.
"""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import dataclass

from ..errors import AcpNvimError
from . import media

TIMEOUT = 5.0
MAX_BYTES = 64 * 1024 * 1024
"""A clipboard image larger than this is refused."""
PREFERRED = ("image/png", "image/jpeg", "image/webp", "image/gif")


class ClipboardError(AcpNvimError):
    """No clipboard tool, or no image in the clipboard."""


@dataclass(frozen=True, slots=True)
class Tool:
    """One clipboard program: how it lists the clipboard's types and how it prints one."""

    name: str
    types: tuple[str, ...]
    """Arguments that list the offered types, one per line (empty: the tool prints a PNG directly)."""
    fetch: tuple[str, ...]
    """Arguments that print the clipboard as ``{type}``."""


TOOLS = (
    Tool("wl-paste", ("--list-types",), ("--no-newline", "--type", "{type}")),
    Tool("xclip", ("-selection", "clipboard", "-t", "TARGETS", "-o"),
         ("-selection", "clipboard", "-t", "{type}", "-o")),
    Tool("pngpaste", (), ("-",)),
)


@dataclass(frozen=True, slots=True)
class ClipboardImage:
    data: bytes
    mime_type: str
    tool: str


async def read_image() -> ClipboardImage:
    """The clipboard's image; ClipboardError says why there is none."""
    found = [tool for tool in TOOLS if shutil.which(tool.name)]
    if not found:
        raise ClipboardError("no clipboard tool found: install wl-clipboard (Wayland), xclip (X11) "
                             "or pngpaste (macOS) to paste images")
    problems = []
    for tool in found:
        try:
            return await _read_with(tool)
        except ClipboardError as exc:
            problems.append(f"{tool.name}: {exc}")
    raise ClipboardError("no image in the clipboard (" + "; ".join(problems) + ")")


async def _read_with(tool: Tool) -> ClipboardImage:
    mime = "image/png"
    if tool.types:
        offered = (await _run(tool.name, tool.types)).decode("utf-8", "replace").split()
        images = [t for t in PREFERRED if t in offered] or [t for t in offered if t.startswith("image/")]
        if not images:
            raise ClipboardError("it holds no image")
        mime = images[0]
    data = await _run(tool.name, tuple(arg.format(type=mime) for arg in tool.fetch))
    found = media.sniff(data[: media.SNIFF_BYTES])
    if found is None or not found.startswith("image/"):
        raise ClipboardError("it holds no image")
    return ClipboardImage(data, found, tool.name)


async def _run(program: str, args: tuple[str, ...]) -> bytes:
    try:
        proc = await asyncio.create_subprocess_exec(program, *args, stdin=asyncio.subprocess.DEVNULL,
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    except OSError as exc:
        raise ClipboardError(f"cannot run it: {exc.strerror or exc}") from None
    try:
        out, err = await asyncio.wait_for(proc.communicate(), TIMEOUT)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise ClipboardError(f"no answer within {TIMEOUT:g} s") from None
    if proc.returncode != 0:
        reason = err.decode("utf-8", "replace").strip().splitlines()
        raise ClipboardError(reason[-1] if reason else f"exit code {proc.returncode}")
    if len(out) > MAX_BYTES:
        raise ClipboardError(f"the image is larger than {media.size_text(MAX_BYTES)}")
    return out
