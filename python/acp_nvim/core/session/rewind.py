"""A session's rewind: back to before a turn (files and conversation), its undo, and a prompt
edited and sent again from there.

The files go back through the checkpoint restore (``core/checkpoints/restore.py``: the write
gate, the user's buffers respected, an undo record kept first). The conversation goes back too:
where the agent forks at a message (``session/fork`` with a message id: claude-agent-acp), it
continues in a fork that ends with the agent's answer before the turn, so the agent no longer
remembers the turns taken back; otherwise it continues in a new session whose first prompt
carries the conversation before the turn as context, and the chat says so. The earlier session
stays in the history. In the chat the turns taken back fold away under a marker, readable.

``undo`` puts back what the last rewind replaced; when nothing was sent since, the conversation
goes back to the earlier session too (it is still open on the same agent process). Undoing an
undo sets the files back again.

One rewind, undo or resubmit runs at a time; one asked while another runs waits for it (the chat
says so) and then runs, in the order they were asked: the files of a rewind are back before its
conversation is, and an undo asked at once must not be refused for being early.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from ..agent.process import AgentProcess
from ..checkpoints.errors import CheckpointError
from ..checkpoints.model import DONE, UNDONE, Checkpoint
from ..checkpoints.plan import Step, choose, fork_point, later_turns, plan
from ..checkpoints.recorder import Recorder
from ..checkpoints.restore import Restored, Restorer
from ..connection.link import AgentLink
from ..conversation.prompt import Prompt
from ..conversation.queue import PromptQueue
from ..conversation.updates import UpdateRouter
from ..files.service import FileService
from ..port import EditorPort
from ..transcript.conversation import Conversation
from .lifecycle import Lifecycle, State
from .opening import FORKED, Opener


@dataclass(frozen=True, slots=True)
class Done:
    """How a rewind or an undo went: a message, and the files it deleted (their clean buffers may go)."""

    message: str
    removed: list[str]


@dataclass(slots=True)
class _Rewound:
    """What ``undo`` needs of one rewind (or of an undo: then only the files)."""

    record: Checkpoint | None
    """The files as they were before it (None: it changed no file)."""
    label: str
    turns: list[Checkpoint] = field(default_factory=list)
    span: tuple[int, int] | None = None
    """The transcript blocks it folded."""
    marker: int = 0
    old_session: str | None = None
    new_session: str | None = None
    process: AgentProcess | None = None
    turns_then: int = 0


class Rewinder:
    """``:Ai rewind [turn]``, ``:Ai rewind undo`` and the resubmit of an edited prompt, for one session."""

    def __init__(self, key: str, recorder: Recorder, files: FileService, editor: EditorPort, transcript: Conversation,
                 queue: PromptQueue, lifecycle: Lifecycle, opener: Opener, link: AgentLink, stream: UpdateRouter,
                 submit: Callable[[Prompt], str], report: Callable[[str], None]) -> None:
        self.key = key
        self.recorder = recorder
        self._files = files
        self._editor = editor
        self._transcript = transcript
        self._queue = queue
        self._lifecycle = lifecycle
        self._opener = opener
        self._link = link
        self._stream = stream
        self._submit = submit
        self._report = report
        self.done: list[_Rewound] = []
        """Rewinds and undos that ``undo`` can take back, newest last."""
        self._one_at_a_time = asyncio.Lock()
        self._running = ""
        """What holds the lock (``rewind``, ``rewind undo``, ``resubmit``); empty when nothing does."""
        self._waiting = 0

    @property
    def busy(self) -> bool:
        return self._one_at_a_time.locked()

    # -- :Ai rewind [turn] -----------------------------------------------------------------

    async def rewind(self, turn: int | None) -> Done:
        """Files and conversation back to before ``turn`` (None: the last turn); a summary for a
        message. A CheckpointError (nothing changed) when that cannot be done."""
        async with self._alone("rewind"):
            return await self._rewind(turn)

    async def _rewind(self, turn: int | None) -> Done:
        await self.recorder.settle()
        target = choose(self.recorder.checkpoints, turn, self.key)
        later = later_turns(self.recorder.checkpoints, target.turn)
        result = await self._restorer().run(plan(self.recorder.checkpoints, target.turn), f"before turn {target.turn}")
        first, last = target.first_block, self._transcript.blocks[-1].id
        for checkpoint in later:
            checkpoint.state, checkpoint.undone_by = UNDONE, target.turn
        self.recorder.resave(later)
        self._transcript.undone.append((first, last))
        span = _span(later)
        lines = [f"── rewound to before turn {target.turn} ── turn{span} folded above (zo opens, :Ai rewind undo "
                 f"takes the rewind back) · {result.summary()}",
                 *result.details(self._transcript.paths.show)]
        marker = self._transcript.marker("\n".join(lines), {"fold": [first, last]})
        source, process = self._link.session_id, self._link.process
        message_id = fork_point(self.recorder.checkpoints, target.turn)
        told = await self._reopen(source, message_id)
        if self._link.session_id != source:
            self.recorder.moved(self._link.session_id)
        self._transcript.notice(self._how(told, target.turn, span, source, message_id), "info")
        self.done.append(_Rewound(result.undo, f"the rewind to before turn {target.turn}", later, (first, last),
                                  marker, source, self._link.session_id, process, len(self.recorder.checkpoints)))
        return Done(f"rewound to before turn {target.turn}: {result.summary()}", result.removed)

    async def _reopen(self, source: str | None, message_id: str | None) -> list[str]:
        """The conversation back before the turn: a fork at ``message_id``, else a new session."""
        told: list[str] = []
        self._lifecycle.move(State.STARTING)
        try:
            await self._opener.open(self._opener.rewind(source, message_id, told))
        except Exception as exc:  # shown in the chat by the opener; the session offers the restart key
            told.append(f"failed: {exc}")
        return told

    def _how(self, told: list[str], turn: int, span: str, source: str | None, message_id: str | None) -> str:
        earlier = f"; session {source} keeps the earlier conversation (:Ai resume)" if source else ""
        if FORKED in told:
            return (f"the conversation continues in a fork ({self._link.session_id}) that ends with the agent's "
                    f"answer before turn {turn}: the agent no longer remembers turn{span}{earlier}")
        failed = next((t for t in told if t.startswith("failed")), None)
        if failed is not None:
            return f"the conversation could not be reopened ({failed}){earlier}"
        no_fork = ("the agent sent no message id to fork at: " if message_id is None
                   else "the agent cannot fork at a message: ")
        why = next((f"{t}: " for t in told), no_fork if turn > 1 else "")
        carried = (f"your next prompt carries the conversation before turn {turn} as context" if turn > 1
                   else "nothing came before turn 1")
        return f"{why}the conversation continues in a new session ({self._link.session_id}); {carried}{earlier}"

    # -- :Ai rewind undo ---------------------------------------------------------------

    async def undo(self) -> Done:
        """Put back what the last rewind (or undo) replaced; a summary for a message."""
        async with self._alone("rewind undo"):
            return await self._undo()

    async def _undo(self) -> Done:
        if not self.done:
            raise CheckpointError(f"{self.key}: nothing to undo: no rewind in this session yet")
        last = self.done[-1]
        result = Restored()
        if last.record is not None:
            steps = [Step(e.path, e.before, e.after, 0) for e in last.record.files.values()]
            result = await self._restorer().run(steps, "before the rewind")
        self.done.pop()
        lines = [f"── undid {last.label} ── {result.summary()}", *result.details(self._transcript.paths.show)]
        if last.span is not None:
            lines.append(self._conversation_back(last))
            self.done.append(_Rewound(result.undo, f"the undo of {last.label} (files only)"))
        back = last.span is not None and last.span not in self._transcript.undone
        self._transcript.marker("\n".join(lines), {"unfold": last.marker} if back else {})
        return Done(f"undid {last.label}: {result.summary()}", result.removed)

    def _conversation_back(self, last: _Rewound) -> str:
        """Back on the session before the rewind when nothing was sent since (it is still open on the
        same process); else the conversation stays where the rewind left it."""
        span = _span(last.turns)
        same = (self._link.session_id == last.new_session and self._link.process is last.process
                and last.process is not None and last.process.alive and last.old_session is not None
                and len(self.recorder.checkpoints) == last.turns_then)
        if not same:
            return (f"the conversation stays where the rewind left it: the agent does not remember turn{span} "
                    f"(session {last.old_session} does: :Ai resume)")
        self._link.session_id = last.old_session
        self._stream.hold(False)
        self._queue.carry = None  # the earlier session has the whole conversation
        for checkpoint in last.turns:
            checkpoint.state, checkpoint.undone_by = DONE, 0
        self.recorder.resave(last.turns)
        if last.span in self._transcript.undone:
            self._transcript.undone.remove(last.span)
        return f"the conversation is back on session {last.old_session}: the agent remembers turn{span} again"

    # -- edit and resubmit ---------------------------------------------------------------

    async def resubmit(self, turn: int, prompt: Prompt) -> Done:
        """Rewind to before ``turn``, then send ``prompt`` (the turn's prompt, edited) from there (before
        a rewind waiting behind this one runs: that one then meets the turn)."""
        async with self._alone("resubmit"):
            done = await self._rewind(turn)
            self._submit(prompt)
            return done

    # -- helpers -------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _alone(self, what: str) -> AsyncIterator[None]:
        """Run ``what`` once nothing else of this rewinder runs; the checks after the wait, on the
        session as the earlier ones left it."""
        if not self.recorder.enabled:
            raise CheckpointError(f"{self.key}: checkpoints are off (setup: checkpoints = false): nothing to "
                                  "rewind")
        if self._one_at_a_time.locked():
            ahead = f" and {self._waiting} more asked before it" if self._waiting else ""
            self._transcript.notice(f"{what} waits for the running {self._running}{ahead}", "info")
        self._waiting += 1
        try:
            await self._one_at_a_time.acquire()
        finally:
            self._waiting -= 1
        try:
            self._running = what
            state = self._lifecycle.state
            if self._queue.busy or self._lifecycle.in_turn:
                raise CheckpointError(f"{self.key}: a turn is running: wait for its end, or :Ai cancel it first")
            if state in (State.STARTING, State.CLOSED):
                raise CheckpointError(f"{self.key} is {state.value}: no rewind now")
            yield
        finally:
            self._running = ""
            self._one_at_a_time.release()

    def _restorer(self) -> Restorer:
        store = self.recorder.store_now
        if store is None:
            raise CheckpointError(f"{self.key}: the editor keeps no state folder: no checkpoint to rewind to")
        return Restorer(self.key, self._files, self._editor, store, self.recorder.settings.max_file_bytes,
                        self._report)


def _span(turns: list[Checkpoint]) -> str:
    """'s 2–3' or ' 2' (after the word "turn")."""
    if not turns:
        return "s"
    first, last = turns[0].turn, turns[-1].turn
    return f" {first}" if first == last else f"s {first}–{last}"
