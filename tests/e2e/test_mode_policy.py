"""The user's permission policy wins over the agent's mode: the table, the verdicts, a real session."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from fake_editor import FakeEditor

from acp_nvim.core.config import parse_settings
from acp_nvim.core.connection.mode_policy import MAX_SWITCHES, MODE_TABLE, find, judge
from acp_nvim.core.session.manager import SessionManager
from acp_nvim.core.session.session import Prompt
from helpers import async_wait_for
from helpers.core import chat_text as chat

pytestmark = pytest.mark.timeout(30)

MODE_AGENT = Path(__file__).resolve().parents[1] / "e2e" / "mode_agent.py"
CLAUDE_MODES = {"default", "acceptEdits", "plan", "auto"}  # as claude-agent-acp 0.101 offers them
CODEX_MODES = {"read-only", "workspace-write", "agent", "agent-full-access"}  # @agentclientprotocol/codex-acp 2.6
LEGACY_CODEX_MODES = {"read-only", "auto", "full-access"}  # @zed-industries/codex-acp 0.16
LEGACY = "Codex (zed-industries)"
GEMINI_MODES = {"default", "autoEdit", "yolo", "plan"}
BY_LABEL = {entry.label: entry for entry in MODE_TABLE}


@pytest.mark.parametrize(("name", "offered", "label"), [
    ("@agentclientprotocol/claude-agent-acp", CLAUDE_MODES, "Claude Code"),
    ("@zed-industries/claude-code-acp", CLAUDE_MODES, "Claude Code"),
    ("@agentclientprotocol/codex-acp", CODEX_MODES, "Codex"),
    ("codex-acp", LEGACY_CODEX_MODES, LEGACY),
    ("gemini-cli", GEMINI_MODES, "Gemini CLI"),
    ("OpenCode", set(), "opencode"),
    ("my-wrapper", {"default", "acceptEdits", "bypassPermissions"}, "Claude Code"),
    ("my-wrapper", CODEX_MODES, "Codex"),
    ("my-wrapper", LEGACY_CODEX_MODES, LEGACY),
    ("my-wrapper", {"default", "autoEdit", "yolo"}, "Gemini CLI"),
    ("acp-nvim-demo", {"ask", "code"}, None),
    ("", set(), None),
])
def test_agents_are_found_by_their_initialize_name_or_their_modes(name, offered, label):
    entry = find(name, offered)
    assert (entry.label if entry else None) == label


ASKS_ENV = {"OPENCODE_PERMISSION": '{"edit":"ask","bash":"ask"}'}


@pytest.mark.parametrize(("label", "current", "offered", "policy", "configured", "env", "expected"), [
    ("Claude Code", "auto", CLAUDE_MODES, "ask", None, {}, "switch default"),
    ("Claude Code", "bypassPermissions", CLAUDE_MODES | {"bypassPermissions"}, "ask", None, {}, "switch default"),
    ("Claude Code", "acceptEdits", CLAUDE_MODES, "ask", None, {}, "switch default"),
    ("Claude Code", "auto", CLAUDE_MODES, "auto-edit", None, {}, "switch default"),
    ("Claude Code", "acceptEdits", CLAUDE_MODES, "auto-edit", None, {}, None),
    ("Claude Code", "default", CLAUDE_MODES, "ask", None, {}, None),
    ("Claude Code", "plan", CLAUDE_MODES, "ask", None, {}, None),
    ("Claude Code", "auto", CLAUDE_MODES, "trust", None, {}, None),
    ("Claude Code", "acceptEdits", CLAUDE_MODES, "ask", "acceptEdits", {}, "note"),
    ("Claude Code", "auto", {"auto", "plan"}, "ask", None, {}, "warn"),
    ("Codex", "agent", CODEX_MODES, "ask", None, {}, "switch read-only"),
    ("Codex", "workspace-write", CODEX_MODES, "ask", None, {}, "switch read-only"),
    ("Codex", "agent-full-access", CODEX_MODES, "auto-edit", None, {}, "switch read-only"),
    ("Codex", "read-only", CODEX_MODES, "ask", None, {}, None),
    ("Codex", "agent", CODEX_MODES, "ask", "agent", {}, "note"),
    ("Codex", "permission-profile:custom", CODEX_MODES | {"permission-profile:custom"}, "ask", None, {}, None),
    ("Codex", "agent", CODEX_MODES, "trust", None, {}, None),
    (LEGACY, "auto", LEGACY_CODEX_MODES, "ask", None, {}, "switch read-only"),
    (LEGACY, "full-access", LEGACY_CODEX_MODES, "auto-edit", None, {}, "switch read-only"),
    (LEGACY, "read-only", LEGACY_CODEX_MODES, "ask", None, {}, None),
    (LEGACY, "auto", LEGACY_CODEX_MODES, "ask", "auto", {}, "note"),
    ("Gemini CLI", "yolo", GEMINI_MODES, "ask", None, {}, "switch default"),
    ("Gemini CLI", "autoEdit", GEMINI_MODES, "ask", None, {}, "switch default"),
    ("Gemini CLI", "autoEdit", GEMINI_MODES, "auto-edit", None, {}, None),
    ("Gemini CLI", "default", GEMINI_MODES, "ask", None, {}, None),
    ("opencode", None, set(), "ask", None, {}, "warn"),
    ("opencode", "build", {"build", "plan"}, "ask", None, {"OPENCODE_PERMISSION": "not json"}, "warn"),
    ("opencode", None, set(), "ask", None, ASKS_ENV, None),
    ("opencode", None, set(), "ask", None, {"OPENCODE_PERMISSION": '"ask"'}, None),
    ("opencode", None, set(), "auto-edit", None, {}, None),
])
def test_verdicts(label, current, offered, policy, configured, env, expected):
    verdict = judge(BY_LABEL[label], current, offered, policy, configured, env)
    if verdict is None:
        got = None
    elif verdict.switch_to:
        got = f"switch {verdict.switch_to}"
    else:
        got = "warn" if verdict.warning else "note"
    assert got == expected, verdict


def test_unknown_agents_are_left_alone():
    assert judge(None, "yolo", {"yolo"}, "ask", None, {}) is None


# -- a real session (the mode agent as a real subprocess) ------------------------------------


def agent(**env: str) -> dict:
    return {"command": sys.executable, "args": [str(MODE_AGENT)], "env": env}


async def started(tmp_path, policy="ask", mode=None, **env):
    editor = FakeEditor()
    spec = agent(**env) | ({"mode": mode} if mode else {})
    manager = SessionManager(editor, parse_settings({"agents": {"probe": spec}, "permissions": {"policy": policy}}))
    session = manager.create("probe", str(tmp_path))
    await session.start()
    return editor, session


CLAUDE = {"ACP_TEST_AGENT_NAME": "@agentclientprotocol/claude-agent-acp",
          "ACP_TEST_MODES": "default,acceptEdits,plan,auto", "ACP_TEST_MODE": "auto"}


async def test_a_claude_like_agent_starting_in_auto_is_switched_to_the_asking_mode(tmp_path):
    _, session = await started(tmp_path, **CLAUDE)
    try:
        assert session.view.mode == "default"
        assert "the agent started in mode auto, which asks nothing; switched to mode default" in chat(session)
    finally:
        await session.close()


async def test_modes_offered_only_as_a_config_option_are_switched_there(tmp_path):
    _, session = await started(tmp_path, **CLAUDE, ACP_TEST_MODE_OPTION="1")
    try:
        assert session.details.option("mode").current == "default"
        assert "switched to mode default" in chat(session)
    finally:
        await session.close()


async def test_with_modes_and_a_mode_option_the_policy_switches_the_option(tmp_path):
    _, session = await started(tmp_path, **CLAUDE, ACP_TEST_MODE_OPTION="both")
    try:
        assert session.details.option("mode").current == "default" and session.view.mode == "default"
        assert "switched to mode default" in chat(session) and "failed" not in chat(session)
    finally:
        await session.close()


async def test_with_modes_and_a_mode_option_the_configured_mode_is_looked_up_in_the_option_first(tmp_path):
    _, session = await started(tmp_path, mode="acceptEdits", **CLAUDE, ACP_TEST_MODE_OPTION="both")
    try:
        assert session.details.option("mode").current == "acceptEdits" and session.view.mode == "acceptEdits"
        assert "failed" not in chat(session) and "offers no mode" not in chat(session)
    finally:
        await session.close()


async def test_with_modes_and_a_mode_option_a_mode_switch_goes_through_the_option(tmp_path):
    _, session = await started(tmp_path, policy="trust", **CLAUDE, ACP_TEST_MODE_OPTION="both")
    try:
        await session.set_mode("plan")  # what :Ai mode plan runs; the agent refuses session/set_mode
        assert session.details.option("mode").current == "plan" and session.view.mode == "plan"
    finally:
        await session.close()


async def test_a_refused_switch_warns_in_the_chat_and_by_notification(tmp_path):
    editor, session = await started(tmp_path, **CLAUDE, ACP_TEST_REFUSE_MODE="1")
    try:
        assert session.state == "idle" and session.view.mode == "auto"
        assert "switching the agent to mode default failed" in chat(session)
        assert any("its edits may not be reviewed" in text and level == "warn" for text, level in editor.notes)
    finally:
        await session.close()


async def test_a_configured_mode_is_kept_and_noted(tmp_path):
    _, session = await started(tmp_path, mode="acceptEdits", **CLAUDE)
    try:
        assert session.view.mode == "acceptEdits"
        assert "mode acceptEdits (set in your config) applies edits without asking" in chat(session)
    finally:
        await session.close()


async def test_policy_trust_keeps_the_agents_mode(tmp_path):
    _, session = await started(tmp_path, policy="trust", **CLAUDE)
    try:
        assert session.view.mode == "auto" and "switched" not in chat(session)
    finally:
        await session.close()


async def test_an_agent_without_an_asking_mode_gets_a_warning(tmp_path):
    editor, session = await started(tmp_path, ACP_TEST_AGENT_NAME="OpenCode")
    try:
        assert "its edits won't be reviewed" in chat(session)
        assert any("OPENCODE_PERMISSION" in text for text, _ in editor.notes)
    finally:
        await session.close()


# -- the agent switches itself mid-session ----------------------------------------------------


async def switch_itself(session, mode: str, via: str = "update") -> None:
    turns = session.details.turns
    session.submit(Prompt(json.dumps({"op": "switch", "mode": mode, "via": via})))
    await async_wait_for(lambda: session.details.turns > turns and session.state == "idle")


@pytest.mark.parametrize("via", ["update", "option"])
async def test_an_agent_switching_itself_to_a_mode_that_asks_nothing_is_switched_back(tmp_path, via):
    option = {"ACP_TEST_MODE_OPTION": "1"} if via == "option" else {}
    _, session = await started(tmp_path, **CLAUDE, **option)
    try:
        assert session.view.mode == "default"
        await switch_itself(session, "bypassPermissions" if via == "update" else "auto", via)
        await async_wait_for(lambda: "the agent switched itself to mode" in chat(session), what="the note")
        await async_wait_for(lambda: session.view.mode == "default", what="the switch back")
    finally:
        await session.close()


async def test_a_mode_the_user_chose_is_kept(tmp_path):
    _, session = await started(tmp_path, **CLAUDE)
    try:
        await session.set_mode("auto")
        await switch_itself(session, "auto")
        assert session.view.mode == "auto" and "switched itself" not in chat(session)
    finally:
        await session.close()


async def test_a_switch_to_a_mode_that_asks_is_left_alone(tmp_path):
    _, session = await started(tmp_path, **CLAUDE)
    try:
        await switch_itself(session, "plan")
        assert session.view.mode == "plan" and "switched itself" not in chat(session)
    finally:
        await session.close()


async def test_an_agent_answering_a_switch_with_another_mode_is_switched_back_a_bounded_number_of_times(tmp_path):
    editor, session = await started(tmp_path, **CLAUDE, ACP_TEST_MODE_OPTION="1", ACP_TEST_STICKY_MODE="auto")
    try:
        await async_wait_for(lambda: "keeps switching itself to mode auto" in chat(session), what="the warning")
        assert chat(session).count("the agent switched itself to mode auto") == MAX_SWITCHES
        assert any("keeps switching itself" in text and level == "warn" for text, level in editor.notes)
    finally:
        await session.close()


CODEX = {"ACP_TEST_AGENT_NAME": "@agentclientprotocol/codex-acp",
         "ACP_TEST_MODES": "read-only,workspace-write,agent,agent-full-access", "ACP_TEST_MODE": "agent"}


async def test_codex_starting_in_agent_is_switched_to_read_only(tmp_path):
    _, session = await started(tmp_path, **CODEX)
    try:
        assert session.view.mode == "read-only"
        assert "the agent started in mode agent, which asks nothing; switched to mode read-only" in chat(session)
    finally:
        await session.close()
