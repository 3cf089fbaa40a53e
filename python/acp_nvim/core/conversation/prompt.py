"""A prompt as the user composed it, and the turn that sends it.

A turn tells the agent how its reviewed edits landed (the broker's notes), sends the text,
the extra blocks and the attached context, watches the files around it (the turn's
changeset, disk writes reconciled at its end) and records how it ended: every turn ends
with a "turn ended" line, errors and interruptions included. Whether the prompt reached
the agent is noted on the ``Turn``: one that did not is the session's to keep.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from acp import RequestError, text_block
from acp.client.connection import ClientSideConnection
from acp.helpers import ContentBlock, embedded_text_resource, resource_block
from acp.schema import Usage

from ..checkpoints.recorder import Recorder
from ..files.side import FileSide
from ..log import redact
from ..prompting import attachments
from ..transcript.conversation import Conversation, turn_end_text
from ..transcript.tool_calls import OPEN_STATUSES, ToolCallState
from . import schema_ext
from .details import SessionDetails
from .failures import ErrorReport

CONTEXT_URI = "acp-nvim://conversation"
CONTEXT_INTRO = ("The agent process was restarted and could not reopen the session, so this is the "
                 "conversation so far, for context:\n\n")
REWIND_INTRO = ("The user rewound the conversation to an earlier point and continues from there in this new "
                "session; this is the conversation up to that point, for context (what came after it is undone, "
                "files included):\n\n")


@dataclass(slots=True)
class Prompt:
    """A prompt as the user composed it: the text shown in the chat and the blocks sent."""

    text: str
    blocks: list[ContentBlock] = field(default_factory=list)
    attachments: list[attachments.Attachment] = field(default_factory=list)
    """Context (ranges, @mentions) sent as embedded resources or links, per the agent's capabilities."""


@dataclass(eq=False)
class Turn:
    """One prompt on its way: whether it reached the agent, its tool calls, its cancel."""

    prompt: Prompt
    carry: str | None = None
    """The conversation so far with its introduction, sent along (the agent restarted, or a rewind
    continued, in a new session)."""
    sent: bool = False
    """The prompt request was written to the agent."""
    started: float = field(default_factory=time.monotonic)
    tools: dict[str, ToolCallState] = field(default_factory=dict)
    cancelled_at: float | None = None
    cancel_ignored: bool = False
    dropped: int = 0
    """Updates dropped after the cancel (late output of the cancelled turn)."""
    interrupted: str = "interrupted"
    """How the turn ends in the chat if it is cut off (a restart, a close)."""
    agent_stopped: bool = False
    """The connection closed under the turn (the agent is exiting)."""
    error: ErrorReport | None = None
    """Why the prompt failed (an error answer, a failure report, the connection lost after it was sent)."""
    ended_well: bool = False
    """The agent answered the prompt without reporting a failure."""

    def open_tools(self) -> list[ToolCallState]:
        """Tool calls of this turn that have not finished."""
        return [state for state in self.tools.values() if state.status in OPEN_STATUSES]

    def tool_running(self) -> bool:
        return any(state.status == "in_progress" for state in self.tools.values())


@dataclass(frozen=True)
class Link:
    """Where a turn goes: the connection, the ACP session, what the agent accepts, and a count
    of prompts written to it (to tell a prompt that never left from one left unanswered)."""

    conn: ClientSideConnection
    session_id: str
    accepts: attachments.Accepts
    prompts_sent: Callable[[], int]


class TurnRunner:
    """Runs one prompt turn of a session, start to end."""

    def __init__(self, transcript: Conversation, details: SessionDetails, files: FileSide,
                 notes: Callable[[], list[ContentBlock]], pack: attachments.Packer,
                 checkpoints: Recorder | None = None) -> None:
        self._transcript = transcript
        self._details = details
        self._files = files
        self._notes = notes
        self._pack = pack
        self._checkpoints = checkpoints

    async def run(self, link: Link, turn: Turn) -> None:
        """Send the turn's prompt and wait for the turn's end; a failed prompt is shown, never raised
        (a cancellation is: the turn ends "interrupted" if the agent had it)."""
        prompt, before = turn.prompt, link.prompts_sent()
        self._transcript.user_message(prompt.text, [a.label for a in prompt.attachments])
        first_block = self._transcript.blocks[-1].id
        try:
            blocks = [*self._notes(), *await self.content(prompt, link.accepts),
                      *_carried(turn.carry, link.accepts.embedded)]
            await self._files.begin_turn()
            if self._checkpoints is not None:  # its checkpoint opens before the agent can touch a file
                await self._checkpoints.begin(prompt.text, first_block, link.session_id,
                                              self._files.service.changes.current)
            try:
                response = await link.conn.prompt(session_id=link.session_id, prompt=blocks)
            finally:
                turn.sent = link.prompts_sent() > before
                reconciled = self._files.reconciler.end_turn()
                if self._checkpoints is not None:
                    self._checkpoints.end(turn.sent, reconciled)
        except RequestError as exc:
            turn.error = ErrorReport(str(exc), exc.code, exc.data)
            self._ended("error")
            return
        except ConnectionError as exc:
            turn.agent_stopped = True
            if turn.sent:
                turn.error = ErrorReport(str(exc) or "the agent stopped", connection_lost=True)
                self._ended("error (the agent stopped)")
            return
        except asyncio.CancelledError:
            if turn.sent:
                self._ended(turn.interrupted)
            raise
        self._details.turn_ended(response.stop_reason, response.usage)
        self._transcript.turn_end(response.stop_reason, usage_text(response.usage))
        if schema_ext.session_failure(response.field_meta) is not None:  # a failure the agent reports
            turn.error = ErrorReport(meta=response.field_meta)
        else:
            turn.ended_well = True

    async def content(self, prompt: Prompt, accepts: attachments.Accepts) -> list[ContentBlock]:
        """What the agent gets of ``prompt``: its text, its extra blocks and its attached context."""
        context = await self._pack.blocks(prompt.attachments, accepts)
        return [text_block(prompt.text), *prompt.blocks, *context]

    def _ended(self, reason: str) -> None:
        self._details.turn_ended(reason.split(" ", 1)[0])
        self._transcript.turn_end(reason)


def _carried(text: str | None, embedded: bool) -> list[ContentBlock]:
    """The conversation so far as one more block of the prompt (after the user's text)."""
    if not text:
        return []
    if embedded:
        return [resource_block(embedded_text_resource(CONTEXT_URI, text, mime_type="text/markdown"))]
    return [text_block(text)]


def warm_redaction() -> None:
    """Compile ahead the redaction of a turn's end: the first Redactor's table, and the shapes its
    line announces ("tokens"). Otherwise about 10 ms land on the loop at the first session's start
    and its first turn's end, while other sessions stream or end with it."""
    redact.warm(turn_end_text("end_turn", usage_text(Usage(input_tokens=1, output_tokens=1, total_tokens=2))))


def usage_text(usage: Usage | None) -> str | None:
    """'12 in / 34 out tokens' for a turn's usage (None: the agent sent none)."""
    if usage is None:
        return None
    return f"{usage.input_tokens} in / {usage.output_tokens} out tokens"
