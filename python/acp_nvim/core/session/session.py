"""One agent session: its process, transcript, prompt queue and pending permission requests."""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from acp import RequestError, text_block
from acp.schema import DeniedOutcome, RequestPermissionResponse

from .. import tasks
from ..agent.process import AgentProcess
from ..agent.wire import NoiseReporter
from ..config import AgentSpec, Settings
from ..errors import SessionClosedError
from ..files.changes import ChangeLog
from ..files.ledger import FileLedger
from ..files.paths import PathPolicy
from ..files.reconcile import Reconciler
from ..files.service import FileService
from ..files.voice import FileVoice
from ..log.redact import Redactor
from ..log.ring import LogRing
from ..permissions.accepted import AcceptedEdits
from ..permissions.broker import PermissionBroker, Scope
from ..port import EditorPort
from ..questions import CHOICE, Questions, Ticket, choice_index
from ..transcript.transcript import Transcript
from . import attachments, auth, reattach
from .client import client_for
from .details import SessionDetails

STATES = ("starting", "idle", "running", "waiting", "closed", "failed")
ENDED = ("closed", "failed")
"""States a session never leaves: its agent is gone; a prompt needs a new session."""


@dataclass(slots=True)
class Prompt:
    """A prompt as the user composed it: the text shown in the chat and the blocks sent."""

    text: str
    blocks: list[Any] = field(default_factory=list)
    attachments: list[attachments.Attachment] = field(default_factory=list)
    """Context (ranges, @mentions) sent as embedded resources or links, per the agent's capabilities."""


