"""One session's permission requests: remembered rules and the policy first, then the user.

Diff-bearing requests open a review (every file); others get a prompt with every option.
The answer always names an option chosen by its ``kind``; it goes out exactly once.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from acp import RequestError, text_block
from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

from ..files.paths import PathPolicy
from ..port import EditorPort, PermissionChoice, PermissionQuestion
from ..questions import PERMISSION, REVIEW, Questions, Show, Ticket
from ..tasks import ErrorReporter, spawn
from ..transcript.tool_calls import ToolCallState, command_of
from ..transcript.transcript import Transcript
from . import review as review_model
from .accepted import AcceptedEdit, AcceptedEdits, agent_note
from .policy import (
    ALLOW_ONCE_FIRST,
    ALWAYS_KINDS,
    REJECT_ONCE_FIRST,
    AutoAnswer,
    PermissionSettings,
    check_policy,
    decide,
    pick,
)
from .review import Current, ProposedEdit, Review, ReviewVerdict
from .rules import RulesFileError, RuleStore, make_rule

DETAIL_LINES = 20
MAX_REVIEW_BYTES = 32 * 1024 * 1024
RULES_FILE = ("acp_nvim", "rules.json")
REJECTED_DIR = ("acp_nvim", "rejected")

Waiting = Callable[[bool], None]
"""Told True when the user is asked, False when the answer came."""


@dataclass(frozen=True, slots=True)
class Scope:
    """Whose requests a broker answers: the session (questions, rejected copies), agent and workspace (rules)."""

    session_key: str
    agent: str
    cwd: str


class FileAccess(Protocol):
    """What the broker needs of the session's files (``FileService``)."""

    @property
    def policy(self) -> PathPolicy: ...

    async def write(self, path: str, content: str, *, filtered: bool = True) -> None: ...


