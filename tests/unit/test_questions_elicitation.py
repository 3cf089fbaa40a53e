"""The agent's questions (elicitation) and withdrawals ($/cancel_request): the form's fields and
checks, the desk's answers through a ticket, and the wire's routing of ``$/cancel_request``."""

from __future__ import annotations

import asyncio
import json

import pytest
from acp import RequestError
from acp.schema import ElicitationFormSessionMode, ElicitationSchema, ElicitationUrlSessionMode
from fake_editor import FakeEditor
from test_wire import PERMISSION, Recorder, line, run

from acp_nvim.core.agent import inbound
from acp_nvim.core.conversation import form
from acp_nvim.core.conversation.asking import QuestionDesk
from acp_nvim.core.log.redact import Redactor
from acp_nvim.core.log.ring import LogRing
from acp_nvim.core.questions import AGENT_REQUEST, Questions
from acp_nvim.core.questions import PERMISSION as PERMISSION_VIEW
from acp_nvim.core.transcript.conversation import Conversation
from helpers import async_wait_for

pytestmark = pytest.mark.timeout(30)

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2, "maxLength": 5, "pattern": "^[A-Z]"},
        "n": {"type": "integer", "minimum": 1, "maximum": 3},
        "x": {"type": "number", "maximum": 1.5},
        "ok": {"type": "boolean", "default": True},
        "pick": {"type": "string", "enum": ["a", "b"]},
        "titled": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}], "default": "r"},
        "many": {"type": "array", "items": {"type": "string", "enum": ["p", "q", "s"]}, "maxItems": 2,
                 "default": ["p"]},
        "day": {"type": "string", "format": "date"},
        "odd": {"type": "object"},
    },
    "required": ["name", "n"],
}


def specs() -> list[form.Spec]:
    return form.specs_of(ElicitationSchema.model_validate(SCHEMA))


def test_fields_keep_the_agents_order_with_kinds_defaults_and_hints():
    fields = [s.field for s in specs()]
    assert [(f.key, f.kind, f.required, f.value) for f in fields] == [
        ("name", "string", True, ""), ("n", "integer", True, ""), ("x", "number", False, ""),
        ("ok", "boolean", False, "true"), ("pick", "enum", False, ""), ("titled", "enum", False, "Red"),
        ("many", "multi", False, "p"), ("day", "string", False, ""), ("odd", "other", False, "")]
    hints = {f.key: f.hint for f in fields}
    assert hints["name"] == "text, 2–5 characters, matching ^[A-Z]" and hints["n"] == "integer, 1–3"
    assert hints["many"] == "any of: p, q, s (at most 2)" and "cannot answer" in hints["odd"]


def test_a_valid_answer_becomes_typed_content():
    content, problems = form.judge(specs(), {"name": " Ada ", "n": "2", "x": "-1.25", "ok": "no", "pick": "b",
                                             "titled": "Red", "many": "p, s", "day": "2026-12-01"})
    assert problems == {}
    assert content == {"name": "Ada", "n": 2, "x": -1.25, "ok": False, "pick": "b", "titled": "r",
                       "many": ["p", "s"], "day": "2026-12-01"}


@pytest.mark.parametrize(("key", "text", "reason"), [
    ("name", "A", "at least 2 characters (has 1)"),
    ("name", "Abcdef", "at most 5 characters (has 6)"),
    ("name", "ada", "does not match ^[A-Z]"),
    ("n", "2.5", "a whole number"),
    ("n", "9", "at most 3"),
    ("x", "inf", "a finite number"),
    ("x", "lots", "a number"),
    ("ok", "maybe", "true or false"),
    ("pick", "c", "not one of the choices (<CR> picks)"),
    ("many", "p, z", "'z' is not one of the choices (<CR> picks)"),
    ("many", "p, q, s", "pick at most 2"),
    ("day", "tomorrow", "not a valid date"),
])
def test_each_value_that_does_not_validate_says_why(key, text, reason):
    _, problems = form.judge(specs(), {"name": "Ada", "n": "1", key: text})
    assert problems == {key: reason}


def test_required_fields_must_be_filled_and_unknown_types_are_never_sent():
    schema = {**SCHEMA, "required": ["name", "n", "odd"]}
    content, problems = form.judge(form.specs_of(ElicitationSchema.model_validate(schema)), {"odd": "{}"})
    assert problems == {"name": "required", "n": "required",
                        "odd": "required, but acp.nvim cannot answer a field of type 'object'"}
    assert "odd" not in content


