"""One agent session: its process and ACP session, its state, prompt queue and permission requests.

The session composes its parts and runs their lifecycle: ``prompt.py`` runs one turn,
``updates.py`` routes ``session/update``, ``client.py`` serves the agent's requests, the broker
(``core/permissions``) answers permission requests, and the file side (``core/files``) serves
and reconciles files.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Coroutine
from typing import TypeVar

from acp.helpers import SessionUpdate
from acp.schema import DeniedOutcome, PermissionOption, RequestPermissionResponse, ToolCallUpdate

from .. import tasks
from ..agent.process import AgentProcess
from ..agent.wire import NoiseReporter
from ..config import AgentSpec, Settings
from ..errors import SessionClosedError
from ..files.paths import PathPolicy
from ..files.side import FileSide
from ..log.redact import Redactor
from ..log.ring import LogRing
from ..permissions.accepted import AcceptedEdits
from ..permissions.broker import PermissionBroker, Scope
from ..port import EditorPort
from ..questions import CHOICE, Questions, Ticket, choice_index
from ..transcript.tool_calls import ToolCallState
from ..transcript.transcript import Transcript
from . import attachments, reopen
from .client import client_for
from .details import SessionDetails
from .link import AgentLink, Attached
from .prompt import Prompt as Prompt
from .prompt import TurnRunner
from .updates import UpdateRouter

_T = TypeVar("_T")
STATES = ("starting", "idle", "running", "waiting", "closed", "failed")
ENDED = ("closed", "failed")
"""States a session never leaves: its agent is gone; a prompt needs a new session."""


class Session:
    """Owns one agent process and one ACP session on it."""

    def __init__(self, key: str, agent_name: str, spec: AgentSpec, settings: Settings,
                 editor: EditorPort, cwd: str, questions: Questions) -> None:
        self.key = key
        self.agent_name = agent_name
        self.spec = spec
        self.cwd = cwd
        self.editor = editor
        self.questions = questions
        self.state = "starting"
        self.queue: deque[Prompt] = deque()
        self.details = SessionDetails()
        self.log = LogRing(settings.log.max_entries, settings.log.max_bytes, settings.log.level,
                           redact=Redactor.for_env(spec.env))
        self.transcript = Transcript(lambda op: editor.render(key, [op]), agent_label=agent_name)
        roots = [*settings.workspace_roots, *([spec.cwd] if spec.cwd else [])]
        self._accepted = AcceptedEdits()
        files = FileSide.create(editor, PathPolicy.for_workspace(cwd, roots), questions=questions, owner=key,
                                log=self.log, notice=self.transcript.notice, content_filter=self._accepted.filter)
        self.files, self.reconciler = files.service, files.reconciler
        self.permissions = PermissionBroker(
            Scope(key, agent_name, cwd), settings.permissions, questions=questions, editor=editor,
            transcript=self.transcript, files=self.files, accepted=self._accepted, report=self._report,
            waiting=self._waiting)
        self._updates = UpdateRouter(self.transcript, self.details, self.log, self._tool_call_changed, self._changed)
        self._turns = TurnRunner(self.transcript, self.details, files, self.permissions.start_turn,
                                 attachments.file_reader(editor.buffer_text))
        self._link = AgentLink(key, agent_name, spec, cwd, client=client_for(self), log=self.log,
                               details=self.details, notice=self.transcript.notice, warn=self._mode_warning,
                               choose=self._choose, replaying=self._replaying,
                               noise=NoiseReporter(lambda text: editor.notify(f"{key}: {text}", "warn")),
                               report=self._report)
        self._cancelling = False
        self._runner: asyncio.Task[None] | None = None
        self._roots = self._link.roots = list(settings.workspace_roots)
        self.watchers: list[Callable[[Session], None]] = []
        """Told of every change (sessions lane: the local history's recorder)."""
        self._before_prompt: list[Callable[[], None]] = []
        self._holding_replay = False

    # -- what the editor shows -----------------------------------------------------

    @property
    def mode(self) -> str | None:
        return self.details.mode

    @property
    def modes(self) -> list[tuple[str, str]]:
        return self.details.modes

    @property
    def title(self) -> str | None:
        return self.details.title

    @property
    def usage(self) -> str | None:
        return self.details.usage

    @property
    def commands(self) -> list[str]:
        return [name for name, _ in self.details.commands]

    @property
    def ended(self) -> bool:
        """Closed or failed: the agent is gone."""
        return self.state in ENDED

    @property
    def pending(self) -> list[Ticket]:
        """Permission requests shown to the user and not answered yet."""
        return self.questions.waiting(self.key)

    def _set_state(self, state: str) -> None:
        self.state = state
        self._changed()

    def _changed(self) -> None:
        self.editor.session_changed(self.key)
        for watcher in self.watchers:
            watcher(self)

    def _report(self, message: str) -> None:
        self.log.add("error", "error", message)
        self.editor.notify(f"{self.key}: {message}", "error")

    # -- lifecycle -----------------------------------------------------------------

    @property
    def process(self) -> AgentProcess:
        """The agent process (a new one after each restart)."""
        return self._link.process

    @property
    def session_id(self) -> str | None:
        """The ACP session id, once the agent opened the session."""
        return self._link.session_id

    async def start(self) -> None:
        """Spawn the agent, initialize, and open a new ACP session in the editor's cwd."""
        try:
            response = await self._link.open()
        except BaseException as exc:
            self.transcript.notice(f"failed to start: {exc}", "error")
            self._set_state("failed")
            self._drop_queue()
            raise
        await self._attached(response)

    # -- sessions lane (issue 14): a past session, a fork (core/session/reopen.py) ------

    async def start_past(self, session_id: str, replay: bool) -> str:
        """Spawn the agent and reopen past session ``session_id`` (``replay``: show what session/load
        replays); how: "resumed", "loaded", or why it is read-only (the session is then closed)."""
        reopened = await self._starting(reopen.open_past(self._link, session_id, self._roots, replay,
                                                         self._hold_replay))
        if reopened.response is None:
            await self.process.close()
            self._set_state("closed")
            return reopened.how
        if reopened.replay_held:
            self._release_replay_at_prompt()
        await self._attached(reopened.response)
        return reopened.how

    def before_next_prompt(self, action: Callable[[], None]) -> None:
        """Run ``action`` once, when the next prompt is submitted (the end of a reopened session's replay)."""
        self._before_prompt.append(action)

    def _prompting(self) -> None:
        actions, self._before_prompt = self._before_prompt, []
        for action in actions:
            action()

    async def start_fork(self, source_id: str) -> None:
        """Spawn the agent and make this session a fork of ``source_id`` (``session/fork``)."""
        response = await self._starting(reopen.fork(self._link, source_id, self._roots, self._hold_replay))
        self._release_replay_at_prompt()
        await self._attached(response)

    def _hold_replay(self, hold: bool) -> None:
        self._holding_replay = hold

    def _release_replay_at_prompt(self) -> None:
        """The held replay ends with the next prompt; at once when one was typed while the session started."""
        if self.queue:
            self._hold_replay(False)
        else:
            self.before_next_prompt(lambda: self._hold_replay(False))

    async def _starting(self, opening: Coroutine[object, object, _T]) -> _T:
        try:
            return await opening
        except BaseException as exc:
            self.transcript.notice(f"failed to start: {exc}", "error")
            self._set_state("failed")
            self._drop_queue()
            await self.process.close()
            raise

    # -- end of the sessions lane's hook ---------------------------------------------

    async def restart(self) -> None:
        """A fresh agent process, back on the same conversation when the agent can resume or load it."""
        self._cancel_questions()
        self._set_state("starting")
        await self._link.replace_process()
        try:
            response, how = await self._link.reopen()
        except BaseException as exc:
            self.transcript.notice(f"restart failed: {exc}", "error")
            self._set_state("failed")
            raise
        self.transcript.notice(f"agent restarted ({how})", "info")
        await self._attached(response)

    async def _attached(self, response: Attached) -> None:
        """Take the session's modes from a new/load/resume response and start serving prompts."""
        await self._link.attach(response)
        tasks.spawn(self._watch_exit(self.process), self._report, f"{self.key} exit watch")
        self._set_state("idle")
        if self.queue:
            self._run_queue_soon()

    def _replaying(self, replaying: bool) -> None:
        self._updates.replaying = replaying

    def _mode_warning(self, text: str) -> None:
        self.transcript.notice(text, "error")
        self.editor.notify(f"{self.key}: {text}", "warn")

    async def _watch_exit(self, process: AgentProcess) -> None:
        code = await asyncio.shield(process.exited)
        if self.state != "closed" and process is self.process:
            self.transcript.notice(f"agent exited with code {code}", "error")
            self.editor.notify(f"{self.key}: agent exited with code {code}", "error")
            self._cancel_questions()
            self._set_state("failed")
            self._drop_queue()

    async def close(self) -> None:
        self._set_state("closed")
        self._cancel_questions()
        await reopen.close_remote(self._link)  # sessions lane: session/close where offered
        await self.process.close()

    # -- prompt turns --------------------------------------------------------------

    def submit(self, prompt: Prompt) -> str:
        """Queue a prompt; it starts at once when no turn runs. Returns "started", "queued" or "starting"."""
        if self.ended:
            raise SessionClosedError(f"session {self.key} is {self.state}: start a new one with :Ai new")
        self._prompting()  # sessions lane: a reopened session's replay ends here
        self.queue.append(prompt)
        if self.state == "starting" or (self._runner is not None and not self._runner.done()):
            self._changed()
            return "queued" if self.state != "starting" else "starting"
        self._run_queue_soon()
        return "started"

    def edit_queue(self, prompts: list[Prompt]) -> None:
        """Replace the prompts waiting in the queue (the user edited, reordered or dropped them)."""
        self.queue.clear()
        self.queue.extend(prompts)
        self._changed()

    def _run_queue_soon(self) -> None:
        self._runner = tasks.spawn(self._run_queue(), self._report, f"{self.key} turn")

    async def _run_queue(self) -> None:
        while self.queue and not self.ended:
            self._set_state("running")
            try:
                await self._turns.run(self._link.connection, self._link.session, self._link.embedded_context,
                                      self.queue.popleft())
            finally:
                self._cancelling = False
        if not self.ended:
            self._set_state("idle")

    def _drop_queue(self) -> None:
        """Keep unsent prompts visible: the user's text is never silently lost."""
        while self.queue:
            self.transcript.notice(f"not sent (the agent is not running): {self.queue.popleft().text}", "error")

    async def cancel(self) -> bool:
        """Cancel the running turn; every pending permission request is answered ``cancelled``."""
        if self.state not in ("running", "waiting"):
            return False
        self._cancelling = True
        self._cancel_questions()
        await self._link.connection.cancel(session_id=self._link.session)
        return True

    # -- modes and options -----------------------------------------------------------

    async def set_mode(self, mode_id: str) -> None:
        await self._link.connection.set_session_mode(session_id=self._link.session, mode_id=mode_id)
        self.details.mode = mode_id
        self._changed()

    async def set_config_option(self, config_id: str, value: str | bool) -> None:
        """``session/set_config_option``; the response carries every option's new value."""
        response = await self._link.connection.set_config_option(
            config_id=config_id, session_id=self._link.session, value=value)
        self.details.set_options(response.config_options)
        self.details.mode_from_options()
        self._changed()

    # -- agent → client ------------------------------------------------------------

    def on_update(self, update: SessionUpdate) -> None:
        """Dispatch one ``session/update`` to the transcript and session state."""
        if self._holding_replay and reopen.replayed(update):  # sessions lane: a replay already shown
            return
        self._updates.route(update)

    def _tool_call_changed(self, state: ToolCallState) -> None:
        self.reconciler.observe(state)
        self.permissions.on_tool_call(state)

    async def request_permission(self, tool_call: ToolCallUpdate,
                                 options: list[PermissionOption]) -> RequestPermissionResponse:
        if self._cancelling or self.ended:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return await self.permissions.handle(tool_call, options)

    # -- questions -------------------------------------------------------------------

    def _waiting(self, asked: bool) -> None:
        """The broker asks the user (True) or got the answer (False)."""
        if asked:
            self.details.asked += 1
            self._set_state("waiting")
        elif self.state == "waiting":
            self._set_state("running" if not self.pending else "waiting")

    def _cancel_questions(self) -> None:
        """Answer every permission request of this session ``cancelled`` and close its view."""
        for ticket in self.questions.cancel(self.key):
            self.editor.dismiss(ticket)

    async def _choose(self, prompt: str, items: list[str]) -> int | None:
        answer = await self.questions.ask(self.key, CHOICE, lambda t: self.editor.show_choice(t, prompt, items))
        return choice_index(answer, len(items))
