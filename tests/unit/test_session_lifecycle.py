"""The session's state machine (core/session/lifecycle.py) and the stream's gate (updates.py)."""

from __future__ import annotations

from acp import start_tool_call, update_agent_message_text, update_tool_call
from acp.schema import AvailableCommandsUpdate, SessionInfoUpdate

from acp_nvim.core.conversation.details import SessionDetails
from acp_nvim.core.conversation.prompt import Prompt, Turn
from acp_nvim.core.conversation.updates import UpdateRouter
from acp_nvim.core.log.ring import LogRing
from acp_nvim.core.session.lifecycle import ENDED, TRANSITIONS, Lifecycle, State, Trouble
from acp_nvim.core.transcript.conversation import Conversation
from acp_nvim.core.transcript.projection import ChatProjection


def lifecycle() -> tuple[Lifecycle, list[str]]:
    told: list[str] = []
    machine = Lifecycle("demo/1", LogRing(level="trace"), lambda: told.append(machine.state.value), told.append)
    return machine, told


def test_the_states_are_the_strings_the_editor_shows():
    assert [s.value for s in State] == ["starting", "idle", "running", "waiting", "closed", "failed"]
    assert State.IDLE == "idle" and {State.CLOSED, State.FAILED} == ENDED


def test_closed_is_the_end_and_every_other_state_may_close():
    assert TRANSITIONS[State.CLOSED] == frozenset()
    assert all(State.CLOSED in TRANSITIONS[s] for s in State if s is not State.CLOSED)
    machine, told = lifecycle()
    machine.move(State.CLOSED)
    machine.move(State.STARTING)
    assert machine.state is State.CLOSED and told == ["closed"]


def test_a_turn_starts_only_from_a_started_session():
    assert State.RUNNING not in TRANSITIONS[State.STARTING]
    machine, told = lifecycle()
    machine.move(State.RUNNING)
    assert machine.state is State.STARTING and told == []
    machine.move(State.IDLE)
    machine.move(State.RUNNING)
    machine.move(State.RUNNING)  # a second turn: the editor is told again
    assert told == ["idle", "running", "running"]


def test_a_recovery_is_cleared_by_its_kind_never_by_its_words():
    machine, _ = lifecycle()
    machine.trouble(Trouble.SLOW, "no answer to session/new yet")
    machine.clear(Trouble.SILENT)
    assert machine.why == "no answer to session/new yet"
    machine.clear(Trouble.SLOW)
    assert machine.why == "" and machine.recovery is None


class Turns:
    """The prompt queue as the session builds the router: empty, hence falsy (``PromptQueue.__len__``)."""

    def __init__(self) -> None:
        self.cancelling = False
        self.turn: Turn | None = None

    def __len__(self) -> int:
        return 0


def router() -> tuple[UpdateRouter, Turns, list[list[object]]]:
    ops: list[list[object]] = []
    turns = Turns()
    assert not turns, "the stand-in is falsy, as the real queue is when the session is built"
    transcript = Conversation()
    ChatProjection(transcript, ops.append)
    return UpdateRouter(transcript, SessionDetails(), LogRing(), [], lambda: None, turns=turns), turns, ops


def test_after_a_cancel_the_turns_late_output_is_dropped_and_counted_and_commands_still_pass():
    stream, turns, ops = router()
    turns.turn, turns.cancelling = Turn(Prompt("hi")), True
    stream.chunk("agent_message_chunk", "late")
    stream.route(update_agent_message_text("late too"))
    stream.route(AvailableCommandsUpdate(session_update="available_commands_update", available_commands=[]))
    assert ops == [] and turns.turn.dropped == 2


def test_a_tool_call_after_a_cancel_is_shown_cancelled_not_pending():
    stream, turns, _ = router()
    turns.turn, turns.cancelling = Turn(Prompt("hi")), True
    stream.route(start_tool_call("late-1", "A late call", kind="read", status="pending"))
    assert stream._transcript.tool_calls["late-1"].status == "cancelled"
    stream.route(update_tool_call("late-1", status="completed"))  # what the agent says after still shows
    assert stream._transcript.tool_calls["late-1"].status == "completed"


def test_a_null_title_clears_it_and_an_update_without_one_keeps_it():
    stream, _, _ = router()
    details = stream._details
    stream.route(SessionInfoUpdate.model_validate({"sessionUpdate": "session_info_update", "title": "Named"}))
    assert details.title == "Named"
    stream.route(SessionInfoUpdate.model_validate({"sessionUpdate": "session_info_update",
                                                   "updatedAt": "2026-12-05T07:00:00Z"}))
    assert details.title == "Named"
    stream.route(SessionInfoUpdate.model_validate({"sessionUpdate": "session_info_update", "title": None}))
    assert details.title == "", "cleared by the agent (not None: no older title comes back)"


def test_a_held_replay_drops_the_conversation_until_released():
    stream, _, ops = router()
    stream.hold(True)
    stream.chunk("agent_message_chunk", "replayed")
    stream.route(update_agent_message_text("replayed too"))
    assert ops == []
    stream.hold(False)
    stream.chunk("agent_message_chunk", "new")
    assert ops and ops[0]["op"] == "new"
