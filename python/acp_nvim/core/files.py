"""``fs/*`` for the agent: unsaved buffers first, the disk otherwise, always inside the roots."""

from __future__ import annotations

import asyncio
from pathlib import Path

from acp import RequestError
from acp.schema import ReadTextFileResponse

from .paths import PathPolicy
from .port import EditorPort
from .text_slice import slice_lines

MAX_READ_BYTES = 32 * 1024 * 1024


class FileService:
    """Answers the agent's file requests through the editor port and the path policy."""

    def __init__(self, editor: EditorPort, policy: PathPolicy) -> None:
        self._editor = editor
        self._policy = policy

    async def read(self, path: str, line: int | None, limit: int | None) -> ReadTextFileResponse:
        resolved = self._policy.check(path)
        text = await self._editor.buffer_text(str(resolved))
        if text is None:
            text = await asyncio.to_thread(_read_disk, resolved)
        return ReadTextFileResponse(content=slice_lines(text, line, limit))

    async def write(self, path: str, content: str) -> None:
        resolved = self._policy.check(path)
        if not await self._editor.write_buffer(str(resolved), content):
            await asyncio.to_thread(_write_disk, resolved, content)


def _read_disk(path: Path) -> str:
    if not path.exists():
        raise RequestError.resource_not_found(str(path))
    if path.stat().st_size > MAX_READ_BYTES:
        raise RequestError.invalid_params({"path": str(path), "reason": "file too large"})
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise RequestError.invalid_params({"path": str(path), "reason": "not valid UTF-8 text"}) from None


def _write_disk(path: Path, content: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode("utf-8"))
