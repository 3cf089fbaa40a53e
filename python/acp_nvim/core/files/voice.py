"""How the file code talks with the user: the session log, the chat, notifications, three-way views."""

from __future__ import annotations

from collections.abc import Callable

from ..log.ring import LogRing
from ..port import EditorPort, ThreeWay
from ..questions import THREE_WAY, Questions

Notice = Callable[[str, str], None]
"""Shows a line in the chat: (text, kind) with kind ``notice`` or ``error``."""


class FileVoice:
    """Logs, tells, reports and asks for ``FileService`` and ``Reconciler`` of one session."""

    def __init__(self, log: LogRing | None, notice: Notice | None, editor: EditorPort, questions: Questions,
                 owner: str) -> None:
        self._log = log
        self._notice: Notice = notice or (lambda text, kind: None)
        self._editor = editor
        self._questions = questions
        self._owner = owner

    def log(self, level: str, message: str) -> None:
        """A line in the session log (kind ``fs``)."""
        if self._log is not None:
            self._log.add(level, "fs", message)

    def tell(self, message: str, level: str = "info") -> None:
        """Log, show in the chat and notify: something the user must know about their files."""
        self.log(level, message)
        self._notice(message, "error" if level == "error" else "notice")
        self._editor.notify(message, level)

    def report(self, message: str) -> None:
        """A background task failed: log it and notify the user."""
        self.log("error", message)
        self._editor.notify(message, "error")

    async def three_way(self, request: ThreeWay) -> str:
        """Ask in a three-way view: ``agent``, ``mine`` or ``gone`` (a dismissed view keeps ``mine``)."""
        answer = await self._questions.ask(self._owner, THREE_WAY,
                                           lambda ticket: self._editor.show_three_way(ticket, request))
        return answer if isinstance(answer, str) and answer else "mine"
