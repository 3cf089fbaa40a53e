"""What a session tells the editor and the user: a change, an error, a warning, a question closed."""

from __future__ import annotations

from collections.abc import Callable

from ..log.ring import LogRing
from ..port import EditorPort
from ..questions import CHOICE, Questions, choice_index
from ..transcript.conversation import Conversation


class Signals:
    """One session's voice toward the editor; ``watchers`` hear every change (the history's recorder)."""

    def __init__(self, key: str, editor: EditorPort, questions: Questions, log: LogRing,
                 transcript: Conversation) -> None:
        self._key = key
        self._editor = editor
        self._questions = questions
        self._log = log
        self._transcript = transcript
        self.watchers: list[Callable[[], None]] = []

    def changed(self) -> None:
        self._editor.session_changed(self._key)
        for watcher in self.watchers:
            watcher()

    def report(self, message: str) -> None:
        """An error of the session's own: the log and a message."""
        self._log.add("error", "error", message)
        self._editor.notify(f"{self._key}: {message}", "error")

    def tell(self, text: str, level: str = "warn") -> None:
        """A message to the user, named by the session."""
        self._editor.notify(f"{self._key}: {text}", level)

    def warn(self, text: str) -> None:
        """In the chat as an error, and as a warning message."""
        self._transcript.notice(text, "error")
        self.tell(text)

    def dismiss(self, ended: bool = True) -> None:
        """Answer every permission request of this session ``cancelled`` and close its view; when the
        agent process ``ended`` (exit, restart, close), every other question of the session too."""
        for ticket in (self._questions.drop if ended else self._questions.cancel)(self._key):
            self._editor.dismiss(ticket)

    async def choose(self, prompt: str, items: list[str]) -> int | None:
        """The user's pick among ``items`` (None: none)."""
        answer = await self._questions.ask(self._key, CHOICE, lambda t: self._editor.show_choice(t, prompt, items))
        return choice_index(answer, len(items))
