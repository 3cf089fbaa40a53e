"""Sessions that last with the real agents: prompt, quit Neovim, start a new one on the same
state folder, ``:Ai resume last``; the earlier prompt shows once, the agent got ``session/resume``
or ``session/load`` with the same id, and the scripted model sees the first prompt in the
conversation of the second one."""

from __future__ import annotations

import json
from pathlib import Path

import pynvim
import pytest

from conftest import start_nvim
from helpers import buffer_text
from helpers.history import record_data

from .agents import AgentSetup
from .driver import CAPTURE_NOTIFY, AgentDriver
from .model_server import ModelServer

pytestmark = [pytest.mark.real_agent, pytest.mark.timeout(240)]

REOPENS = ["claude", "codex", "codex_legacy", "opencode"]
"""They offer session/resume and session/load. Gemini CLI (0.61) offers load only, and its load of
a session made by an earlier process sometimes answers -32603 "No previous sessions found for this
project" (when it had not written the session before it was stopped), and replays after it answers:
``test_gemini_loads_or_falls_back_to_the_local_history`` pins what the user sees either way."""
FIRST = "[scenario=text remember=plum-7] say something"


def _history_record(state_home: str, workspace: Path, agent: str) -> dict | None:
    for path in Path(state_home, "nvim", "acp_nvim", "history").rglob("*.json"):
        data = record_data(path)
        if data["cwd"] == str(workspace) and data["agent"] == agent and data["first_prompt"] == FIRST:
            return data
    return None


def _second_neovim(setup: AgentSetup, workspace: Path) -> pynvim.Nvim:
    nvim = start_nvim(workspace)
    nvim.command("set columns=160 lines=50")
    nvim.exec_lua(CAPTURE_NOTIFY)
    nvim.exec_lua(setup.setup_lua(), json.dumps(setup.env), json.dumps(setup.extra))
    return nvim


@pytest.mark.parametrize("agent", REOPENS, indirect=True)
def test_resume_last_in_a_new_neovim(agent: AgentDriver, nvim_env: dict[str, str], model_server: ModelServer,
                                     tmp_path: Path) -> None:
    with agent.step("sessions: a first prompt"):
        agent.wait_turn_end(agent.send(FIRST))
        record = agent.wait(lambda: _history_record(nvim_env["XDG_STATE_HOME"], agent.workspace, agent.name),
                            "the local history record")
    with agent.step("sessions: quit Neovim"):
        agent.nvim.command("silent! doautocmd VimLeavePre")
        agent.wait(lambda: not agent.processes(), "the agent to exit with Neovim", 20)
    second = AgentDriver(_second_neovim(agent.setup, agent.workspace), agent.setup, model_server, agent.workspace)
    try:
        with second.step("sessions: :Ai resume last in a new Neovim"):
            second.nvim.command("Ai resume last")
            second.wait(lambda: "new prompts continue it" in second.chat(), "the session to reopen", 90)
            second.wait(lambda: second.state().get("state") == "idle", "the session to be idle")
        with second.step("sessions: the earlier prompt shows exactly once"):
            text = second.chat()
            second.check(text.count(FIRST) == 1, f"the first prompt shows {text.count(FIRST)} times")
        with second.step("sessions: the agent got session/resume or session/load with the same id"):
            messages = second.wire_messages(tmp_path / "resume-log.jsonl")
            reopened = [m for m in messages if m.get("method") in ("session/resume", "session/load")]
            second.check(bool(reopened) and reopened[0]["params"]["sessionId"] == record["session_id"],
                         f"reopen requests {[(m['method'], m['params'].get('sessionId')) for m in reopened]}, "
                         f"expected {record['session_id']}")
            second.check(not [m for m in messages if m.get("method") == "session/new"], "a session/new was sent")
        with second.step("sessions: the second prompt reaches the model with the first in its conversation"):
            second.wait_turn_end(second.send("[scenario=recall] what did I ask you to remember"))
            second.check("Recall: plum-7 is in the conversation." in second.chat(),
                         "the model did not see the first prompt")
    finally:
        second.nvim.command("silent! doautocmd VimLeavePre")
        second.nvim.close()


