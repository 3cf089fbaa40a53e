"""The per-turn context handed to every scenario coroutine."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp.helpers import ContentBlock, update_agent_message_text, update_agent_thought_text
from acp.interfaces import Client
from acp.schema import FileSystemCapabilities, ToolCallUpdate

from .permissions import Decision, decide, permission_options
from .session import SessionState

RawWriter = Callable[[bytes], Awaitable[None]]


def count_arg(args: list[str], default: int) -> int:
    """Parse the first argument as a non-negative count, falling back to ``default``."""
    try:
        return max(0, int(args[0]))
    except (IndexError, ValueError):
        return default


def error_text(exc: BaseException) -> str:
    """Render a RequestError / OSError as a one-line message."""
    data = getattr(exc, "data", None)
    return f"{exc}: {data}" if data else str(exc)


class TurnCancelled(Exception):
    """Raised inside a scenario when the client cancelled a permission request."""


@dataclass
class Turn:
    """What a scenario needs: the client connection, the session and the parsed prompt."""

    client: Client
    session: SessionState
    fs: FileSystemCapabilities
    blocks: list[ContentBlock]
    text: str
    args: list[str]
    rest: str
    raw_write: RawWriter
    transcript: list[str] = field(default_factory=list)
    terminal: bool = False
    """Whether the client offers ``terminal/*``."""

    @property
    def session_id(self) -> str:
        """The id of the session this turn runs in."""
        return self.session.session_id

    @property
    def client_reads(self) -> bool:
        """Whether the client advertised ``fs.readTextFile``."""
        return bool(self.fs.read_text_file)

    @property
    def client_writes(self) -> bool:
        """Whether the client advertised ``fs.writeTextFile``."""
        return bool(self.fs.write_text_file)

    async def send(self, update: Any) -> None:
        """Send one ``session/update`` notification."""
        await self.client.session_update(session_id=self.session_id, update=update)

    async def say(self, text: str) -> None:
        """Send one agent message chunk and record it in the transcript."""
        self.transcript.append(text)
        await self.send(update_agent_message_text(text))

    async def stream(self, text: str, size: int = 8) -> None:
        """Send ``text`` as many small message chunks, yielding between them."""
        for start in range(0, len(text), size):
            await self.say(text[start : start + size])
            await asyncio.sleep(0)

    async def think(self, text: str) -> None:
        """Send one agent thought chunk."""
        await self.send(update_agent_thought_text(text))

    def resolve(self, path: str) -> str:
        """Resolve ``path`` against the session cwd (absolute paths pass through)."""
        return os.path.normpath(os.path.join(self.session.cwd, os.path.expanduser(path)))

    async def read_text(self, path: str) -> str:
        """Read a file through ``fs/read_text_file`` if advertised, else from disk.

        Raises ``acp.RequestError`` (client error) or ``OSError`` (disk error).
        """
        if self.client_reads:
            response = await self.client.read_text_file(session_id=self.session_id, path=path)
            return response.content
        return Path(path).read_text(encoding="utf-8")

    async def write_text(self, path: str, content: str, *, via_client: bool = True) -> None:
        """Write a file through ``fs/write_text_file`` if advertised (and wanted), else to disk."""
        if via_client and self.client_writes:
            await self.client.write_text_file(session_id=self.session_id, path=path, content=content)
            return
        Path(path).write_text(content, encoding="utf-8")

    async def ask_permission(self, tool_call: ToolCallUpdate) -> Decision:
        """Ask the client for permission; raise TurnCancelled if the client cancelled it."""
        response = await self.client.request_permission(
            session_id=self.session_id, tool_call=tool_call, options=permission_options()
        )
        decision = decide(response)
        if decision == "cancelled":
            raise TurnCancelled
        return decision


def fenced(text: str, lang: str = "") -> str:
    """Wrap ``text`` in a markdown code fence longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{fence}{lang}\n{body}{fence}\n"