def test_a_pattern_python_cannot_read_is_not_held_against_the_user():
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": "(?<=x"}}}
    assert form.judge(form.specs_of(ElicitationSchema.model_validate(schema)), {"s": "y"}) == ({"s": "y"}, {})


def test_too_many_fields_are_refused():
    schema = {"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(form.MAX_FIELDS + 1)}}
    with pytest.raises(form.FormError, match="at most 50"):
        form.specs_of(ElicitationSchema.model_validate(schema))


# -- the desk --------------------------------------------------------------------------------------

class Desk:
    def __init__(self, answer: object, closed: bool = False) -> None:
        self.editor = FakeEditor()
        self.editor.form_answer = answer
        self.questions = Questions()
        self.log = LogRing(1000, 1 << 20, "debug", redact=Redactor.for_env({"TOKEN": "sekrit-value-123"}))
        self.transcript = Conversation(agent_label="demo")
        self.waits: list[bool] = []
        self.desk = QuestionDesk("demo/1", "demo", self.questions, self.editor, self.transcript, self.log,
                                 closed=lambda: closed, waiting=self.waits.append)

    def logged(self) -> str:
        return "\n".join(f"{e.summary} {e.raw or ''}" for e in self.log.entries())


def form_mode(tool: str | None = None) -> ElicitationFormSessionMode:
    return ElicitationFormSessionMode(session_id="s", tool_call_id=tool,
                                      requested_schema=ElicitationSchema.model_validate(SCHEMA))


async def test_an_accepted_form_answers_the_content_and_the_log_has_it_redacted():
    desk = Desk({"action": "accept", "values": {"name": "Sekr", "n": "3", "ok": "true", "titled": "Red",
                                                "many": "p", "secret": "sekrit-value-123"}})
    schema = {**SCHEMA, "properties": {**SCHEMA["properties"], "secret": {"type": "string"}}}
    mode = ElicitationFormSessionMode(session_id="s", requested_schema=ElicitationSchema.model_validate(schema))
    response = await desk.desk.ask("Who?", mode)
    assert response.action == "accept"
    assert response.content == {"name": "Sekr", "n": 3, "ok": True, "titled": "r", "many": ["p"],
                                "secret": "sekrit-value-123"}
    assert desk.waits == [True, False] and desk.editor.dismissed, "the form closes once answered"
    assert "question 1 answered" in desk.logged() and "sekrit-value-123" not in desk.logged()
    assert desk.questions.count() == 0


async def test_an_answer_that_does_not_validate_is_marked_and_asked_again():
    desk = Desk({"action": "accept", "values": {"name": "x"}})
    response = await desk.desk.ask("Who?", form_mode())
    assert desk.editor.marks == [{"name": "at least 2 characters (has 1)", "n": "required"}]
    assert response.action == "cancel", "the fake cancels after the marks"
    assert "does not validate" in desk.logged()


@pytest.mark.parametrize(("answer", "action"), [({"action": "decline"}, "decline"), (None, "cancel"),
                                                 ({"action": "bogus"}, "cancel"), ("accept", "cancel")])
async def test_decline_and_anything_else_the_editor_sends(answer, action):
    desk = Desk(answer)
    assert (await desk.desk.ask("Who?", form_mode())).action == action
    assert f"question 1: {action}" in desk.logged()


async def test_a_cancelled_turn_answers_cancel_without_showing_anything():
    desk = Desk({"action": "accept", "values": {}}, closed=True)
    assert (await desk.desk.ask("Who?", form_mode())).action == "cancel"
    assert desk.editor.forms == []


async def test_the_scope_names_the_tool_call():
    desk = Desk({"action": "decline"})
    await desk.desk.ask("Who?", form_mode(tool="t-9"))
    assert (desk.editor.forms[0].scope, desk.editor.forms[0].tool) == ("tool call", "t-9")


async def test_a_form_with_too_many_fields_is_an_invalid_params_error():
    schema = {"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(60)}}
    mode = ElicitationFormSessionMode(session_id="s", requested_schema=ElicitationSchema.model_validate(schema))
    with pytest.raises(RequestError) as raised:
        await Desk(None).desk.ask("Many", mode)
    assert "at most 50" in json.dumps(raised.value.data)


async def test_a_url_is_shown_with_its_host_and_only_web_links():
    desk = Desk({"action": "accept"})
    mode = ElicitationUrlSessionMode.model_validate({"sessionId": "s", "elicitationId": "e",
                                                     "url": "https://auth.example.com/x"})
    assert (await desk.desk.ask("Sign in", mode)).action == "accept"
    assert (desk.editor.forms[0].url, desk.editor.forms[0].host) == ("https://auth.example.com/x", "auth.example.com")
    other = ElicitationUrlSessionMode.model_validate({"sessionId": "s", "elicitationId": "f", "url": "file:///etc"})
    assert (await desk.desk.ask("Look", other)).action == "decline" and len(desk.editor.forms) == 1


async def test_withdrawing_a_request_answers_and_closes_only_its_questions():
    desk = Desk(None)
    desk.editor.hold = True
    token = AGENT_REQUEST.set(7)
    try:
        mine = asyncio.ensure_future(desk.questions.ask("demo/1", PERMISSION_VIEW, lambda t: None))
    finally:
        AGENT_REQUEST.reset(token)
    other = asyncio.ensure_future(desk.questions.ask("demo/1", PERMISSION_VIEW, lambda t: None))
    await async_wait_for(lambda: desk.questions.count() == 2 and all(
        t.waiting for t in desk.questions.waiting("demo/1")) and len(desk.questions.waiting("demo/1")) == 2)
    desk.desk.withdraw("7")
    assert not mine.done(), "a string id is not the number 7"
    desk.desk.withdraw(7)
    assert await mine is None and not other.done()
    assert [t.withdrawn for t in desk.editor.dismissed] == [True]
    assert desk.editor.notes == [("demo/1: the agent withdrew its permission request", "warn")]
    other.cancel()


# -- the wire ---------------------------------------------------------------------------------------

class Withdrawals(Recorder):
    def __init__(self) -> None:
        super().__init__()
        self.withdrawn: list[object] = []
        self.ids: list[object] = []

    def cancel_request(self, params: object) -> None:
        self.withdrawn.append(params)

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        self.ids.append(AGENT_REQUEST.get())
        return await super().request_permission(session_id, tool_call, options, **kwargs)


async def test_the_wire_hands_cancel_request_over_and_runs_each_request_with_its_id():
    recorder = Withdrawals()
    assert isinstance(recorder, inbound.Withdrawing)
    cancel = line({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 7}})
    await run([PERMISSION, cancel], recorder, until=1)
    assert recorder.withdrawn == [{"requestId": 7}] and recorder.ids == [7]
    assert AGENT_REQUEST.get() is None