class Session:
    """Owns one agent process and one ACP session on it."""

    def __init__(self, key: str, agent_name: str, spec: AgentSpec, settings: Settings,
                 editor: EditorPort, cwd: str, questions: Questions) -> None:
        self.key = key
        self.agent_name = agent_name
        self.cwd = cwd
        self.editor = editor
        self.questions = questions
        self.log = LogRing(settings.log.max_entries, settings.log.max_bytes, settings.log.level,
                           redact=Redactor.for_env(spec.env))
        self._noise = NoiseReporter(lambda text: editor.notify(f"{key}: {text}", "warn"))
        self.transcript = Transcript(lambda op: editor.render(key, [op]), agent_label=agent_name)
        roots = [*settings.workspace_roots, *([spec.cwd] if spec.cwd else [])]
        ledger, voice = FileLedger(), FileVoice(self.log, self.transcript.notice, editor, questions, key)
        accepted = AcceptedEdits()
        self.files = FileService(editor, PathPolicy.for_workspace(cwd, roots), ledger, ChangeLog(), voice,
                                 content_filter=accepted.filter)
        self.reconciler = Reconciler(editor, ledger, self.files.changes, voice)
        self.spec = spec
        self.process = AgentProcess(agent_name, spec, client_for(self), self.log, cwd, self._noise)
        self.session_id: str | None = None
        self.state = "starting"
        self.queue: deque[Prompt] = deque()
        self.mode: str | None = None
        self.modes: list[tuple[str, str]] = []
        self.title: str | None = None
        self.usage: str | None = None
        self.commands: list[str] = []
        self.details = SessionDetails()
        self._cancelling = False
        self._replaying = False
        self._runner: asyncio.Task[None] | None = None
        self.permissions = PermissionBroker(
            Scope(key, agent_name, cwd), settings.permissions, questions=questions, editor=editor,
            transcript=self.transcript, files=self.files, accepted=accepted, report=self._report,
            waiting=self._waiting)

    # -- lifecycle -----------------------------------------------------------------

    async def start(self) -> None:
        """Spawn the agent, initialize, and open a new ACP session in the editor's cwd."""
        try:
            await self.process.start()
            response = await self._new_session()
        except BaseException as exc:
            self.transcript.notice(f"failed to start: {exc}", "error")
            self._set_state("failed")
            self._drop_queue()
            raise
        self.session_id = response.session_id
        await self._attached(response)

    async def _attached(self, response: Any) -> None:
        """Take the session's modes from a new/load/resume response and start serving prompts."""
        if getattr(response, "modes", None) is not None:
            self.mode = response.modes.current_mode_id
            self.modes = [(m.id, m.name) for m in response.modes.available_modes]
        self.details.set_options(getattr(response, "config_options", None))
        await self._select_configured_mode()
        tasks.spawn(self._watch_exit(self.process), self._report, f"{self.key} exit watch")
        self._set_state("idle")
        if self.queue:
            self._run_queue_soon()

    async def restart(self) -> None:
        """A fresh agent process, back on the same conversation when the agent can resume or load it."""
        self._cancel_questions()
        self._set_state("starting")
        await self.process.close()
        self.process = AgentProcess(self.agent_name, self.spec, client_for(self), self.log, self.cwd,
                                    self._noise)
        self.log.add("info", "lifecycle", "restart requested")
        try:
            info = await self.process.start()
            self._replaying = True  # the transcript already shows the history the agent replays
            attached = await reattach.reattach(self.process.conn, info, self.session_id or "", self.cwd)
            self._replaying = False
            if attached is None:
                attached = (await self._new_session(), "new session: the agent cannot reload the old one")
                self.session_id = attached[0].session_id
        except BaseException as exc:
            self._replaying = False
            self.transcript.notice(f"restart failed: {exc}", "error")
            self._set_state("failed")
            raise
        self.transcript.notice(f"agent restarted ({attached[1]})", "info")
        await self._attached(attached[0])

    async def _select_configured_mode(self) -> None:
        """Select the agent spec's ``mode`` (presets set it so the permission policy holds)."""
        wanted = self.process.spec.mode
        if not wanted or wanted == self.mode:
            return
        if wanted not in {mid for mid, _ in self.modes}:
            self._mode_warning(f"the agent offers no mode {wanted!r}; staying in {self.mode or 'its default'}")
            return
        try:
            await self.process.conn.set_session_mode(session_id=self.session_id, mode_id=wanted)
        except RequestError as exc:
            self._mode_warning(f"selecting mode {wanted!r} failed: {exc}")
            return
        self.mode = wanted

    def _mode_warning(self, text: str) -> None:
        self.transcript.notice(text, "error")
        self.editor.notify(f"{self.key}: {text}", "warn")

    async def _new_session(self) -> Any:
        try:
            return await self.process.conn.new_session(cwd=self.cwd, mcp_servers=[])
        except RequestError as exc:
            if not auth.is_auth_required(exc):
                raise
        self.transcript.notice("the agent asks you to log in", "info")
        methods = list(self.process.info.auth_methods or []) if self.process.info else []
        await auth.authenticate(self.agent_name, self.process.conn, methods, self._choose)
        return await self.process.conn.new_session(cwd=self.cwd, mcp_servers=[])

    def _drop_queue(self) -> None:
        """Keep unsent prompts visible: the user's text is never silently lost."""
        while self.queue:
            self.transcript.notice(f"not sent (the agent is not running): {self.queue.popleft().text}", "error")

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
        await self.process.close()

    def _report(self, message: str) -> None:
        self.log.add("error", "error", message)
        self.editor.notify(f"{self.key}: {message}", "error")

    @property
    def ended(self) -> bool:
        """Closed or failed: the agent is gone."""
        return self.state in ENDED

    def _set_state(self, state: str) -> None:
        self.state = state
        self.editor.session_changed(self.key)

    # -- prompt turns --------------------------------------------------------------

    def submit(self, prompt: Prompt) -> str:
        """Queue a prompt; it starts at once when no turn runs. Returns "started" or "queued"."""
        if self.ended:
            raise SessionClosedError(f"session {self.key} is {self.state}: start a new one with :Ai new")
        self.queue.append(prompt)
        if self.state == "starting" or (self._runner is not None and not self._runner.done()):
            self.editor.session_changed(self.key)
            return "queued" if self.state != "starting" else "starting"
        self._run_queue_soon()
        return "started"

    def _run_queue_soon(self) -> None:
        self._runner = tasks.spawn(self._run_queue(), self._report, f"{self.key} turn")

    async def _run_queue(self) -> None:
        while self.queue and not self.ended:
            await self._run_turn(self.queue.popleft())
        if not self.ended:
            self._set_state("idle")

    async def _run_turn(self, prompt: Prompt) -> None:
        self._set_state("running")
        self.transcript.user_message(prompt.text, [a.label for a in prompt.attachments])
        context = await attachments.to_blocks(prompt.attachments, self._embedded_context(),
                                              attachments.file_reader(self.editor.buffer_text))
        blocks = [*self.permissions.start_turn(), text_block(prompt.text), *prompt.blocks, *context]
        self.files.changes.begin_turn()
        await self.reconciler.begin_turn()
        try:
            response = await self.process.conn.prompt(session_id=self.session_id, prompt=blocks)
        except RequestError as exc:
            self.transcript.notice(f"prompt failed: {exc}", "error")
            self.details.turn_ended("error")
            return
        except ConnectionError:
            self.details.turn_ended("error")
            return  # the exit watcher reports the crash
        finally:
            self._cancelling = False
            self.reconciler.end_turn()
        self.details.turn_ended(response.stop_reason, response.usage)
        self.transcript.turn_end(response.stop_reason, _usage_text(response.usage))

    def _embedded_context(self) -> bool:
        """Whether the agent accepts embedded resources in prompts (else: resource links)."""
        info = self.process.info
        caps = info.agent_capabilities if info is not None else None
        prompt_caps = caps.prompt_capabilities if caps is not None else None
        return bool(prompt_caps and prompt_caps.embedded_context)

    def edit_queue(self, prompts: list[Prompt]) -> None:
        """Replace the prompts waiting in the queue (the user edited, reordered or dropped them)."""
        self.queue.clear()
        self.queue.extend(prompts)
        self.editor.session_changed(self.key)

    async def set_config_option(self, config_id: str, value: str | bool) -> None:
        """``session/set_config_option``; the response carries every option's new value."""
        response = await self.process.conn.set_config_option(
            config_id=config_id, session_id=self.session_id, value=value)
        self.details.set_options(response.config_options)
        self._mode_from_options()
        self.editor.session_changed(self.key)

    def _mode_from_options(self) -> None:
        option = self.details.option("mode")
        if option is not None and not option.is_boolean and option.category == "mode":
            self.mode = str(option.current)

    async def cancel(self) -> bool:
        """Cancel the running turn; every pending permission request is answered ``cancelled``."""
        if self.state not in ("running", "waiting"):
            return False
        self._cancelling = True
        self._cancel_questions()
        await self.process.conn.cancel(session_id=self.session_id)
        return True

    # -- agent → client ------------------------------------------------------------

    def on_update(self, update: Any) -> None:
        """Dispatch one ``session/update`` to the transcript and session state."""
        if self._replaying:
            return
        handler = _UPDATE_HANDLERS.get(getattr(update, "session_update", ""))
        if handler is None:
            self.log.add("warn", "notification", f"skipped unknown session update {update!r:.120}")
            return
        handler(self, update)

    async def request_permission(self, tool_call: Any, options: list[Any]) -> RequestPermissionResponse:
        if self._cancelling or self.ended:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return await self.permissions.handle(tool_call, options)

    @property
    def pending(self) -> list[Ticket]:
        """Permission requests shown to the user and not answered yet."""
        return self.questions.waiting(self.key)

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

    async def set_mode(self, mode_id: str) -> None:
        await self.process.conn.set_session_mode(session_id=self.session_id, mode_id=mode_id)
        self.mode = mode_id
        self.editor.session_changed(self.key)

    # -- update handlers -----------------------------------------------------------

    def _on_text(self, update: Any) -> None:
        text = _content_text(update.content)
        kind = update.session_update
        if kind == "agent_message_chunk":
            self.transcript.agent_chunk(text)
        elif kind == "agent_thought_chunk":
            self.transcript.thought_chunk(text)
        else:
            self.transcript.user_chunk(text)

    def _on_tool_call(self, update: Any) -> None:
        state = self.transcript.tool_call(update)
        self.reconciler.observe(state)
        self.permissions.on_tool_call(state)

    def _on_plan(self, update: Any) -> None:
        self.transcript.plan(list(update.entries))

    def _on_plan_update(self, update: Any) -> None:
        plan = update.plan
        if getattr(plan, "entries", None) is not None:
            self.transcript.plan(list(plan.entries), plan.plan_id)
        else:
            self.transcript.plan_text(getattr(plan, "content", None) or getattr(plan, "uri", None) or
                                      f"[{plan.type} plan]", plan.plan_id)

    def _on_plan_removed(self, update: Any) -> None:
        self.transcript.plan_removed(update.plan_id)

    def _on_commands(self, update: Any) -> None:
        self.commands = [c.name for c in update.available_commands]
        self.details.set_commands(update.available_commands)
        self.editor.session_changed(self.key)

    def _on_mode(self, update: Any) -> None:
        self.mode = update.current_mode_id
        self.transcript.notice(f"mode: {self.mode}", "info")
        self.editor.session_changed(self.key)

    def _on_info(self, update: Any) -> None:
        if getattr(update, "title", None):
            self.title = update.title
            self.editor.session_changed(self.key)

    def _on_usage(self, update: Any) -> None:
        self.usage = _usage_update_text(update)
        self.details.usage_update(update)
        self.editor.session_changed(self.key)

    def _on_config(self, update: Any) -> None:
        self.log.add("debug", "notification", "config options updated")
        self.details.set_options(update.config_options)
        self._mode_from_options()
        self.editor.session_changed(self.key)


