"""Steering and typed failures end to end: the demo agent (steering on, off, or answering
promptRequired; a usage limit that lifts), the real host, real Neovim, the chat's keys."""

from __future__ import annotations

import json
import sys

import pytest

from conftest import ROOT
from helpers import NOTIFY, buffer_text, notes, virt_lines, wait_for

pytestmark = pytest.mark.timeout(90)

CHAT = "acp://chat/demo/1"
SETUP = """
local python, env_json, root, extra = ...
local env = vim.tbl_extend('force', { PYTHONPATH = root }, vim.json.decode(env_json))
require('acp_nvim').setup(vim.tbl_deep_extend('force', { agents = { demo = { command = python,
  args = { '-m', 'acp_nvim.demo_agent' }, env = env } } }, vim.json.decode(extra)))
""" + NOTIFY


def start(nvim, env: dict[str, str], extra: dict[str, object] | None = None) -> None:
    nvim.exec_lua(SETUP, sys.executable, json.dumps(env), str(ROOT / "python"), json.dumps(extra or {}))
    nvim.command("Ai")
    wait_for(lambda: state(nvim).get("state") == "idle", timeout=45, what="the session to start")


def state(nvim) -> dict:
    return nvim.exec_lua("return require('acp_nvim.state').sessions['demo/1'] or vim.empty_dict()")


def chat(nvim) -> str:
    return buffer_text(nvim, CHAT)


def turns(nvim) -> int:
    return chat(nvim).count("── turn ended")



def running(nvim) -> None:
    nvim.command("Ai send slow 60")
    wait_for(lambda: "tick 3" in chat(nvim), timeout=20, what="the slow turn to stream")


def press_in_chat(nvim, keys: str) -> None:
    """Normal-mode keys in the chat window, on its first line (outside the prompt area)."""
    nvim.command(f"call win_gotoid(bufwinid('{CHAT}'))")
    nvim.command("stopinsert")
    nvim.api.win_set_cursor(0, [1, 0])
    nvim.input(keys)


def test_a_prompt_sent_during_a_turn_is_steered_into_it(nvim):
    start(nvim, {"ACP_DEMO_CAPABILITIES": "steering"})
    running(nvim)
    nvim.command("Ai send echo steer me")
    shown = wait_for(lambda: "steered in: echo steer me" in chat(nvim) and chat(nvim), timeout=20,
                     what="the steered text in the running turn")
    assert shown.count("── turn ended") == 0, "the steered text came after the turn"
    wait_for(lambda: "## You · steered into the running turn" in chat(nvim), timeout=10, what="the steered mark")
    wait_for(lambda: turns(nvim) == 1 and state(nvim).get("state") == "idle", timeout=30, what="the turn's end")
    assert state(nvim).get("queued") == 0
    assert turns(nvim) == 1, "the steered prompt was also sent as a prompt of its own"


def test_prompt_required_falls_back_to_the_queue_visibly(nvim):
    start(nvim, {"ACP_DEMO_CAPABILITIES": "steering", "ACP_DEMO_STEER": "promptRequired"})
    running(nvim)
    nvim.command("Ai send echo after the turn")
    wait_for(lambda: "not steered (noRunningTurn): kept in the queue" in chat(nvim), timeout=20,
             what="the fallback notice")
    nvim.command("Ai queue")
    wait_for(lambda: any("[not steered: noRunningTurn] echo after the turn" in n for n in notes(nvim)),
             timeout=10, what=":Ai queue to show the entry was not steered")
    wait_for(lambda: turns(nvim) == 2, timeout=40, what="the queued prompt to run as its own turn")
    assert "echo after the turn" in chat(nvim).split("── turn ended")[1]


def test_an_agent_without_steering_queues(nvim):
    start(nvim, {})
    running(nvim)
    nvim.command("Ai send echo queued plainly")
    wait_for(lambda: "  ⏳ queued 1: echo queued plainly" in virt_lines(nvim), timeout=10, what="the queue")
    wait_for(lambda: turns(nvim) == 2, timeout=40, what="both turns")
    assert "steer" not in chat(nvim)


def test_steer_false_queues_and_the_key_switches_the_next_prompt(nvim):
    start(nvim, {"ACP_DEMO_CAPABILITIES": "steering"}, {"chat": {"steer": False}})
    running(nvim)
    nvim.command("Ai send echo queued by config")
    wait_for(lambda: "  ⏳ queued 1: echo queued by config" in virt_lines(nvim), timeout=10, what="the queue")
    press_in_chat(nvim, "<M-s>")
    wait_for(lambda: any("the next prompt during a turn is steered into the running turn (<M-s> switches)" in line
                         for line in virt_lines(nvim)), timeout=10, what="the switched way, shown")
    nvim.command("Ai send echo steered by the key")
    wait_for(lambda: "steered in: echo steered by the key" in chat(nvim), timeout=20, what="the steered prompt")
    wait_for(lambda: not any("next prompt during a turn" in line for line in virt_lines(nvim)), timeout=10,
             what="the switch to last one prompt")
    wait_for(lambda: turns(nvim) == 2, timeout=40, what="the slow turn and the queued one")
    assert "steered in: echo queued by config" not in chat(nvim)


def test_a_usage_limit_offers_retry_and_the_retry_succeeds(nvim):
    start(nvim, {})
    nvim.command("Ai send limit 600")
    wait_for(lambda: "prompt failed · usage limit" in chat(nvim), timeout=20, what="the typed failure")
    offer = wait_for(lambda: next((line for line in virt_lines(nvim) if "⚠ prompt failed · usage limit" in line),
                                  None), timeout=10, what="the offer above the prompt")
    assert "<LocalLeader>r retries" in offer and "<LocalLeader>w retries when the limit resets" in offer
    assert "resets at" in offer
    press_in_chat(nvim, "\\r")  # <LocalLeader>r: the default maplocalleader is a backslash
    wait_for(lambda: "limit lifted: the retried prompt went through" in chat(nvim), timeout=20,
             what="the retried prompt to succeed")
    wait_for(lambda: not any("⚠ prompt failed" in line for line in virt_lines(nvim)), timeout=10,
             what="the offer to go")


def test_w_retries_when_the_limit_resets(nvim):
    start(nvim, {})
    nvim.command("Ai send limit 1")
    wait_for(lambda: any("<LocalLeader>w retries when the limit resets" in line for line in virt_lines(nvim)),
             timeout=20, what="the offer with <LocalLeader>w")
    press_in_chat(nvim, "\\w")
    wait_for(lambda: "limit lifted: the retried prompt went through" in chat(nvim), timeout=20,
             what="the automatic retry at the reset")


def test_the_failure_keys_are_plain_keys_when_nothing_failed(nvim):
    """A failure key the user set to a Vim key (W here; no default is one) is Vim's when nothing failed."""
    start(nvim, {}, {"keymaps": {"wait": "W"}})
    nvim.command("Ai send echo hello")
    wait_for(lambda: turns(nvim) == 1, timeout=20, what="a turn")
    press_in_chat(nvim, "G")
    press_in_chat(nvim, "W")  # a word motion, not a retry
    wait_for(lambda: nvim.api.win_get_cursor(0)[1] > 0 or nvim.api.win_get_cursor(0)[0] > 1, timeout=5,
             what="W to move the cursor")
    assert "prompt failed" not in chat(nvim)
