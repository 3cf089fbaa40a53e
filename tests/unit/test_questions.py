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
from acp_nvim.core.transcript.conversation import Conversation
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
    def __init__(self, root: str = "/nonexistent-root") -> None:
        self.policy = PathPolicy([root])

    async def write(self, path: str, content: str, *, origin: str = "agent") -> None:
        raise AssertionError("nothing is written")

    async def revert(self, path: str, before: str | None, *, force: bool = False) -> str:
        return "unsaved"  # nothing is written


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
                              editor=editor, transcript=Conversation(), files=Files(), accepted=AcceptedEdits(),
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
                              editor=editor, transcript=Conversation(), files=Files(), accepted=AcceptedEdits(),
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


# -- order, many at once, cancels that race the preparation, nothing left behind ---------------


class SlowRulesEditor(FakeEditor):
    """Holds every question; its state folder (read while a request is prepared) answers in reverse order
    of asking, so later requests finish preparing first."""

    def __init__(self) -> None:
        super().__init__(hold=True)
        self.asking: list[asyncio.Future[str]] = []

    async def state_dir(self) -> str:
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.asking.append(future)
        return await future


def broker_for(questions: Questions, editor: FakeEditor, waits: list | None = None,
               root: str = "/nonexistent-root") -> PermissionBroker:
    return PermissionBroker(Scope("demo/1", "demo", "/ws"), PermissionSettings(), questions=questions,
                            editor=editor, transcript=Conversation(), files=Files(root), accepted=AcceptedEdits(),
                            report=pytest.fail, waiting=(waits if waits is not None else []).append)


def request(n: int) -> ToolCallUpdate:
    return ToolCallUpdate(tool_call_id=f"t{n}", title=f"perm {n:03}", kind="execute",
                          raw_input={"command": f"echo {n}"})


OPTIONS = [PermissionOption(option_id="y", name="Yes", kind="allow_once")]


@pytest.mark.parametrize("count", [20, 200])
async def test_many_requests_at_once_are_shown_in_arrival_order_answered_once_and_cancel_answers_the_rest(count):
    questions, editor = Questions(), SlowRulesEditor()
    broker = broker_for(questions, editor)
    answers = [asyncio.ensure_future(broker.handle(request(n), OPTIONS)) for n in range(count)]
    await async_wait_for(lambda: len(editor.asking) == count)
    for future in reversed(editor.asking):  # the last to arrive is the first prepared
        future.set_result("")
    await async_wait_for(lambda: len(editor.tickets) == count)
    assert [q.title for q in editor.questions] == [f"perm {n:03}" for n in range(count)]
    half = count // 2
    for ticket in editor.tickets[:half]:
        assert ticket.answer("y") and not ticket.answer("y")
    shown = questions.cancel("demo/1")
    assert [t.id for t in shown] == [t.id for t in editor.tickets[half:]]
    outcomes = [(await answer).outcome for answer in answers]
    assert [o.outcome for o in outcomes] == ["selected"] * half + ["cancelled"] * (count - half)
    assert questions.count() == 0, "no question left behind"


async def test_a_slow_request_holds_back_the_ones_after_it():
    questions, editor, waits = Questions(), SlowRulesEditor(), []
    broker = broker_for(questions, editor, waits)
    first, second, third = (asyncio.ensure_future(broker.handle(request(n), OPTIONS)) for n in range(3))
    await async_wait_for(lambda: len(editor.asking) == 3)
    editor.asking[2].set_result("")
    editor.asking[1].set_result("")
    await async_wait_for(lambda: waits == [True, True])  # both prepared, both about to be shown
    assert editor.questions == [], "the first request is still being prepared: nothing is shown before it"
    editor.asking[0].set_result("")
    await async_wait_for(lambda: len(editor.tickets) == 3)
    assert [q.title for q in editor.questions] == ["perm 000", "perm 001", "perm 002"]
    questions.cancel("demo/1")
    await asyncio.gather(first, second, third)
    assert questions.count() == 0


async def test_a_cancel_while_a_review_is_prepared_answers_cancelled_and_shows_nothing(tmp_path):
    class SlowBufferEditor(FakeEditor):
        def __init__(self) -> None:
            super().__init__("allow_once")
            self.gate = asyncio.Event()
            self.reading = asyncio.Event()

        async def buffer_text(self, path: str) -> str | None:
            self.reading.set()
            await self.gate.wait()
            return "old\n"

    questions, editor, waits = Questions(), SlowBufferEditor(), []
    broker = broker_for(questions, editor, waits, root=str(tmp_path))  # a review reads only inside the roots
    path = str(tmp_path / "a.txt")
    call = ToolCallUpdate(tool_call_id="t1", title="Edit a.txt", kind="edit",
                          content=[{"type": "diff", "path": path, "oldText": "old\n", "newText": "new\n"}])
    answer = asyncio.ensure_future(broker.handle(call, OPTIONS))
    await editor.reading.wait()  # the review's texts are being loaded
    assert questions.cancel("demo/1") == []
    editor.gate.set()
    assert (await answer).outcome.outcome == "cancelled"
    assert editor.reviews == [] and editor.questions == [] and waits == []
    assert questions.count() == 0


async def test_a_session_that_ends_drops_every_question_it_holds():
    questions = Questions()
    with questions.open("s/1", THREE_WAY) as view, questions.open("s/1", CHOICE) as picker, \
            questions.open("s/2", CHOICE) as other:
        asked = [asyncio.ensure_future(t.ask(t.view, lambda t: None)) for t in (view, picker, other)]
        await async_wait_for(lambda: view.waiting and picker.waiting and other.waiting)
        assert {t.id for t in questions.drop("s/1")} == {view.id, picker.id}
        assert await asked[0] is None and await asked[1] is None and other.waiting
        other.answer("0")
        await asked[2]
    assert questions.count() == 0


def test_an_empty_registry_is_still_the_one_shared():
    from acp_nvim.core.config import parse_settings
    from acp_nvim.core.session.manager import SessionManager

    questions = Questions()
    assert SessionManager(FakeEditor(), parse_settings({}), questions).questions is questions


@pytest.mark.parametrize("kind", ["execute", "edit"])
async def test_a_dismissed_prompt_or_review_answers_cancelled_and_leaves_nothing_behind(tmp_path, kind):
    editor = FakeEditor(None)  # the user closed the view without answering
    questions, tasks_before = Questions(), asyncio.all_tasks()
    broker = broker_for(questions, editor)
    path = str(tmp_path / "a.txt")
    call = request(1) if kind == "execute" else ToolCallUpdate(
        tool_call_id="t1", title="Edit a.txt", kind="edit",
        content=[{"type": "diff", "path": path, "oldText": "old\n", "newText": "new\n"}])
    for _ in range(3):
        assert (await broker.handle(call, OPTIONS)).outcome.outcome == "cancelled"
    assert len(editor.tickets) == 3 and len(editor.reviews) == (3 if kind == "edit" else 0)
    assert questions.count() == 0 and not any(t.waiting for t in editor.tickets)
    assert asyncio.all_tasks() == tasks_before, "no task left waiting on a dismissed view"


async def test_dismissed_pickers_and_three_way_views_close_their_questions():
    questions = Questions()
    for view in (CHOICE, THREE_WAY):
        assert await questions.ask("", view, lambda t: t.answer(None)) is None
    assert questions.count() == 0
