"""Every :Ai subcommand in a real Neovim against the demo agent, asserting what the user sees:
the chat, a message, a picker, a window. Most subcommands also have a feature test elsewhere;
``test_every_subcommand_is_exercised`` keeps it that way for new ones."""

from __future__ import annotations

import re

import pytest

from acp_nvim.nvim.commands.subcommands import SUBCOMMANDS
from conftest import ROOT
from helpers import NOTIFY, SELECT, buffer_text, notes, status, wait_for
from helpers import session_state as state
from helpers import wait_idle as start

pytestmark = pytest.mark.timeout(90)

CHAT = "acp://chat/demo/1"
CAPTURE = NOTIFY + SELECT


@pytest.fixture
def ui(nvim):
    """Messages and pickers captured (pickers answer with the next pattern of ``_G.choose``)."""
    nvim.exec_lua(CAPTURE)
    return nvim


def wait_note(nvim, text: str) -> str:
    return wait_for(lambda: next((n for n in notes(nvim) if text in n), None), timeout=20, what=repr(text))


def choose(nvim, *patterns: str) -> None:
    nvim.exec_lua("_G.choose = {...}", *patterns)


def last_picker(nvim) -> dict:
    return wait_for(lambda: nvim.exec_lua("return _G.picked[#_G.picked]"), timeout=20, what="a picker")


def chat(nvim, name: str = CHAT) -> str:
    return buffer_text(nvim, name)


def test_config_picks_and_sets_select_and_boolean_options(ui):
    ui.command("Ai")
    start(ui)
    choose(ui, "Model", "large")
    ui.command("Ai config")
    wait_for(lambda: "Model: Demo large" in chat(ui), timeout=20, what="the model notice")
    pickers = ui.exec_lua("return _G.picked")
    assert pickers[0] == {"prompt": "demo/1: config option", "items": ["Model: Demo small", "Verbose replies: off"]}
    assert pickers[1] == {"prompt": "demo/1: Model", "items": ["Demo small  ← current", "Demo large"]}
    assert state(ui)["model"] == "Demo large"

    ui.command("Ai config verbose on")
    wait_for(lambda: "Verbose replies: on" in chat(ui), timeout=20, what="the boolean option set")
    choose(ui, "Verbose", "off")
    ui.command("Ai config")
    wait_for(lambda: "Verbose replies: off" in chat(ui), timeout=20, what="the boolean option picked")
    assert last_picker(ui) == {"prompt": "demo/1: Verbose replies", "items": ["on", "off"]}
    ui.command("Ai config model demo-small")
    wait_for(lambda: state(ui)["model"] == "Demo small", timeout=20, what="the model set directly")


@pytest.mark.parametrize(("command", "message"), [
    ("Ai config nosuch", "demo/1: no config option 'nosuch' (options: model, verbose)"),
    ("Ai config verbose maybe", "Verbose replies: expected on or off"),
    ("Ai config model huge", "Model: no value 'huge' (values: demo-large, demo-small)"),
    ("Ai mode nosuch", "demo/1: no mode 'nosuch' (modes: ask, code)"),
    ("Ai policy yolo", "unknown policy 'yolo': expected one of ask, auto-edit, trust"),
    ("Ai queue bogus", "usage: :Ai queue [show|edit|clear]"),
    ("Ai open demo/9", "session demo/9 is closed; start a new one with :Ai new"),
])
def test_bad_arguments_are_clear_messages(ui, command, message):
    ui.command("Ai")
    start(ui)
    ui.command(command)
    assert "Traceback" not in wait_note(ui, message)


@pytest.mark.parametrize("sub", ["cancel", "close", "restart", "mode", "model", "config", "queue",
                                 "locations", "policy", "changes", "log"])
def test_subcommands_that_need_a_session_say_so(ui, sub):
    ui.command(f"Ai {sub}")
    wait_note(ui, "no session yet: start one with :Ai or :Ai new [agent]")
    assert status(ui) == "", "no session was started behind the user's back"


def test_policy_shows_and_sets_the_sessions_policy(ui):
    ui.command("Ai")
    start(ui)
    ui.command("Ai policy")
    wait_note(ui, "[acp.nvim] demo/1: permission policy ask (one of ask, auto-edit, trust)")
    ui.command("Ai policy auto-edit")
    wait_note(ui, "[acp.nvim] demo/1: permission policy auto-edit")
    assert "permission policy: auto-edit" in chat(ui)
    wait_for(lambda: state(ui).get("policy") == "auto-edit", timeout=10, what="the policy in Lua")


def test_open_switches_to_a_named_session(ui):
    ui.command("Ai new")
    ui.command("Ai new")
    start(ui, "demo/1")
    start(ui, "demo/2")
    assert status(ui).startswith("demo/2")
    ui.command("wincmd p")
    ui.command("Ai open demo/1")
    wait_for(lambda: status(ui).startswith("demo/1"), timeout=10, what="demo/1 to be current")
    # the state and the cursor come in separate calls from the host: a loaded machine shows one first
    wait_for(lambda: ui.api.buf_get_name(0) == CHAT, timeout=10, what="the cursor in demo/1's chat")


def test_close_stops_the_session_and_the_next_prompt_starts_another(ui):
    ui.command("Ai")
    start(ui)
    ui.command("Ai close")
    wait_for(lambda: status(ui) == "", timeout=10, what="the statusline to drop the session")
    assert state(ui) == {}
    ui.command("Ai cancel")
    wait_note(ui, "no session yet")
    ui.command("Ai send hello again")
    wait_for(lambda: "You said: hello again" in chat(ui, "acp://chat/demo/2"), timeout=30, what="a new session")


def test_queue_show_lists_waiting_prompts(ui):
    ui.command("Ai")
    start(ui)
    ui.command("Ai queue")
    wait_note(ui, "[acp.nvim] demo/1: the queue is empty")
    ui.command("Ai send slow 40")
    wait_for(lambda: "tick 1" in chat(ui), timeout=20, what="the slow turn")
    ui.command("Ai send echo waiting one")
    ui.command("Ai send echo waiting two")
    ui.command("Ai queue show")
    wait_note(ui, "[acp.nvim] demo/1: 1. echo waiting one\n2. echo waiting two")
    ui.command("Ai cancel")


def test_cancel_without_a_running_turn_says_so(ui):
    ui.command("Ai")
    start(ui)
    ui.command("Ai cancel")
    wait_note(ui, "[acp.nvim] demo/1: no turn is running")


def test_every_subcommand_is_exercised():
    """Each registered subcommand is run (``Ai <name>``) by some test in real Neovim."""
    sources = "\n".join(p.read_text() for folder in ("nvim", "e2e") for p in (ROOT / "tests" / folder).glob("*.py"))
    missing = [sub.name for sub in SUBCOMMANDS if not re.search(rf"[\"'(]Ai {re.escape(sub.name)}\b", sources)]
    assert missing == [], f"no real-Neovim test runs :Ai {missing}"
