"""How the file code speaks: the session log, the chat and the editor's notifications."""

from __future__ import annotations

from collections.abc import Callable

from ..log.ring import LogRing

Notice = Callable[[str, str], None]
"""Shows a line in the chat: (text, kind) with kind ``notice`` or ``error``."""
Notify = Callable[[str, str], None]
"""Notifies the user: (message, level)."""


class FileNotices:
    """Logs, tells and reports for ``FileService`` and ``Reconciler``."""

    def __init__(self, log: LogRing | None, notice: Notice | None, notify: Notify) -> None:
        self._log = log
        self._notice: Notice = notice or (lambda text, kind: None)
        self._notify = notify

    def log(self, level: str, message: str) -> None:
        """A line in the session log (kind ``fs``)."""
        if self._log is not None:
            self._log.add(level, "fs", message)

    def tell(self, message: str, level: str = "info") -> None:
        """Log, show in the chat and notify: something the user must know about their files."""
        self.log(level, message)
        self._notice(message, "error" if level == "error" else "notice")
        self._notify(message, level)

    def report(self, message: str) -> None:
        """A background task failed: log it and notify the user."""
        self.log("error", message)
        self._notify(message, "error")
