"""claude-agent-acp asks the user (its AskUserQuestion tool as a form elicitation) and the answer
reaches the model as the tool result; a declined form declines. The form is filled by keys."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from .driver import AgentDriver
from .test_real_agents import agents

pytestmark = [pytest.mark.real_agent, pytest.mark.timeout(150)]

PROMPT = "[scenario=ask] ask me which color"
PROBE = {"mcp_servers": {"probe": {"command": sys.executable,
                                   "args": [str(Path(__file__).with_name("probe_elicit_mcp.py"))]}}}


def open_question(agent: AgentDriver) -> list[str]:
    return agent.nvim.exec_lua("""
        local q = require('acp_nvim.question')
        local id = q.order[1]
        if not id then return {} end
        return vim.api.nvim_buf_get_lines(q.open_questions[id].buf, 0, -1, false)""")


def go_to_form(agent: AgentDriver) -> list[str]:
    lines = agent.wait(lambda: open_question(agent), "the agent's question")
    agent.nvim.command("Ai questions")
    agent.wait(lambda: agent.nvim.api.buf_get_name(0).startswith("acp://question/claude/"), "the form entered")
    agent.wait(lambda: agent.nvim.exec_lua("return require('acp_nvim.question').armed()"), "the form's keys")
    return lines


@agents(["claude"])
def test_an_ask_user_question_form_is_answered_by_keys_and_reaches_the_model(agent: AgentDriver) -> None:
    with agent.step("the form shows the question, its choices and the tool call"):
        before = agent.send(PROMPT)
        lines = go_to_form(agent)
        agent.check("  Which color should the button be?" in lines, f"the form: {lines}")
        agent.check("Color: " in lines and "Other: " in lines, f"one line per field: {lines}")
        agent.check(any(line.startswith("  for the tool call") for line in lines), f"the scope: {lines}")
    with agent.step("typed into the Color line, <C-s> submits; the model gets the pick as the tool result"):
        row = lines.index("Color: ") + 1
        agent.nvim.api.win_set_cursor(0, [row, 0])
        agent.nvim.input("ABlue<Esc>")
        agent.wait(lambda: "Color: Blue" in open_question(agent), "the typed answer")
        agent.wait(lambda: agent.nvim.exec_lua("return require('acp_nvim.question').armed()"), "the form's keys")
        agent.nvim.input("<C-s>")
        agent.wait_chat("ask-picked Blue")
        agent.check(not open_question(agent), "the form closed")
        results = [seen.result for seen in agent.server.seen if seen.scenario == "ask" and seen.step == 1]
        agent.check(any('"Blue"' in result for result in results), f"the tool results: {results}")
        agent.wait_turn_end(before)


@agents(["claude"])
def test_a_declined_form_declines(agent: AgentDriver) -> None:
    with agent.step("q declines; the model hears no answer"):
        before = agent.send(PROMPT)
        go_to_form(agent)
        agent.nvim.input("q")
        agent.wait_chat("ask-unanswered")
        agent.check(not open_question(agent), "the form closed")
        agent.check("you declined the agent's question" in agent.chat(), "the chat says it")
        agent.wait_turn_end(before)


@agents(["claude"])
@pytest.mark.parametrize("setup_extra", [PROBE])
def test_an_mcp_servers_elicitation_reaches_the_user(agent: AgentDriver) -> None:
    with agent.step("the probe's ctx.elicit comes up as a form; the answer goes back to the server"):
        before = agent.send("[scenario=mcp_ask] ask through the probe")

        def asked() -> list[str] | None:
            for request in agent.pending_requests():  # the MCP tool call itself may need a yes
                agent.answer(request, "accept")
            return open_question(agent) or None
        lines = agent.wait(asked, "the probe's question")
        agent.check("  The probe would like your nickname" in lines and "Nickname: " in lines, f"the form: {lines}")
        go_to_form(agent)
        agent.nvim.api.win_set_cursor(0, [lines.index("Nickname: ") + 1, 0])
        agent.nvim.input("Ax<Esc>")
        agent.wait(lambda: "Nickname: x" in open_question(agent), "the typed answer")
        agent.wait(lambda: agent.nvim.exec_lua("return require('acp_nvim.question').armed()"), "the form's keys")
        agent.nvim.input("<C-s>")
        agent.wait(lambda: agent.nvim.exec_lua("""
            local q = require('acp_nvim.question'); local e = q.open_questions[q.order[1]]
            if not e then return false end
            local ns = vim.api.nvim_get_namespaces()['acp_nvim_question_problems']
            return #vim.api.nvim_buf_get_extmarks(e.buf, ns, 0, -1, {}) == 1"""), "too short: marked on its line")
        agent.nvim.input("ACat<Esc>")
        agent.wait(lambda: "Nickname: xCat" in open_question(agent), "the fixed answer")
        agent.nvim.input("<C-s>")
        agent.wait_chat("mcp-answer accept xCat")
        agent.wait_turn_end(before)
