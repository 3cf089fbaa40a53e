"""A real agent configured plainly (command, args, env: no preset, no ``mode``) under policy ask.

claude-agent-acp starts in mode ``auto``, which asks nothing, and codex-acp in ``agent``, which
edits the workspace unasked: the plugin must switch each to its mode that asks (``default``,
``read-only``), say so in the chat, and review its edit. When the user switches to a mode that
skips requests, an edit that lands unasked opens a review of that change, and rejecting it puts
the file back.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .agents import EXECUTABLES, AgentSetup, prepare, unavailable
from .driver import AgentDriver
from .model_server import ModelServer
from .test_real_agents import EDITED, ORIGINAL, edit_prompt, target

pytestmark = [pytest.mark.real_agent, pytest.mark.timeout(150)]

PLAIN_CLAUDE = "{ command = 'claude-agent-acp', env = vim.json.decode(env_json) }"
PLAIN_CODEX = "{ command = 'node', args = { %s }, env = vim.json.decode(env_json) }"


def _plain(request: pytest.FixtureRequest, model_server: ModelServer, home: Path, name: str, lua: str) -> AgentDriver:
    reason = unavailable(name)
    if reason:
        pytest.skip(f"real agent {name!r} unavailable: {reason}")
    setup = prepare(name, model_server.url, home)
    plain = AgentSetup(name, setup.env, agent_lua=lua)
    driver = AgentDriver(request.getfixturevalue("nvim"), plain, model_server, request.getfixturevalue("workspace"))
    driver.start()
    return driver


@pytest.fixture
def plain_claude(request: pytest.FixtureRequest, model_server: ModelServer, agent_home: Path) -> AgentDriver:
    return _plain(request, model_server, agent_home, "claude", PLAIN_CLAUDE)


@pytest.fixture
def plain_codex(request: pytest.FixtureRequest, model_server: ModelServer, agent_home: Path) -> AgentDriver:
    return _plain(request, model_server, agent_home, "codex", PLAIN_CODEX % json.dumps(str(EXECUTABLES["codex"])))


def test_plain_claude_under_ask_is_switched_to_the_mode_that_asks_and_its_edit_is_reviewed(plain_claude):
    agent = plain_claude
    with agent.step("plain config: the session runs in the mode that asks, and the chat says why"):
        agent.wait(lambda: agent.state().get("mode") == "default", "the session mode to become 'default'")
        agent.wait_chat("the agent started in mode auto, which asks nothing; switched to mode default")
    path = target(agent)
    with agent.step("plain config: the edit opens a review"):
        before = agent.send(edit_prompt(path))
        request = agent.wait_permission("edit")
        agent.check(request.view == "review", f"the edit was asked as {request.view!r}, not in a review")
        agent.check(path.read_text() == ORIGINAL, "the file changed before the user answered")
    with agent.step("plain config: accepting lets the edit land, nothing is flagged"):
        agent.answer(request, "accept")
        agent.wait_turn_end(before)
        agent.wait(lambda: path.read_text() == EDITED, f"{path.name} to hold the accepted text")
        agent.check("not reviewed" not in agent.chat(), "a reviewed edit was flagged 'not reviewed'")


def test_an_edit_that_lands_unasked_is_reviewed_and_a_reject_puts_it_back(plain_claude):
    agent = plain_claude
    agent.wait(lambda: agent.state().get("mode") == "default", "the session mode to become 'default'")
    with agent.step("unasked edit: the user switches to a mode that applies edits unasked"):
        agent.nvim.command("Ai mode acceptEdits")
        agent.wait(lambda: agent.state().get("mode") == "acceptEdits", "the session mode to become 'acceptEdits'")
    path = target(agent)
    with agent.step("unasked edit: the edit lands without a request and a review of the change opens"):
        before = agent.send(edit_prompt(path))
        agent.wait_turn_end(before)
        request = agent.wait_permission("edit")
        agent.check(request.view == "review", f"the change was asked as {request.view!r}, not in a review")
    with agent.step("unasked edit: rejecting the review puts the file back"):
        agent.answer(request, "reject")
        agent.wait(lambda: path.read_text() == ORIGINAL, f"{path.name} to be put back")
        agent.check("not reviewed" not in agent.chat(), "a reviewed change was flagged 'not reviewed'")


def test_plain_codex_under_ask_is_switched_to_read_only_and_a_rejected_edit_leaves_the_file(plain_codex):
    agent = plain_codex
    with agent.step("plain codex: the session runs in read-only, and the chat says why"):
        agent.wait(lambda: agent.state().get("mode") == "read-only", "the session mode to become 'read-only'")
        agent.wait_chat("the agent started in mode agent, which asks nothing; switched to mode read-only")
    path = target(agent)
    with agent.step("plain codex: the edit opens a review before anything lands"):
        before = agent.send(edit_prompt(path))
        request = agent.wait_permission("edit")
        agent.check(request.view == "review", f"the edit was asked as {request.view!r}, not in a review")
        agent.check(path.read_text() == ORIGINAL, "the file changed before the user answered")
    with agent.step("plain codex: rejecting leaves the file as it was, nothing is flagged"):
        agent.answer(request, "reject")
        agent.wait_turn_end(before)
        agent.check(path.read_text() == ORIGINAL, f"the rejected edit changed the file: {path.read_text()!r}")
        agent.check("not reviewed" not in agent.chat(), "a reviewed edit was flagged 'not reviewed'")
