"""Steering and typed failures with the real claude-agent-acp (0.101.0) and the scripted model.

Steering: a prompt sent while a turn streams is steered in (``_session/steering``); Claude Code
pre-empts the generation and the model's next request of the same turn carries the steered text.
Typed failures: the model server answers Anthropic's 429 once (``limit_once``); with retries off
the prompt fails as a usage limit, the chat offers ``R``, and the retry succeeds.
"""

from __future__ import annotations

import pytest

from helpers import virt_lines

from .driver import AgentDriver

pytestmark = [pytest.mark.real_agent, pytest.mark.timeout(180)]


def claude() -> pytest.MarkDecorator:
    return pytest.mark.parametrize("agent", ["claude"], indirect=True)


def offer_line(agent: AgentDriver) -> str:
    return next((line for line in virt_lines(agent.nvim, agent.chat_name) if "⚠ prompt failed" in line), "")


@claude()
def test_a_prompt_steered_into_a_running_claude_turn_reaches_the_model_in_that_turn(agent: AgentDriver) -> None:
    with agent.step("steering: the agent advertises it"):
        agent.check(agent.nvim.exec_lua("return require('acp_nvim.state').current().steer") == "steer",
                    "the next prompt would not be steered")
    with agent.step("steering: a slow turn streams"):
        before = agent.send("[scenario=slow chunks=400 until=steered] count slowly")
        agent.wait_chat("tick5 ")
    with agent.step("steering: a prompt sent now is steered into the turn"):
        agent.nvim.command("Ai send [scenario=steered word=steer-word-91] and say this too")
        agent.wait_chat("## You · steered into the running turn")
    with agent.step("steering: the model's next request of the turn carries the steered text"):
        chat = agent.wait_chat("steered-reply steer-word-91 reached the model.", timeout=60)
        # Counted in the chat up to the reply, not when the check runs: the turn may end right after it.
        ended_before_reply = chat[:chat.index("steered-reply steer-word-91")].count("── turn ended:")
        agent.check(ended_before_reply == before, "the steered reply came after the turn ended")
        agent.check(any(s.scenario == "steered" for s in agent.server.seen), "no model request held the steered text")
    with agent.step("steering: one turn ends, nothing is left in the queue"):
        agent.wait_turn_end(before, timeout=90)
        agent.check(agent.state().get("queued") == 0, "the steered prompt stayed in the queue")
        agent.check(agent.turns_ended() == before + 1, "the steered prompt ran as a turn of its own")


@claude()
@pytest.mark.parametrize("agent_env", [{"CLAUDE_CODE_MAX_RETRIES": "0"}])
def test_a_usage_limit_offers_retry_and_the_retry_succeeds(agent: AgentDriver) -> None:
    with agent.step("limit: the model answers 429 and the prompt fails as a usage limit"):
        before = agent.send("[scenario=limit_once id=claude-1] say something")
        agent.wait_chat("prompt failed · usage limit", timeout=90)
        agent.wait_turn_end(before)
    with agent.step("limit: the chat offers <LocalLeader>r, the prompt is kept"):
        line = agent.wait(lambda: offer_line(agent), "the offer above the prompt")
        agent.check("<LocalLeader>r retries" in line, f"no retry in the offer: {line!r}")
    with agent.step("limit: <LocalLeader>r retries and the retry reaches the model"):
        agent.nvim.command(f"call win_gotoid(bufwinid('{agent.chat_name}'))")
        agent.nvim.api.win_set_cursor(0, [1, 0])
        agent.nvim.input("\\r")  # <LocalLeader>r: the default maplocalleader is a backslash
        agent.wait_chat("limit-lifted-reply: the retried prompt reached the model.", timeout=90)
        agent.wait(lambda: not offer_line(agent), "the offer to go")
