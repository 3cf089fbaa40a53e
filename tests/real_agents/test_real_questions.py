"""claude-agent-acp asks the user (its AskUserQuestion tool as a form elicitation) and the answer
reaches the model as the tool result; a declined form declines. The form is filled by keys."""

from __future__ import annotations

import pytest

from .driver import AgentDriver
from .test_real_agents import agents

pytestmark = [pytest.mark.real_agent, pytest.mark.timeout(150)]

PROMPT = "[scenario=ask] ask me which color"


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
