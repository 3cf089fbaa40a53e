"""Where a session's turns come from: the turns a reopened session takes over from earlier
sessions (in this Neovim or another), the writers it continues, and the link a rewind leaves when it
moves the conversation into a new ACP session (``history.py`` finds them on disk)."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable

from .. import tasks
from ..transcript.conversation import Conversation
from . import history
from .model import DONE, Checkpoint
from .store import CheckpointStore, turn_manifest_name


class Lineage:
    """The turns one recorder took over, and what its own manifests say they continue."""

    def __init__(self, checkpoints: list[Checkpoint], transcript: Conversation,
                 report: Callable[[str], None]) -> None:
        self.writer = secrets.token_hex(8)
        """Names this recorder's manifests apart from every other session's, in any Neovim."""
        self.continues: dict[str, int] = {}
        """The writers of the turns a reopened session took over, each up to its last turn taken."""
        self.adopting: asyncio.Task[None] | None = None
        self._checkpoints = checkpoints
        self._transcript = transcript
        self._report = report
        self._unplaced: list[Checkpoint] = []
        """Turns taken over whose prompt is not matched to a block of the chat yet (``place``)."""

    def turn(self, number: int, prompt: str, first_block: int, session_id: str | None) -> Checkpoint:
        """The checkpoint of this recorder's turn ``number``."""
        return Checkpoint(number, prompt, time.time(), first_block, session_id,
                          name=turn_manifest_name(self.writer, number, session_id), writer=self.writer,
                          continues=dict(self.continues))

    def link(self, session_id: str) -> Checkpoint:
        """A link (turn 0, no files) that says ACP session ``session_id`` continues this recorder's
        turns so far, so reopening it later finds them before any turn ran in it."""
        continues = dict(self.continues)
        continues[self.writer] = self._checkpoints[-1].turn
        return Checkpoint(0, "", time.time(), 0, session_id, state=DONE, writer=self.writer, continues=continues,
                          name=turn_manifest_name(self.writer, 0, session_id))

    def adopt(self, store: Callable[[], Awaitable[CheckpointStore | None]], session_id: str,
              fail: Callable[[Exception], None], key: str) -> None:
        """Take over the checkpoints of ACP session ``session_id`` in the background."""
        if self.adopting is None or self.adopting.done():
            self.adopting = tasks.spawn(self._adopt(store, session_id, fail), self._report,
                                        f"{key} earlier checkpoints")

    async def _adopt(self, store_of: Callable[[], Awaitable[CheckpointStore | None]], session_id: str,
                     fail: Callable[[Exception], None]) -> None:
        store = await store_of()
        if store is None:
            return
        try:
            found = await asyncio.to_thread(history.of_session, store, session_id)
        except OSError as exc:
            fail(exc)
            return
        checkpoints = self._checkpoints
        known = {c.name for c in checkpoints}
        taken = [c for c in found if c.name not in known and (not checkpoints or c.turn < checkpoints[0].turn)]
        checkpoints[0:0] = taken
        self._unplaced += taken
        for checkpoint in taken:
            if checkpoint.writer:
                self._widen(checkpoint.writer, checkpoint.turn)
            for writer, turn in checkpoint.continues.items():
                self._widen(writer, turn)

    def _widen(self, writer: str, turn: int) -> None:
        self.continues[writer] = max(self.continues.get(writer, 0), turn)

    async def adopted(self) -> None:
        """Wait until the turns being taken over are (``adopt``), and place them in the chat."""
        if self.adopting is not None:
            await asyncio.wait({self.adopting})
        self.place()

    def place(self) -> None:
        """Put the turns taken over at the blocks of their prompts in the chat (``history.place``)."""
        if self._unplaced:
            unplaced, self._unplaced = self._unplaced, []
            waiting = {id(c) for c in unplaced}
            own = {c.first_block for c in self._checkpoints if id(c) not in waiting}
            blocks = self._transcript.blocks
            history.place(unplaced, [(b.id, b.text()) for b in blocks if b.kind == "user" and b.id not in own],
                          blocks[-1].id + 1 if blocks else 1)