class PermissionBroker:
    """Decides, asks or reviews; remembers "always" answers; corrects writes after a review."""

    def __init__(self, scope: Scope, settings: PermissionSettings, *, questions: Questions, editor: EditorPort,
                 transcript: Transcript, files: FileAccess, accepted: AcceptedEdits, report: ErrorReporter,
                 waiting: Waiting) -> None:
        self.policy = settings.policy
        self.accepted = accepted
        self._scope = scope
        self._questions = questions
        self._editor = editor
        self._transcript = transcript
        self._files = files
        self._report = report
        self._waiting = waiting
        self._notes: list[str] = []
        self._numbers = itertools.count(1)
        self._rules: RuleStore | None = None
        self._state_dir: str | None = None

    # -- entry points ----------------------------------------------------------------

    async def handle(self, tool_call: Any, options: list[Any]) -> RequestPermissionResponse:
        """Answer one ``session/request_permission``.

        The request is registered before anything is prepared (rules read, review texts loaded):
        a cancel meanwhile answers it ``cancelled`` and nothing is shown.
        """
        with self._questions.open(self._scope.session_key, PERMISSION) as ticket:
            return await self._answer(ticket, tool_call, options)

    async def _answer(self, ticket: Ticket, tool_call: Any, options: list[Any]) -> RequestPermissionResponse:
        earlier = review_model.content_edits(self._transcript.tool_calls.get(tool_call.tool_call_id))
        state = self._transcript.tool_call(tool_call)
        question = _question(self._scope.session_key, state, options)
        edits = review_model.proposed_edits(state, earlier)
        auto = await self._automatic(question, state, edits)
        if ticket.cancelled:
            return _cancelled()
        if auto is not None:
            return _selected(auto.choice)
        if edits:
            return await self._review(ticket, question, state, edits)
        return await self._prompt(ticket, question, state)

    def set_policy(self, policy: str) -> None:
        """Switch this session's policy (ValueError for an unknown one)."""
        self.policy = check_policy(policy)
        self._transcript.notice(f"permission policy: {policy}", "info")

    def start_turn(self) -> list[Any]:
        """A new prompt: blocks telling the agent how its reviewed edits really landed (once).

        Accepted texts still waiting for a write expire here: their turn is over.
        """
        self.accepted.clear()
        if not self._notes:
            return []
        notes, self._notes = self._notes, []
        return [text_block("[Note from the editor, acp.nvim]\n" + "\n\n".join(notes))]

    def on_tool_call(self, state: ToolCallState) -> None:
        """A tool call changed: once a reviewed edit completes, make the files what the user accepted."""
        if state.status == "failed":
            self.accepted.settle(state.tool_call_id)
        elif state.status == "completed":
            left = self.accepted.settle(state.tool_call_id)
            if left:
                spawn(self._correct(left), self._report, f"{self._scope.session_key} review write")

    async def rule_store(self) -> RuleStore:
        """The shared rules file (in memory only when the editor has no state folder)."""
        if self._rules is None:
            state_dir = await self._get_state_dir()
            self._rules = RuleStore(Path(state_dir, *RULES_FILE) if state_dir else None)
        return self._rules

    # -- automatic answers -------------------------------------------------------------

    async def _automatic(self, question: PermissionQuestion, state: ToolCallState,
                         edits: list[ProposedEdit]) -> AutoAnswer | None:
        scope = self._scope
        try:
            rule = await (await self.rule_store()).match(
                scope.agent, scope.cwd, question.kind, command_of(state.raw_input))
        except RulesFileError as exc:
            self._transcript.notice(str(exc), "error")
            rule = None
        inside = self._inside_workspace(edits, state)
        auto = decide(question.choices, question.kind, self.policy, rule, inside)
        if auto is not None:
            verb = "allowed" if auto.allowed else "rejected"
            self._transcript.notice(
                f"{verb} automatically ({auto.reason}): {question.kind} · {question.title} → {auto.choice.name}",
                "info")
        return auto

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

    async def _prompt(self, ticket: Ticket, question: PermissionQuestion,
                      state: ToolCallState) -> RequestPermissionResponse:
        answer = await self._ask(ticket, PERMISSION, lambda t: self._editor.show_permission(t, question))
        choice = next((c for c in question.choices if c.option_id == answer), None)
        if choice is None:
            return _cancelled()
        if choice.kind in ALWAYS_KINDS:
            await self._remember(question, state, choice)
        return _selected(choice)

    async def _remember(self, question: PermissionQuestion, state: ToolCallState, choice: PermissionChoice) -> None:
        scope = self._scope
        rule = make_rule(scope.agent, scope.cwd, question.kind, command_of(state.raw_input),
                         allow=choice.kind.startswith("allow"))
        try:
            await (await self.rule_store()).add(rule)
        except RulesFileError as exc:
            self._transcript.notice(f"not remembered: {exc}", "error")
            return
        self._transcript.notice(f"remembered: {rule.describe()} (:Ai rules lists and removes rules)", "info")

    async def _review(self, ticket: Ticket, question: PermissionQuestion, state: ToolCallState,
                      edits: list[ProposedEdit]) -> RequestPermissionResponse:
        review = await review_model.build(self._scope.session_key, next(self._numbers), question.title,
                                          question.kind, edits, self._read_current, self._scope.cwd)
        for file in review.files:
            if file.note:
                self._transcript.notice(f"review of {file.path}: {file.note}", "info")
        verdict = await self._ask(ticket, REVIEW, lambda t: self._editor.show_review(t, question, review))
        if not isinstance(verdict, ReviewVerdict):
            return _cancelled()
        if verdict.error:
            self._transcript.notice(f"the review view failed ({verdict.error}): asking without it", "error")
            return await self._prompt(ticket, question, state)
        return await self._settle(question, state, review, verdict)

    async def _read_current(self, path: str) -> Current:
        text = await self._editor.buffer_text(path)
        if text is not None:
            return Current(text, loaded=True)
        return await asyncio.to_thread(_read_file, Path(path))

    # -- after the review -------------------------------------------------------------------

    async def _settle(self, question: PermissionQuestion, state: ToolCallState, review: Review,
                      verdict: ReviewVerdict) -> RequestPermissionResponse:
        transcript = self._transcript
        texts = {file.path: file.text for file in verdict.files}
        rejected = [file for file in review.files if texts.get(file.path) is None]
        await self._keep_rejected(review, rejected)
        if not verdict.accepted:
            transcript.notice(f"review: you rejected {question.title}", "info")
            return _selected_or_cancelled(pick(question.choices, REJECT_ONCE_FIRST))
        choice = pick(question.choices, ALLOW_ONCE_FIRST)
        if choice is None:
            transcript.notice("the agent offered no allow option: answered cancelled", "error")
            return _cancelled()
        for file in review.files:
            self._record(state.tool_call_id, file, texts.get(file.path))
        accepted = len(review.files) - len(rejected)
        transcript.notice(f"review: you accepted {accepted} of {len(review.files)} file(s) of {question.title}",
                          "info")
        return _selected(choice)

    def _record(self, tool_call_id: str, file: review_model.FileReview, text: str | None) -> None:
        if file.snippet_only and text is not None:
            return  # shown as sent, read-only: the agent's own write is what was accepted
        self.accepted.add(AcceptedEdit(tool_call_id, file.path, file.agent_text, text, file.current))
        note = agent_note(file.path, file.agent_text, text)
        if note:
            self._notes.append(note)
            self._transcript.notice(f"note for the agent, sent with your next prompt: {note}", "info")

    async def _keep_rejected(self, review: Review, files: list[review_model.FileReview]) -> None:
        if not files:
            return
        state_dir = await self._get_state_dir()
        for file in files:
            where = await self._save_copy(state_dir, review, file) if state_dir else None
            kept = f"kept in {where} (:edit it to see it)" if where else "not kept: no state folder"
            self._transcript.notice(f"rejected proposal for {file.path} {kept}", "info")

    async def _save_copy(self, state_dir: str, review: Review, file: review_model.FileReview) -> str | None:
        folder = Path(state_dir, *REJECTED_DIR, re.sub(r"[^\w.-]+", "-", review.session_key))
        target = folder / f"{review.number}-{Path(file.path).name}"
        try:
            await asyncio.to_thread(_write_copy, target, file.agent_text)
        except OSError as exc:
            self._transcript.notice(f"could not keep the rejected proposal: {exc}", "error")
            return None
        return str(target)

    async def _correct(self, edits: list[AcceptedEdit]) -> None:
        """The agent wrote the disk itself: put the accepted text in place where it differs."""
        for edit in edits:
            target = edit.target
            if target is None or await asyncio.to_thread(_disk_text, Path(edit.path)) == target:
                continue
            try:
                await self._files.write(edit.path, target, filtered=False)
            except Exception as exc:
                self._transcript.notice(f"could not put your reviewed text in {edit.path}: {exc}", "error")
                continue
            self._transcript.notice(f"{edit.path} now holds the text you accepted in the review", "info")

    async def _get_state_dir(self) -> str | None:
        if self._state_dir is None:
            self._state_dir = await self._editor.state_dir()
        return self._state_dir or None