@pytest.mark.parametrize("agent", ["gemini"], indirect=True)
def test_gemini_loads_or_falls_back_to_the_local_history(agent: AgentDriver, model_server: ModelServer) -> None:
    with agent.step("sessions: a first prompt, then quit Neovim"):
        agent.wait_turn_end(agent.send(FIRST))
        agent.nvim.command("silent! doautocmd VimLeavePre")
        agent.wait(lambda: not agent.processes(), "the agent to exit with Neovim", 20)
    second = AgentDriver(_second_neovim(agent.setup, agent.workspace), agent.setup, model_server, agent.workspace)
    try:
        with second.step("sessions: :Ai resume last shows the local history, read-only, and says why"):
            second.nvim.command("Ai resume last")
            second.wait(lambda: "read-only" in second.chat() or "new prompts continue it" in second.chat(),
                        "the session to reopen or be shown read-only", 90)
            text = second.chat()
            second.check(text.count(FIRST) == 1, f"the first prompt shows {text.count(FIRST)} times")
            if "read-only" in text:  # the load failed: say what failed; a prompt goes to a new session
                second.check("session/load" in text, "the read-only note does not say what failed")
                second.nvim.command("Ai send [scenario=text] more")
                second.chat_name = "acp://chat/gemini/2"
                second.wait_chat("Streamed reply: alpha beta gamma delta epsilon, all done.")
                return
        with second.step("sessions: loaded; its replay (sent after the answer) is not shown a second time"):
            second.wait_turn_end(second.send("[scenario=recall] what did I ask you to remember"))
            text = second.chat()
            second.check(text.count(FIRST) == 1, f"the first prompt shows {text.count(FIRST)} times")
            second.check("Recall: plum-7 is in the conversation." in text, "the model did not see the first prompt")
    finally:
        second.nvim.command("silent! doautocmd VimLeavePre")
        second.nvim.close()


FORKS = ["claude", "opencode"]
"""They offer session/fork, session/list and session/close."""
PICKER = """
_G.picked = {}
vim.ui.select = function(items, opts, on_choice)
  table.insert(_G.picked, { prompt = opts.prompt, items = items })
  on_choice(nil, nil)
end
"""


@pytest.mark.parametrize("agent", FORKS, indirect=True)
def test_fork_list_and_close(agent: AgentDriver, tmp_path: Path) -> None:
    with agent.step("sessions: a first prompt"):
        agent.wait_turn_end(agent.send(FIRST))
        first_id = next(m["result"]["sessionId"] for m in agent.wire_messages(tmp_path / "first.jsonl")
                        if m.get("_method") == "session/new" and "result" in m)
    with agent.step("sessions: :Ai fork opens the fork in a new chat"):
        agent.nvim.command("Ai fork")
        agent.chat_name = f"acp://chat/{agent.name}/2"
        agent.wait(lambda: f"forked {first_id} into" in agent.chat(), "the fork notice", 90)
        agent.wait(lambda: agent.state().get("state") == "idle", "the fork to be idle")
        forks = [m for m in agent.wire_messages(tmp_path / "fork.jsonl") if m.get("method") == "session/fork"]
        agent.check(bool(forks) and forks[0]["params"]["sessionId"] == first_id, f"session/fork requests {forks}")
        agent.check(agent.chat().count(FIRST) == 1, "the fork's chat does not show the earlier prompt once")
    with agent.step("sessions: the fork's model sees the earlier conversation"):
        agent.wait_turn_end(agent.send("[scenario=recall] what did I ask you to remember"))
        agent.check("Recall: plum-7 is in the conversation." in agent.chat(), "the fork lost the conversation")
    with agent.step("sessions: :Ai resume lists the agent's sessions (session/list) with the local ones"):
        agent.nvim.exec_lua(PICKER)
        agent.nvim.command("Ai resume")
        picker = agent.wait(lambda: agent.nvim.exec_lua("return _G.picked[1]"), "the resume picker", 90)
        agent.check(len(picker["items"]) >= 2, f"picker items {picker['items']}")
        listed = [m for m in agent.wire_messages(tmp_path / "list.jsonl") if m.get("method") == "session/list"]
        agent.check(bool(listed), "no session/list was sent")
    with agent.step("sessions: :Ai close sends session/close before stopping the agent"):
        log = f"acp://log/{agent.name}/2"
        agent.nvim.command(f"Ai log {agent.name}/2")
        agent.nvim.command(f"Ai open {agent.name}/2")
        agent.nvim.command("Ai close")
        agent.wait(lambda: "response session/close" in buffer_text(agent.nvim, log), "session/close answered")
