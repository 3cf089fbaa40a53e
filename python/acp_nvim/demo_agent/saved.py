"""Sessions that outlive the demo agent's process (``ACP_DEMO_SESSIONS_DIR``).

With the variable set, the demo agent keeps each session's history in a JSON file of that
folder and offers ``session/list``, ``resume``, ``fork`` and ``close`` besides ``load``, and
takes ``additionalDirectories``: what a client needs to reopen a session after a restart.
The ``recall`` scenario answers with the session's first prompt, so a test can see that the
agent still has the earlier conversation.
"""

from __future__ import annotations

import json
import os
import uuid
from datetime import UTC, datetime
from pathlib import Path

from acp.schema import (
    SessionAdditionalDirectoriesCapabilities,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionForkCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionResumeCapabilities,
    StopReason,
)

from .session import SessionState
from .turn import Turn

SESSIONS_ENV = "ACP_DEMO_SESSIONS_DIR"
PAGE = 2
"""Sessions per ``session/list`` page: small, so that clients must follow the cursor."""


class SavedSessions:
    """One JSON file per session: id, cwd, title, update time and the turns' history."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    @classmethod
    def from_env(cls) -> SavedSessions | None:
        folder = os.environ.get(SESSIONS_ENV)
        return cls(Path(folder)) if folder else None

    @staticmethod
    def capabilities() -> SessionCapabilities:
        return SessionCapabilities(
            list=SessionListCapabilities(), resume=SessionResumeCapabilities(), fork=SessionForkCapabilities(),
            close=SessionCloseCapabilities(), additional_directories=SessionAdditionalDirectoriesCapabilities())

    @staticmethod
    def new_id() -> str:
        return f"demo-{uuid.uuid4().hex[:12]}"

    def _path(self, session_id: str) -> Path:
        return self.folder / f"{uuid.uuid5(uuid.NAMESPACE_URL, session_id).hex}.json"

    def save(self, state: SessionState, title: str = "") -> None:
        data = {"id": state.session_id, "cwd": state.cwd, "title": title or self.title(state),
                "updated": datetime.now(UTC).isoformat(), "history": state.history}
        self._path(state.session_id).write_text(json.dumps(data), encoding="utf-8")

    def forget(self, session_id: str) -> None:
        """Remove the session's file (a session closed before its first prompt, or deleted)."""
        self._path(session_id).unlink(missing_ok=True)

    @staticmethod
    def title(state: SessionState) -> str:
        first = next((text for role, text in state.history if role == "user"), "")
        return f"demo: {first[:30]}" if first else ""

    def restore(self, session_id: str) -> SessionState | None:
        try:
            data = json.loads(self._path(session_id).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return SessionState(session_id=data["id"], cwd=data["cwd"],
                            history=[(role, text) for role, text in data["history"]])

    def page(self, cwd: str | None, cursor: str | None) -> tuple[list[SessionInfo], str | None]:
        """One page of ``session/list`` and the next cursor (None on the last page)."""
        start = int(cursor) if cursor and cursor.isdigit() else 0
        found = self.list(cwd)
        end = start + PAGE
        return found[start:end], str(end) if end < len(found) else None

    def list(self, cwd: str | None) -> list[SessionInfo]:
        found = []
        for path in sorted(self.folder.glob("*.json")):
            data = json.loads(path.read_text(encoding="utf-8"))
            if cwd is None or data["cwd"] == cwd:
                found.append(SessionInfo(session_id=data["id"], cwd=data["cwd"], title=data["title"] or None,
                                         updated_at=data["updated"]))
        return found


async def recall(turn: Turn) -> StopReason:
    """Answer with the session's first prompt (what the agent remembers of the conversation)."""
    earlier = [text for role, text in turn.session.history if role == "user"]
    await turn.stream(f"Your first prompt was: {earlier[0]}\n" if earlier else "I remember no earlier prompt.\n")
    return "end_turn"
