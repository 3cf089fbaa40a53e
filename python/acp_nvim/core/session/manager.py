"""All sessions of one editor: creation, lookup, the current one, shutdown."""

from __future__ import annotations

from collections import defaultdict

from ..agent.process import kill_all_now
from ..config import Settings
from ..mcp.session_mcp import EditorMcpHost
from ..port import EditorPort
from ..questions import Questions
from ..worktrees.worktree import Worktree
from .board import Book
from .session import Session


class SessionManager:
    """Creates sessions (one agent process each) and remembers which one is current."""

    def __init__(self, editor: EditorPort, settings: Settings, questions: Questions | None = None,
                 editor_mcp: EditorMcpHost | None = None) -> None:
        self.editor = editor
        self.settings = settings
        self.questions = questions or Questions()
        """Shared by every session: the editor routes the user's answers here by id."""
        self.editor_mcp = editor_mcp
        """The editor as an MCP server (core/mcp), for every session whose agent takes http servers."""
        self.sessions: dict[str, Session] = {}
        self.current_key: str | None = None
        self.closing: set[Session] = set()
        """Sessions closed but whose agent may still be ending: editor exit ends them too."""
        self._counters: defaultdict[str, int] = defaultdict(int)
        self.book = Book()
        """What the board shows of each session besides its view: order, changed files, worktree."""
        self.login_env: defaultdict[str, dict[str, str]] = defaultdict(dict)
        """Per agent, variables ``:Ai login`` asked for (env_var methods): in memory only, added to the
        environment of that agent's new processes."""

    def create(self, agent: str | None, cwd: str, worktree: Worktree | None = None) -> Session:
        """A new, not yet started session of ``agent`` (the default agent when None), in ``worktree``'s
        folder when given (``cwd`` is then that folder)."""
        name, spec = self.settings.agent(agent)
        if self.login_env[name]:
            spec = spec.model_copy(update={"env": {**spec.env, **self.login_env[name]}})
        self._counters[name] += 1
        key = f"{name}/{self._counters[name]}"
        session = Session(key, name, spec, self.settings, self.editor, cwd, self.questions, self.editor_mcp)
        self.sessions[key] = session
        self.book.watch(session, worktree)
        self.current_key = key
        return session

    @property
    def current(self) -> Session | None:
        return self.sessions.get(self.current_key) if self.current_key else None

    def get(self, key: str) -> Session | None:
        return self.sessions.get(key)

    def forget(self, key: str) -> None:
        self.sessions.pop(key, None)
        self.book.forget(key)
        if self.current_key == key:
            self.current_key = next(reversed(self.sessions), None) if self.sessions else None

    async def close(self, session: Session) -> None:
        """Forget ``session`` (call this first, at once: the editor shows it closed) and end its
        agent; until the process is gone it stays in ``closing``, so editor exit can still end it."""
        self.forget(session.key)
        self.closing.add(session)
        try:
            await session.close()
        finally:
            self.closing.discard(session)

    async def close_all(self) -> None:
        for session in list(self.sessions.values()):
            await self.close(session)

    def kill_all(self) -> None:
        """Editor exit, where nothing can be awaited: end every agent process and its children,
        closing ones included (SIGTERM, a wait of a few hundred ms, SIGKILL)."""
        sessions = [*self.sessions.values(), *self.closing]
        kill_all_now([process for session in sessions for process in session.processes])
