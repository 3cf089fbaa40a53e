"""A prompt as the user composed it, and the turn that sends it.

A turn tells the agent how its reviewed edits landed (the broker's notes), sends the text,
the extra blocks and the attached context, watches the files around it (the turn's
changeset, disk writes reconciled at its end) and records how it ended.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from acp import RequestError, text_block
from acp.client.connection import ClientSideConnection
from acp.helpers import ContentBlock
from acp.schema import Usage

from ..files.side import FileSide
from ..transcript.transcript import Transcript
from . import attachments
from .details import SessionDetails


@dataclass(slots=True)
class Prompt:
    """A prompt as the user composed it: the text shown in the chat and the blocks sent."""

    text: str
    blocks: list[ContentBlock] = field(default_factory=list)
    attachments: list[attachments.Attachment] = field(default_factory=list)
    """Context (ranges, @mentions) sent as embedded resources or links, per the agent's capabilities."""


class TurnRunner:
    """Runs one prompt turn of a session, start to end."""

    def __init__(self, transcript: Transcript, details: SessionDetails, files: FileSide,
                 notes: Callable[[], list[ContentBlock]], pack: attachments.Packer) -> None:
        self._transcript = transcript
        self._details = details
        self._files = files
        self._notes = notes
        self._pack = pack

    async def run(self, conn: ClientSideConnection, session_id: str, accepts: attachments.Accepts,
                  prompt: Prompt) -> None:
        """Send ``prompt`` and wait for the turn's end; a failed prompt is shown, never raised."""
        self._transcript.user_message(prompt.text, [a.label for a in prompt.attachments])
        context = await self._pack.blocks(prompt.attachments, accepts)
        blocks = [*self._notes(), text_block(prompt.text), *prompt.blocks, *context]
        await self._files.begin_turn()
        try:
            response = await conn.prompt(session_id=session_id, prompt=blocks)
        except RequestError as exc:
            self._transcript.notice(f"prompt failed: {exc}", "error")
            self._details.turn_ended("error")
            return
        except ConnectionError:
            self._details.turn_ended("error")
            return  # the exit watcher reports the crash
        finally:
            self._files.reconciler.end_turn()
        self._details.turn_ended(response.stop_reason, response.usage)
        self._transcript.turn_end(response.stop_reason, usage_text(response.usage))


def usage_text(usage: Usage | None) -> str | None:
    """'12 in / 34 out tokens' for a turn's usage (None: the agent sent none)."""
    if usage is None:
        return None
    return f"{usage.input_tokens} in / {usage.output_tokens} out tokens"