_UPDATE_HANDLERS = {
    "agent_message_chunk": Session._on_text,
    "agent_thought_chunk": Session._on_text,
    "user_message_chunk": Session._on_text,
    "tool_call": Session._on_tool_call,
    "tool_call_update": Session._on_tool_call,
    "plan": Session._on_plan,
    "plan_update": Session._on_plan_update,
    "plan_removed": Session._on_plan_removed,
    "available_commands_update": Session._on_commands,
    "current_mode_update": Session._on_mode,
    "session_info_update": Session._on_info,
    "usage_update": Session._on_usage,
    "config_option_update": Session._on_config,
}


def _content_text(block: Any) -> str:
    text = getattr(block, "text", None)
    if text is not None:
        return text
    kind = getattr(block, "type", "content")
    uri = getattr(block, "uri", None)
    return f"[{kind}{f' {uri}' if uri else ''}]"


def _usage_text(usage: Any) -> str | None:
    if usage is None:
        return None
    return f"{usage.input_tokens} in / {usage.output_tokens} out tokens"


def _usage_update_text(update: Any) -> str:
    used, size = getattr(update, "used", None), getattr(update, "size", None)
    text = f"{used}/{size} tokens" if used is not None else "usage"
    cost = getattr(update, "cost", None)
    if cost is not None:
        text += f" · {cost.amount:g} {cost.currency}"
    return text
