"""Subagents as child sessions (the subagents RFD, unstable), decoded by hand (schema_ext.py): one test per
shape, as claude-agent-acp 0.101 sends it (native-subagents.js ``announceNativeSubagent``, ``rfdEndState``,
``linkedSessionMessages``), and its bad inputs."""

from __future__ import annotations

import pytest

from acp_nvim.core.conversation import schema_ext
from acp_nvim.core.conversation.schema_ext import ChildState, SessionMessage, SubagentUpdate

# -- subagent_update: {"sessionUpdate": "subagent_update", "sessionId", "title"?, "description"?, ...} --


def test_the_announce_as_claude_sends_it() -> None:
    update = {"sessionUpdate": "subagent_update", "sessionId": "task-1", "title": "Explore the project",
              "description": "Explore", "capabilities": {"cancel": {}}, "state": {"state": "running"}}
    assert schema_ext.child_update(update) == SubagentUpdate(
        "task-1", "Explore the project", "Explore", True, ChildState("running"))


def test_the_end_of_a_childs_work_carries_its_stop_reason_and_error() -> None:
    ended = schema_ext.child_update({"sessionUpdate": "subagent_update", "sessionId": "c",
                                     "state": {"state": "idle", "stopReason": "cancelled"}})
    assert ended == SubagentUpdate("c", state=ChildState("idle", "cancelled"))
    failed = schema_ext.child_update({"sessionUpdate": "subagent_update", "sessionId": "c", "state": {
        "state": "idle", "stopReason": None, "error": {"code": -32603, "message": "API overloaded"}}})
    assert failed == SubagentUpdate("c", state=ChildState("idle", "", "API overloaded"))


def test_a_patch_leaves_what_it_omits_and_null_clears() -> None:
    patch = schema_ext.child_update({"sessionUpdate": "subagent_update", "sessionId": "c", "title": None,
                                     "capabilities": None, "state": None})
    assert patch == SubagentUpdate("c", title="", cancel=False, cleared_state=True)
    assert schema_ext.child_update({"sessionUpdate": "subagent_update", "sessionId": "c"}) == SubagentUpdate("c")
    no_cancel = schema_ext.child_update({"sessionUpdate": "subagent_update", "sessionId": "c", "capabilities": {}})
    assert no_cancel == SubagentUpdate("c", cancel=False)


def test_a_state_of_its_own_word_is_kept() -> None:
    update = schema_ext.child_update({"sessionUpdate": "subagent_update", "sessionId": "c",
                                      "state": {"state": "_paused", "extra": 1}})
    assert update == SubagentUpdate("c", state=ChildState("_paused"))


@pytest.mark.parametrize("bad", [
    {"sessionUpdate": "subagent_update"},
    {"sessionUpdate": "subagent_update", "sessionId": ""},
    {"sessionUpdate": "subagent_update", "sessionId": 7},
    {"sessionUpdate": "subagent_update", "sessionId": "c", "title": 3},
    {"sessionUpdate": "subagent_update", "sessionId": "c", "capabilities": "all"},
    {"sessionUpdate": "subagent_update", "sessionId": "c", "state": "running"},
    {"sessionUpdate": "subagent_update", "sessionId": "c", "state": {"state": ""}},
])
def test_a_malformed_subagent_update_is_none(bad: dict) -> None:
    assert schema_ext.child_update(bad) is None


# -- session_message: {"sessionUpdate": "session_message", "messageId", "senderSessionId"?, ...} -------


def test_the_prompt_to_a_child_as_claude_sends_it() -> None:
    update = {"sessionUpdate": "session_message", "messageId": "toolu_1", "senderSessionId": "root",
              "recipientSessionId": "task-1", "content": [{"type": "text", "text": "Read the README"}],
              "recipientMessageId": "toolu_1"}
    assert schema_ext.child_update(update) == SessionMessage("toolu_1", "root", "task-1", "Read the README")


def test_a_message_without_content_leaves_it_and_null_ids_are_unknown() -> None:
    update = {"sessionUpdate": "session_message", "messageId": "m", "senderSessionId": None}
    assert schema_ext.child_update(update) == SessionMessage("m", None, None, None)
    cleared = schema_ext.child_update({"sessionUpdate": "session_message", "messageId": "m", "content": None})
    assert cleared == SessionMessage("m", None, None, "")


@pytest.mark.parametrize("bad", [
    {"sessionUpdate": "session_message"},
    {"sessionUpdate": "session_message", "messageId": 1},
    {"sessionUpdate": "session_message", "messageId": "m", "senderSessionId": 2},
    {"sessionUpdate": "session_message", "messageId": "m", "content": "text"},
])
def test_a_malformed_session_message_is_none(bad: dict) -> None:
    assert schema_ext.child_update(bad) is None


def test_other_kinds_are_not_child_updates() -> None:
    assert schema_ext.child_update({"sessionUpdate": "notice", "severity": "info", "title": "t"}) is None
