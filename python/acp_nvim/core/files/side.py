"""The file side of one session, composed: the fs methods and the reconciler on one ledger and one opener."""

from __future__ import annotations

from dataclasses import dataclass

from ..log.ring import LogRing
from ..port import EditorPort
from ..questions import Questions
from .changes import ChangeLog
from .ledger import FileLedger
from .opener import Opener
from .paths import PathPolicy
from .reconcile import Reconciler
from .service import FileService, WriteGate
from .voice import FileVoice, Notice


@dataclass(frozen=True, slots=True)
class FileSide:
    """``service`` answers ``fs/*``; ``reconciler`` follows the agent's own disk writes; both keep
    their file state in ``ledger``."""

    service: FileService
    reconciler: Reconciler
    ledger: FileLedger

    @staticmethod
    def create(editor: EditorPort, policy: PathPolicy, *, questions: Questions, owner: str, log: LogRing | None,
               notice: Notice | None, gate: WriteGate | None = None) -> FileSide:
        """Both parts sharing one ledger, one changelog and one voice (``owner``: the session key)."""
        ledger, voice, opener = FileLedger(), FileVoice(log, notice, editor, questions, owner), Opener(policy.roots)
        service = FileService(editor, policy, ledger, ChangeLog(), voice, gate, opener)
        return FileSide(service, Reconciler(editor, ledger, service.changes, voice, opener), ledger)

    async def begin_turn(self) -> None:
        """A new changeset; note the loaded buffers so disk changes during the turn are seen."""
        self.service.changes.begin_turn()
        await self.reconciler.begin_turn()
