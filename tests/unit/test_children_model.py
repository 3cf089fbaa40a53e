"""Subagents as child sessions in the core (children.py, updates.py): a child is drawn as one call that
runs a subagent, its own session's tool calls and text folded under it, its state from the agent's
patches; its questions say which child asks; the client side serves its requests as the session's."""

from __future__ import annotations

from typing import Any

from acp.helpers import start_tool_call, update_tool_call
from acp.schema import PermissionOption

from acp_nvim.core.conversation.details import SessionDetails
from acp_nvim.core.conversation.updates import UpdateRouter
from acp_nvim.core.log.ring import LogRing
from acp_nvim.core.permissions.answers import question_for
from acp_nvim.core.transcript.conversation import Conversation
from acp_nvim.core.transcript.projection import ChatProjection

ANNOUNCE = {"sessionUpdate": "subagent_update", "sessionId": "task-1", "title": "Explore the project",
            "description": "Explore", "capabilities": {"cancel": {}}, "state": {"state": "running"}}


def router() -> tuple[UpdateRouter, Conversation, list[dict]]:
    ops: list[dict] = []
    transcript = Conversation(agent_label="demo")
    ChatProjection(transcript, ops.append)
    return UpdateRouter(transcript, SessionDetails(), LogRing(level="trace"), [], lambda: None), transcript, ops


def tools(transcript: Conversation) -> list[str]:
    return [b.text() for b in transcript.blocks if b.kind == "tool"]


def announced() -> tuple[UpdateRouter, Conversation]:
    stream, transcript, _ = router()
    stream.newer(ANNOUNCE)
    return stream, transcript


def test_an_announced_child_is_one_call_that_runs_a_subagent() -> None:
    stream, transcript = announced()
    child = stream.children.get("task-1")
    assert child is not None and child.can_cancel and child.status == "in_progress"
    [block] = tools(transcript)
    assert block.split("\n")[0] == "◐ think · subagent “Explore the project” (Explore) · in_progress"
    assert transcript.tools.running_subagents() == 1


def test_a_childs_calls_and_text_fold_under_it_with_its_last_line() -> None:
    stream, transcript = announced()
    assert stream.child("task-1", "", start_tool_call("r1", "Read README.md", kind="read", status="in_progress"),
                        None)
    stream.child("task-1", "agent_message_chunk", "Reading.\nREADME read; looking deeper.", None)
    stream.child("task-1", "", update_tool_call("r1", status="completed"), None)
    [block] = tools(transcript)
    fold = block.split("\n")[-1]
    assert fold.startswith("  ▸ subagent · 1 tool call: 1 done · 2 lines said · ")
    assert fold.endswith(" · “README read; looking deeper.”")
    assert transcript.tool_calls["r1"].asker == "subagent “Explore the project” (Explore)"


def test_the_childs_end_is_its_calls_status() -> None:
    stream, transcript = announced()
    stream.newer({"sessionUpdate": "subagent_update", "sessionId": "task-1",
                  "state": {"state": "idle", "stopReason": "cancelled"}})
    assert tools(transcript)[0].split("\n")[0].startswith("⊘ think · subagent “Explore the project”")
    assert transcript.tools.running_subagents() == 0
    stream.newer({"sessionUpdate": "subagent_update", "sessionId": "task-1", "state": {"state": "running"}})
    stream.newer({"sessionUpdate": "subagent_update", "sessionId": "task-1",
                  "state": {"state": "idle", "stopReason": "end_turn"}})
    assert tools(transcript)[0].split("\n")[0].startswith("● think · subagent “Explore the project”")


def test_a_childs_report_to_its_parent_is_what_it_said() -> None:
    stream, transcript = announced()
    stream.newer({"sessionUpdate": "session_message", "messageId": "toolu_1", "senderSessionId": "task-1",
                  "recipientSessionId": "root", "content": [{"type": "text", "text": "Found 3 TODOs."}]})
    assert transcript.tool_calls["subagent:task-1"].said == "Found 3 TODOs."


def test_a_grandchild_is_drawn_under_its_parent_child() -> None:
    stream, transcript = announced()
    assert stream.child("task-1", "newer", {**ANNOUNCE, "sessionId": "task-2", "title": "Look for TODOs"}, None)
    assert stream.children.get("task-2") is not None
    assert transcript.tool_calls["subagent:task-2"].parent == "subagent:task-1"
    assert len(tools(transcript)) == 1


def test_updates_of_a_session_that_is_no_child_are_not_taken() -> None:
    stream, _, _ = router()
    assert not stream.child("stranger", "agent_message_chunk", "hi", None)
    stream.newer(ANNOUNCE)
    stream.child("task-1", "newer", {**ANNOUNCE, "title": "stolen"}, None)  # ownership never changes
    child = stream.children.get("task-1")
    assert child is not None and child.title == "Explore the project"


def test_a_childs_permission_request_says_which_child_asks() -> None:
    stream, transcript = announced()
    child = stream.child_request("task-1", "e1")  # the request comes before the call's first update
    assert child is not None
    state = transcript.tools.tool_call(start_tool_call("e1", "Edit notes.md", kind="edit", status="pending"))
    question = question_for("demo/1", state, [PermissionOption(option_id="ok", name="Allow", kind="allow_once")])
    assert question.title == "Edit notes.md — asked by subagent “Explore the project” (Explore)"
    assert stream.child_request("stranger", "e2") is None


def test_the_client_side_serves_a_childs_requests_and_routes_its_updates() -> None:
    from acp_nvim.core.conversation.client import SessionClient

    stream, transcript = announced()

    class Served:
        session_id = "root"
        log = LogRing(level="trace")

        def __init__(self) -> None:
            self.stream = stream

        def tell(self, text: str) -> None:
            raise AssertionError(text)

    served: Any = Served()
    client = SessionClient(served)
    assert client._own("task-1") is served
    client.updates([("task-1", "agent_message_chunk", "from the child", None), ("root", "agent_message_chunk",
                                                                                  "from the parent", None)])
    assert transcript.tool_calls["subagent:task-1"].said == "from the child"
    assert [b.text() for b in transcript.blocks if b.kind == "agent"] == ["from the parent"]
