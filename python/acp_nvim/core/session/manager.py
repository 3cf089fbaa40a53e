"""All sessions of one editor: creation, lookup, the current one, shutdown."""

from __future__ import annotations

from collections import defaultdict

from ..agent.process import kill_all_now
from ..config import AgentSpec, Settings
from ..mcp.session_mcp import EditorMcpHost
from ..port import EditorPort
from ..questions import Questions
from ..worktrees.worktree import Worktree
from .board import Book
from .lifecycle import State
from .session import Session
from .warm import Warm, WarmPool, spec_with


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
        self.warm = WarmPool(lambda: self.settings, self.spec_of, editor_mcp, lambda text: editor.notify(text, "error"),
                             starting=lambda: any(s.state == State.STARTING for s in self.sessions.values()))
        """Agent processes started ahead of time (|acp_nvim-warm|)."""
        self._taken: dict[str, Warm] = {}
        """Warm processes taken by sessions not started yet."""

    def spec_of(self, name: str) -> AgentSpec:
        """How agent ``name`` is started now: its spec, and what ``:Ai login`` added to its environment."""
        return spec_with(self.login_env, name, self.settings.agent(name)[1])

    def create(self, agent: str | None, cwd: str, worktree: Worktree | None = None, warm: bool = False) -> Session:
        """A new, not yet started session of ``agent`` (the default agent when None), in ``worktree``'s
        folder when given (``cwd`` is then that folder); ``warm``: it takes a warm process that fits, and
        ``start`` then starts it on that one."""
        name = self.settings.agent(agent)[0]
        spec = self.spec_of(name)
        taken = self.warm.take(name, spec, cwd) if warm else None
        self._counters[name] += 1
        key = f"{name}/{self._counters[name]}"
        session = Session(key, name, spec, self.settings, self.editor, cwd, self.questions, self.editor_mcp,
                          mcp=taken.mcp if taken is not None else None)
        if taken is not None:
            self._taken[key] = taken
        self.sessions[key] = session
        self.book.watch(session, worktree)
        self.current_key = key
        return session

    async def start(self, session: Session) -> None:
        """Start ``session``: on the warm process it took, if any, else on a new one (``Session.start``)."""
        taken = self._taken.pop(session.key, None)
        if taken is None:
            await session.start()
        else:
            await session.opener.open(session.opener.warm(taken))

    @property
    def current(self) -> Session | None:
        return self.sessions.get(self.current_key) if self.current_key else None

    def get(self, key: str) -> Session | None:
        return self.sessions.get(key)

    def forget(self, key: str) -> None:
        self.sessions.pop(key, None)
        self.book.forget(key)
        taken = self._taken.pop(key, None)
        if taken is not None:  # closed before it started: its warm process is closed too
            self.warm.retire(taken)
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
        warm = [*self.warm.processes(), *(entry.process for entry in self._taken.values())]
        kill_all_now([*(process for session in sessions for process in session.processes), *warm])