# -- helpers ----------------------------------------------------------------------------------


def _question(session_key: str, state: ToolCallState, options: list[Any]) -> PermissionQuestion:
    choices = tuple(PermissionChoice(o.option_id, o.name, o.kind) for o in options)
    return PermissionQuestion(session_key=session_key, title=state.title, kind=state.kind,
                              detail=describe_request(state), choices=choices)


def describe_request(state: ToolCallState) -> str:
    """What the prompt shows: the command, or the raw input as indented JSON, and the locations."""
    command = command_of(state.raw_input)
    if command:
        lines = [f"$ {command}"]
    elif state.raw_input not in (None, {}):
        lines = json.dumps(state.raw_input, indent=2, ensure_ascii=False, default=str).split("\n")
    else:
        lines = []
    if len(lines) > DETAIL_LINES:
        lines = [*lines[:DETAIL_LINES], f"… {len(lines) - DETAIL_LINES} more lines"]
    lines += [f"→ {path}{f':{line}' if line else ''}" for path, line in state.locations]
    return "\n".join(lines)


def _selected(choice: PermissionChoice) -> RequestPermissionResponse:
    return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=choice.option_id))


def _selected_or_cancelled(choice: PermissionChoice | None) -> RequestPermissionResponse:
    return _selected(choice) if choice is not None else _cancelled()


def _cancelled() -> RequestPermissionResponse:
    return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


def _write_copy(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _read_file(path: Path) -> Current:
    """The file on disk for the left side of a review (never raising)."""
    try:
        if path.stat().st_size > MAX_REVIEW_BYTES:
            return Current(None, problem="the file is too large to review")
        return Current(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        return Current(None)
    except UnicodeDecodeError:
        return Current(None, problem="the file is not UTF-8 text")
    except OSError as exc:
        return Current(None, problem=f"cannot read it: {exc.strerror or exc}")


def _disk_text(path: Path) -> str | None:
    current = _read_file(path)
    return current.text
