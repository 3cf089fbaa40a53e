"""The agent's questions to the user (``elicitation/create`` and ``elicitation/complete``) and its
withdrawn requests (``$/cancel_request``), for one session.

A question is a ticket of the questions registry, shown by the editor as a form or a URL to open;
it is answered once: ``accept`` with the checked content, ``decline`` (the user said no, ``q``) or
``cancel`` (dismissed, the turn cancelled, the session ended). An answer that does not validate
is marked on the form and asked again on the same ticket. Every answer and refusal goes in the
session log (redacted as all of it is); the chat says what was asked and how it ended, never
what was answered.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

from acp import RequestError
from acp.schema import (
    AcceptElicitationResponse,
    CancelElicitationResponse,
    DeclineElicitationResponse,
    ElicitationFormRequestMode,
    ElicitationFormSessionMode,
    ElicitationUrlRequestMode,
    ElicitationUrlSessionMode,
)

from ..log.ring import LogRing
from ..port import EditorPort, QuestionForm
from ..questions import QUESTION, Questions, Ticket
from ..transcript.conversation import Conversation
from . import form as forms

Mode = ElicitationFormSessionMode | ElicitationFormRequestMode | ElicitationUrlSessionMode | ElicitationUrlRequestMode
Answer = AcceptElicitationResponse | DeclineElicitationResponse | CancelElicitationResponse
OPENABLE = ("http", "https")
"""URL schemes acp.nvim offers to open; any other is shown and declined."""
VIEW_NAMES = {"permission": "permission request", "review": "review", "question": "question"}


class QuestionDesk:
    """Serves one session's ``elicitation/*`` requests and the agent's withdrawals."""

    def __init__(self, key: str, agent: str, questions: Questions, editor: EditorPort, transcript: Conversation,
                 log: LogRing, closed: Callable[[], bool], waiting: Callable[[bool], None]) -> None:
        self._key = key
        self._agent = agent
        self._questions = questions
        self._editor = editor
        self._transcript = transcript
        self._log = log
        self._closed = closed
        """The turn is being cancelled or the session ended: a question is answered ``cancel`` at once."""
        self._waiting = waiting
        """The session waits for the user (True) or got the answer (False)."""
        self._urls: dict[str, Ticket] = {}
        """Open url-mode questions by elicitation id (``elicitation/complete`` closes one)."""

    async def ask(self, message: str, mode: Mode, keeps_working: bool = False) -> Answer:
        """Show the agent's question and return the user's answer (``elicitation/create``). ``keeps_working``:
        the turn does not wait for it (the agent steers the answer into the running turn itself)."""
        if self._closed():
            self._log.add("info", "question", f"answered cancel at once (the turn is cancelled): {message:.200}")
            return CancelElicitationResponse(action="cancel")
        if isinstance(mode, (ElicitationUrlSessionMode, ElicitationUrlRequestMode)):
            return await self._ask_url(message, mode)
        if keeps_working:
            self._transcript.notice("the agent keeps working while you answer its question: your answer goes "
                                    "into its running turn (after the turn ended it is not delivered)", "info")
        return await self._ask_form(message, mode)

    async def _ask_form(self, message: str, mode: ElicitationFormSessionMode | ElicitationFormRequestMode) -> Answer:
        try:
            specs = forms.specs_of(mode.requested_schema)
        except forms.FormError as exc:
            self._log.add("warn", "question", f"refused a form: {exc}")
            raise RequestError.invalid_params({"reason": str(exc)}) from None
        with self._questions.open(self._key, QUESTION) as ticket:
            number = ticket.id
            question = QuestionForm(self._key, self._agent, number, message, *self._scope(mode),
                                    fields=tuple(spec.field for spec in specs))
            self._asked(question, "form")
            answer = await self._shown(ticket, question)
            while True:
                action, texts = _action(answer)
                if action != "accept":
                    return self._ended(number, ticket, action)
                content, problems = forms.judge(specs, texts)
                if not problems:
                    break
                self._log.add("info", "question", f"question {number}: the answer does not validate: "
                              + "; ".join(f"{key}: {why}" for key, why in problems.items()))
                answer = await ticket.ask(QUESTION, functools.partial(self._editor.mark_question, problems=problems))
            self._editor.dismiss(ticket)
        self._log.add("info", "question", f"question {number} answered",
                      raw=json.dumps(content, ensure_ascii=False))
        self._transcript.notice(f"you answered the agent's question {number}", "info")
        return AcceptElicitationResponse(action="accept", content=content)

    async def _ask_url(self, message: str, mode: ElicitationUrlSessionMode | ElicitationUrlRequestMode) -> Answer:
        url = str(mode.url)
        parts = urlsplit(url)
        if parts.scheme not in OPENABLE:
            self._log.add("warn", "question", f"declined a question to open a {parts.scheme}: URL ({url:.200}): "
                          "only http and https are opened")
            self._transcript.notice(f"the agent asked to open a {parts.scheme}: URL: declined (acp.nvim opens only "
                                    "http and https)", "error")
            return DeclineElicitationResponse(action="decline")
        with self._questions.open(self._key, QUESTION) as ticket:
            number = ticket.id
            question = QuestionForm(self._key, self._agent, number, message, *self._scope(mode), url=url,
                                    host=parts.hostname or "")
            self._asked(question, f"to open {url}")
            self._urls[mode.elicitation_id] = ticket
            try:
                answer = await self._shown(ticket, question)
            finally:
                self._urls.pop(mode.elicitation_id, None)
            action, _ = _action(answer)
            if action != "accept":
                return self._ended(number, ticket, action)
        self._log.add("info", "question", f"question {number}: accepted (the link to {parts.hostname})")
        self._transcript.notice(f"you opened the agent's link ({parts.hostname}); it says when that step is done",
                                "info")
        return AcceptElicitationResponse(action="accept")

    def complete(self, elicitation_id: str) -> None:
        """``elicitation/complete``: the agent says a url-mode step is done; a question still shown closes."""
        ticket = self._urls.pop(elicitation_id, None)
        self._log.add("info", "question", f"the agent completed elicitation {elicitation_id!r:.80}")
        if ticket is not None and ticket.answer({"action": "accept"}):
            self._editor.dismiss(ticket)
        self._transcript.notice("the agent says the step in your browser is done", "info")

    def withdraw(self, request: int | str) -> None:
        """``$/cancel_request``: every question that serves the agent's ``request`` closes, saying so."""
        withdrawn = self._questions.withdraw(self._key, request)
        self._log.add("info", "wire", f"the agent withdrew request {request!r:.80}"
                      + ("" if withdrawn else " (nothing was open for it)"))
        for ticket in withdrawn:
            what = VIEW_NAMES.get(ticket.view, ticket.view)
            self._editor.dismiss(ticket)
            self._transcript.notice(f"the agent withdrew its {what}", "notice")
            self._editor.notify(f"{self._key}: the agent withdrew its {what}", "warn")

    # -- helpers ---------------------------------------------------------------------------

    async def _shown(self, ticket: Ticket, question: QuestionForm) -> object:
        """Show the question; the session waits for the user meanwhile."""
        self._waiting(True)
        try:
            return await ticket.ask(QUESTION, lambda t: self._editor.show_question(t, question))
        finally:
            self._waiting(False)

    def _scope(self, mode: Mode) -> tuple[str, str]:
        """What the question belongs to, and the title of its tool call."""
        if isinstance(mode, (ElicitationFormRequestMode, ElicitationUrlRequestMode)):
            return f"request {mode.request_id}", ""
        if mode.tool_call_id is None:
            return "session", ""
        state = self._transcript.tool_calls.get(mode.tool_call_id)
        return "tool call", state.title if state is not None else mode.tool_call_id

    def _asked(self, question: QuestionForm, what: str) -> None:
        tool = f" ({question.tool})" if question.tool else ""
        self._log.add("info", "question", f"question {question.number} ({question.scope}{tool}) {what}: "
                      f"{question.message:.300}")
        self._transcript.notice(f"the agent asks a question ({question.scope}{tool}): {question.message:.200} "
                                "(:Ai questions)", "notice")

    def _ended(self, number: int, ticket: Ticket, action: str) -> Answer:
        why = "the agent withdrew it" if ticket.withdrawn else "the user declined" if action == "decline" \
            else "dismissed or cancelled"
        self._log.add("info", "question", f"question {number}: {action} ({why})")
        if action == "decline":
            self._transcript.notice(f"you declined the agent's question {number}", "info")
            return DeclineElicitationResponse(action="decline")
        return CancelElicitationResponse(action="cancel")



def _action(answer: object) -> tuple[str, Mapping[str, object]]:
    """The editor's answer as (accept | decline | cancel, the field texts); anything else is cancel."""
    if not isinstance(answer, Mapping):
        return "cancel", {}
    action = answer.get("action")
    values = answer.get("values")
    texts = {str(k): v for k, v in values.items()} if isinstance(values, Mapping) else {}
    return (action if action in ("accept", "decline") else "cancel"), texts
