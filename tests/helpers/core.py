"""Helpers for tests that drive the core without Neovim: a SessionManager on the recording port.

``fake_editor`` lives in tests/unit; unit tests have that folder on the path, and
tests/e2e/conftest.py puts it there for the e2e tests.
"""

from __future__ import annotations

from fake_editor import FakeEditor

from acp_nvim.core.config import parse_settings
from acp_nvim.core.session.manager import SessionManager
from acp_nvim.core.session.session import Session


def chat_text(session: Session, sep: str = "\n\n") -> str:
    """The session's transcript as the chat shows it: every block's text, ``sep`` between blocks."""
    return sep.join(block.text() for block in session.transcript.blocks)


async def started(cwd: object, raw: dict | None = None, *, editor: FakeEditor | None = None,
                  agent: str | None = None, **manager: object) -> tuple[FakeEditor, SessionManager, Session]:
    """A started session of ``agent`` (None: the default) in ``cwd``, with a fresh ``SessionManager`` on
    ``parse_settings(raw)`` (``manager``: its other arguments) and ``editor`` (a new ``FakeEditor``)."""
    editor = editor or FakeEditor()
    sessions = SessionManager(editor, parse_settings(raw or {}), **manager)  # type: ignore[arg-type]
    session = sessions.create(agent, str(cwd))
    await session.start()
    return editor, sessions, session
