"""The questions registry: registered before shown, answered once, cancelled by owner; and the
broker on top of it (a cancel during preparation answers ``cancelled`` and shows nothing)."""

from __future__ import annotations

import asyncio

import pytest
from acp.schema import PermissionOption, ToolCallUpdate
from fake_editor import FakeEditor

from acp_nvim.core.files.paths import PathPolicy
from acp_nvim.core.permissions.accepted import AcceptedEdits
from acp_nvim.core.permissions.broker import PermissionBroker, Scope
from acp_nvim.core.permissions.policy import PermissionSettings
from acp_nvim.core.questions import CHOICE, PERMISSION, THREE_WAY, Questions, choice_index
from acp_nvim.core.transcript.transcript import Transcript
from helpers import async_wait_for

pytestmark = pytest.mark.timeout(10)


async def test_an_answer_is_taken_once_and_only_while_shown():
    questions = Questions()
    with questions.open("s/1", PERMISSION) as ticket:
        assert questions.get(ticket.id) is ticket
        assert not ticket.answer("early"), "not shown yet: nothing to answer"
        shown = []
        asking = asyncio.ensure_future(ticket.ask(PERMISSION, shown.append))
        await async_wait_for(lambda: shown)
        assert ticket.waiting and questions.waiting("s/1") == [ticket] and questions.waiting("s/2") == []
        assert ticket.answer("yes") and not ticket.answer("no")
        assert await asking == "yes" and not ticket.waiting
    assert questions.get(ticket.id) is None, "closed with its block"


async def test_cancel_answers_the_owners_permission_requests_and_leaves_the_rest():
    questions = Questions()
    with questions.open("s/1", PERMISSION) as preparing, questions.open("s/1", THREE_WAY) as view, \
            questions.open("s/2", PERMISSION) as other:
        three_way = asyncio.ensure_future(view.ask(THREE_WAY, lambda t: None))
        prompt = asyncio.ensure_future(other.ask(PERMISSION, lambda t: None))
        await async_wait_for(lambda: view.waiting and other.waiting)
        assert questions.cancel("s/1") == [], "nothing of s/1 was shown as a permission request"
        assert preparing.cancelled and not view.cancelled and not other.cancelled
        assert await preparing.ask(PERMISSION, lambda t: pytest.fail("a cancelled request is never shown")) is None
        assert questions.cancel("s/2") == [other] and await prompt is None
        assert view.answer("agent") and await three_way == "agent"


async def test_a_shown_question_whose_show_fails_is_not_left_waiting():
    questions = Questions()

    def broken(ticket):
        raise RuntimeError("no view")

    with pytest.raises(RuntimeError), questions.open("", CHOICE) as ticket:
        await ticket.ask(CHOICE, broken)
    assert not ticket.waiting


@pytest.mark.parametrize(("answer", "index"), [("0", 0), ("2", 2), (1, 1), ("3", None), ("-1", None),
                                               ("x", None), (None, None), (True, None), ([1], None)])
def test_choice_index_takes_only_an_index_into_the_items(answer, index):
    assert choice_index(answer, 3) == index


class Files:
    policy = PathPolicy(["/nonexistent-root"])

    async def write(self, path: str, content: str, *, filtered: bool = True) -> None:
        raise AssertionError("nothing is written")


class GatedEditor(FakeEditor):
    """Its state folder (read to find the rules file) arrives only when the test opens the gate."""

    def __init__(self) -> None:
        super().__init__("allow_once")
        self.gate = asyncio.Event()
        self.asked_state = asyncio.Event()

    async def state_dir(self) -> str:
        self.asked_state.set()
        await self.gate.wait()
        return ""


async def test_a_cancel_while_the_request_is_prepared_answers_cancelled_and_shows_nothing():
    questions, editor, waits = Questions(), GatedEditor(), []
    broker = PermissionBroker(Scope("demo/1", "demo", "/ws"), PermissionSettings(), questions=questions,
                              editor=editor, transcript=Transcript(), files=Files(), accepted=AcceptedEdits(),
                              report=pytest.fail, waiting=waits.append)
    call = ToolCallUpdate(tool_call_id="t1", title="ls", kind="execute", raw_input={"command": "ls"})
    options = [PermissionOption(option_id="y", name="Yes", kind="allow_once")]
    answer = asyncio.ensure_future(broker.handle(call, options))
    await editor.asked_state.wait()  # the rules file is being looked up: the request is registered
    assert questions.cancel("demo/1") == []
    editor.gate.set()
    assert (await answer).outcome.outcome == "cancelled"
    assert editor.questions == [] and waits == [], "never shown, the session never waited"


async def test_a_prompt_answered_from_the_editor_by_id():
    questions, editor, waits = Questions(), FakeEditor(hold=True), []
    broker = PermissionBroker(Scope("demo/1", "demo", "/ws"), PermissionSettings(), questions=questions,
                              editor=editor, transcript=Transcript(), files=Files(), accepted=AcceptedEdits(),
                              report=pytest.fail, waiting=waits.append)
    call = ToolCallUpdate(tool_call_id="t1", title="ls", kind="execute", raw_input={"command": "ls"})
    options = [PermissionOption(option_id="y", name="Yes", kind="allow_once")]
    answer = asyncio.ensure_future(broker.handle(call, options))
    await async_wait_for(lambda: editor.tickets)
    ticket = questions.get(editor.tickets[0].id)
    assert ticket is not None and waits == [True]
    assert ticket.answer("y") and not ticket.answer("y")
    assert (await answer).outcome.option_id == "y" and waits == [True, False]
    assert questions.get(ticket.id) is None
