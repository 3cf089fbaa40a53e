"""Answers permission requests: remembered rules and the policy first, then the user.

Diff-bearing requests open a review (every file); others get a prompt with every option.
The answer always names an option chosen by its ``kind``; it goes out exactly once. Each
request is registered in the questions registry before it is prepared, so a cancel finds it.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from acp import RequestError
from acp.helpers import ContentBlock
from acp.schema import PermissionOption, RequestPermissionResponse, ToolCallUpdate

from ..files.paths import PathPolicy
from ..port import EditorPort, PermissionChoice, PermissionQuestion, ReviewVerdict
from ..questions import PERMISSION, REVIEW, Questions, Show, Ticket
from ..tasks import ErrorReporter
from ..transcript.conversation import Conversation
from ..transcript.tool_calls import ToolCallState
from . import review as review_model
from .accepted import AcceptedEdits
from .answers import cancelled, question_for, selected
from .approvals import Approval, Approvals
from .command import Command, ScriptRead, from_input, read_scripts
from .exec_files import configures_execution
from .policy import ALWAYS_KINDS, AutoAnswer, PermissionSettings, check_policy, decide, pick
from .review import Current, ProposedEdit
from .rules import RuleOffer, RuleRequest, RulesFileError, RuleStore, offer
from .settle import FileAccess, Settlement

RULES_FILE = ("acp_nvim", "rules.json")
MAX_ASKS = 20
"""How often one request is asked again after updates voided what it showed (then: cancelled)."""
VOIDED = object()
"""The answer of a question whose request changed while it was shown: it is asked again."""

Waiting = Callable[[bool], None]
"""Told True when the user is asked, False when the answer came."""


@dataclass(frozen=True, slots=True)
class Scope:
    """Whose requests a broker answers: the session (questions, rejected copies), agent and workspace (rules)."""

    session_key: str
    agent: str
    cwd: str


class PermissionBroker:
    """Decides, asks or reviews; remembers "always" answers; settles reviews (``settle.py``)."""

    def __init__(self, scope: Scope, settings: PermissionSettings, *, questions: Questions, editor: EditorPort,
                 transcript: Conversation, files: FileAccess, accepted: AcceptedEdits, report: ErrorReporter,
                 waiting: Waiting) -> None:
        self.policy = settings.policy
        self._scope = scope
        self._questions = questions
        self._editor = editor
        self._transcript = transcript
        self._files = files
        self._waiting = waiting
        self._numbers = itertools.count(1)
        self._rules: RuleStore | None = None
        self._state_dir: str | None = None
        self.approvals = Approvals()
        """What each request of this turn showed and how it was answered (the write and exec gates read it)."""
        self.approvals.listeners.append(self._voided)
        self._shown: dict[int, Ticket] = {}
        """id() of each approval being asked -> its ticket (a void closes the question and asks again)."""
        self._bases: dict[str, Mapping[str, str | None]] = {}
        """Tool call id -> the review's left side per file, where it is not the file as it is now."""
        self.opened: list[Callable[[Approval], None]] = []
        """Told of each request as it is snapshotted, before its question is built (the exec gate)."""
        self.runs_code: set[str] = set()
        """Resolved paths that configure code execution whatever their file is now (the write gate: a
        boxed agent's file that gets an exec bit)."""
        self.settlement = Settlement(scope.session_key, transcript, files, accepted, self._get_state_dir, report,
                                     settings.rejected)

    # -- entry points ----------------------------------------------------------------

    async def handle(self, tool_call: ToolCallUpdate, options: list[PermissionOption], *,
                     bases: Mapping[str, str | None] | None = None,
                     asked: list[Ticket] | None = None) -> RequestPermissionResponse:
        """Answer one ``session/request_permission``.

        The request is registered before anything is prepared (rules read, review texts loaded):
        a cancel meanwhile answers it ``cancelled`` and nothing is shown. An update that changes
        what the question shows while it is asked closes it and asks again with what the request
        says now. ``bases``: the review's left side per file where it is not the file as it is
        now (a change already on disk is reviewed against the file before it). ``asked`` gets
        each ticket opened, so a caller can tell a "cancelled" the user chose from one a cancelled
        turn, an ended session or a withdrawn request gave (``Ticket.cancelled``).
        """
        if bases:
            self._bases[tool_call.tool_call_id] = bases
        try:
            earlier = review_model.content_edits(self._transcript.tool_calls.get(tool_call.tool_call_id))
            state = self._transcript.tools.tool_call(tool_call)
            for _ in range(MAX_ASKS):
                # a new ticket for each asking: an answer meant for what was shown before never counts
                with self._questions.open(self._scope.session_key, PERMISSION) as ticket:
                    if asked is not None:
                        asked.append(ticket)
                    approval = self.approvals.open(state)  # what the question shows, fixed before it is built
                    for hook in self.opened:
                        hook(approval)
                    response = await self._answer_shown(ticket, approval, state, earlier, options)
                    if not approval.void:
                        self.approvals.answer(approval, options, response)
                        return response
                    if ticket.cancelled:
                        return cancelled()
                self._transcript.notice(f"the agent changed {state.title or 'its request'} while it was "
                                        "asked: asking again with what it says now", "info")
            return cancelled()
        finally:
            self._bases.pop(tool_call.tool_call_id, None)

    async def _answer_shown(self, ticket: Ticket, approval: Approval, state: ToolCallState,
                            earlier: list[ProposedEdit], options: list[PermissionOption]) -> RequestPermissionResponse:
        self._shown[id(approval)] = ticket
        try:
            return await self._answer(ticket, approval, state, earlier, options)
        finally:
            self._shown.pop(id(approval), None)

    def _voided(self, approval: Approval) -> None:
        """An update voided ``approval``: a question still shown for it closes (it is asked again)."""
        ticket = self._shown.get(id(approval))
        if ticket is not None and ticket.answer(VOIDED):
            self._editor.dismiss(ticket)

    @property
    def files_policy(self) -> PathPolicy:
        """The session's workspace roots (``workspace_roots`` included)."""
        return self._files.policy

    async def current(self, path: str) -> Current:
        """The file as the user sees it now (buffer or disk), as a review's left side reads it."""
        return await review_model.read_current(path, self._files.policy, self._editor.buffer_text)

    def set_policy(self, policy: str) -> None:
        """Switch this session's policy (ValueError for an unknown one)."""
        self.policy = check_policy(policy)
        self._transcript.notice(f"permission policy: {policy}", "info")

    def start_turn(self) -> list[ContentBlock]:
        """A new prompt: the notes on reviewed edits to send with it (see ``Settlement.start_turn``);
        no earlier answer covers anything of the new turn."""
        self.approvals.start_turn()
        return self.settlement.start_turn()

    def on_tool_call(self, state: ToolCallState) -> None:
        """A tool call changed: an answer about it that it no longer matches is void
        (``Approvals.observe``); see also ``Settlement.on_tool_call``."""
        self.approvals.observe(state)
        self.settlement.on_tool_call(state)

    async def rule_store(self) -> RuleStore:
        """The shared rules file (in memory only when the editor has no state folder)."""
        if self._rules is None:
            state_dir = await self._get_state_dir()
            if self._rules is None:
                self._rules = RuleStore.at(Path(state_dir, *RULES_FILE)) if state_dir else RuleStore(None)
        return self._rules

    async def _get_state_dir(self) -> str | None:
        if self._state_dir is None:
            self._state_dir = await self._editor.state_dir()
        return self._state_dir or None

    async def _answer(self, ticket: Ticket, approval: Approval, state: ToolCallState, earlier: list[ProposedEdit],
                      options: list[PermissionOption]) -> RequestPermissionResponse:
        command = from_input(state.raw_input) if state.kind == "execute" else None
        offers = self._offers(state.kind, command)
        question = question_for(self._scope.session_key, state, options, offers, self._scope.cwd)
        edits = review_model.proposed_edits(state, earlier)
        auto = await self._automatic(question, state, command, edits, approval)
        if ticket.cancelled:
            return cancelled()
        if auto is not None:
            return selected(auto.choice)
        if edits:
            return await self._review(ticket, question, state, edits, offers)
        return await self._prompt(ticket, approval, question, offers)

    def _offers(self, kind: str, command: Command | None) -> dict[str, RuleOffer]:
        """The rule each "always" answer would store (or why it stores none)."""
        scope = self._scope
        return {always: offer(scope.agent, scope.cwd, kind, command, allow=always.startswith("allow"))
                for always in ALWAYS_KINDS}

    # -- automatic answers -------------------------------------------------------------

    async def _automatic(self, question: PermissionQuestion, state: ToolCallState, command: Command | None,
                         edits: list[ProposedEdit], approval: Approval) -> AutoAnswer | None:
        """A rule's or the policy's answer. A request that carries an edit is answered as an edit
        (never by a read, search or other rule); one touching a file that configures code
        execution is never allowed without the user. An allow rule bound to a script's content binds
        the approval to the bytes it was matched against (``Approval.bound``)."""
        scope = self._scope
        inside = self._inside_workspace(edits, state)
        kind = "edit" if edits else question.kind
        reads: tuple[ScriptRead, ...] = ()
        if kind == "execute" and command is not None and command.problem is None:
            reads = await asyncio.to_thread(read_scripts, command.texts, command.cwd, scope.cwd)
        request = RuleRequest(scope.agent, scope.cwd, kind, command, inside, scripts=reads)
        try:
            rule = await (await self.rule_store()).match(request)
        except RulesFileError as exc:
            self._transcript.notice(str(exc), "error")
            rule = None
        auto = decide(question.choices, kind, self.policy, rule, inside)
        if auto is not None and auto.allowed and self._configures_execution(edits, state):
            self._transcript.notice(f"asking: {question.title} changes a file that configures code execution "
                                    "(no policy or rule allows that without you)", "info")
            return None
        if auto is not None and auto.allowed and rule is not None and rule.scripts:
            approval.bound = reads
        if auto is not None:
            verb = "allowed" if auto.allowed else "rejected"
            self._transcript.notice(
                f"{verb} automatically ({auto.reason}): {question.kind} · {question.title} → {auto.choice.name}",
                "info")
        return auto

    def _configures_execution(self, edits: list[ProposedEdit], state: ToolCallState) -> bool:
        paths = [edit.path for edit in edits] + ([path for path, _ in state.locations] if edits else [])
        policy = self._files.policy
        for path in paths:
            try:
                resolved = policy.check(os.path.join(self._scope.cwd, path))
            except (RequestError, OSError):
                continue  # outside the workspace: never allowed automatically anyway
            if str(resolved) in self.runs_code or configures_execution(resolved, policy.roots):
                return True
        return False

    def _inside_workspace(self, edits: list[ProposedEdit], state: ToolCallState) -> bool:
        paths = [edit.path for edit in edits] + [path for path, _ in state.locations]
        if not paths:
            return False
        policy = self._files.policy  # the session's roots, workspace_roots included
        try:
            for path in paths:
                policy.check(path)
        except RequestError:
            return False
        return True

    # -- asking the user ------------------------------------------------------------------

    async def _ask(self, ticket: Ticket, view: str, show: Show) -> object:
        """Show the request and await the user's answer (None when cancelled)."""
        if ticket.cancelled:
            return None
        self._waiting(True)
        try:
            return await ticket.ask(view, show)
        finally:
            self._waiting(False)

    async def _prompt(self, ticket: Ticket, approval: Approval | None, question: PermissionQuestion,
                      offers: dict[str, RuleOffer]) -> RequestPermissionResponse:
        answer = await self._ask(ticket, PERMISSION, lambda t: self._editor.show_permission(t, question))
        choice = next((c for c in question.choices if c.option_id == answer), None)
        if choice is None:
            return cancelled()
        if choice.kind in ALWAYS_KINDS:
            made = offers[choice.kind]
            if approval is not None and choice.kind.startswith("allow") and made.rule is not None \
                    and made.rule.scripts:
                approval.bound = made.scripts  # the content the answer's rule is bound to runs, nothing later
            return selected(await self._remember(question, choice, made))
        return selected(choice)

    async def _remember(self, question: PermissionQuestion, choice: PermissionChoice,
                        rule_offer: RuleOffer) -> PermissionChoice:
        """Store the rule an "always" answer makes; the agent is answered "once" where it offers it.

        The rule is ours, scoped to what the user saw; the agent's own memory of an "always"
        could allow more, so it gets the "once" option of the same verdict when there is one.
        """
        once = pick(question.choices, ("allow_once",) if choice.kind.startswith("allow") else ("reject_once",))
        rule = rule_offer.rule
        if rule is None:
            self._transcript.notice(f"not remembered: {rule_offer.reason}; answered once", "info")
            return once or choice
        try:
            await (await self.rule_store()).add(rule)
        except RulesFileError as exc:
            self._transcript.notice(f"not remembered: {exc}", "error")
            return once or choice
        self._transcript.notice(f"remembered: {rule.describe()} (:Ai rules lists and removes rules)", "info")
        return once or choice

    async def _review(self, ticket: Ticket, question: PermissionQuestion, state: ToolCallState,
                      edits: list[ProposedEdit], offers: dict[str, RuleOffer]) -> RequestPermissionResponse:
        review = await review_model.build(self._scope.session_key, next(self._numbers), question.title,
                                          question.kind, edits,
                                          lambda path: self._read_current(path, state.tool_call_id), self._scope.cwd,
                                          self._files.policy.roots)
        for file in review.files:
            if file.note:
                self._transcript.notice(f"review of {file.path}: {file.note}", "info")
            if file.target:
                runs = " (a file that configures code execution)" if file.runs_code else ""
                self._transcript.notice(f"review of {file.path}: the name is a link; a write lands in "
                                        f"{file.target}{runs}", "warn")
        verdict = await self._ask(ticket, REVIEW, lambda t: self._editor.show_review(t, question, review))
        if not isinstance(verdict, ReviewVerdict):
            return cancelled()
        if verdict.error:
            self._transcript.notice(f"the review view failed ({verdict.error}): asking without it", "error")
            return await self._prompt(ticket, None, question, offers)
        return await self.settlement.settle(question, state, review, verdict)

    async def _read_current(self, path: str, tool_call_id: str) -> Current:
        bases = self._bases.get(tool_call_id, {})
        if path in bases:
            return Current(bases[path], loaded=False)
        return await self.current(path)
