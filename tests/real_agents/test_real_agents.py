"""End to end with the real agents (Claude Code, Codex and its archived adapter, Gemini CLI, opencode)
in headless Neovim.

Each agent is installed from ``tests/agents/package-lock.json``, started through its shipped
preset, and talks to the scripted model server (``model_server.py``) on 127.0.0.1. The
prompt's ``[scenario=...]`` marker tells the scripted model what to do.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .agents import SDK_EXAMPLE, sdk_example
from .driver import AgentDriver
from .model_server import ModelServer

pytestmark = [pytest.mark.real_agent, pytest.mark.timeout(150)]

ALL = ["claude", "codex", "codex_legacy", "gemini", "opencode"]
SENDS_USAGE = ["claude", "codex", "codex_legacy", "opencode"]  # Gemini CLI sends no usage_update
SENDS_PLAN = ["claude", "codex_legacy"]
"""Gemini and opencode show their todo list as a tool call; Codex 0.166 (under codex-acp 2.6) offers
its model no ``update_plan`` tool (goals instead), so it sends no plan to script."""
HAS_MODES = {"claude": "acceptEdits", "codex": "agent", "codex_legacy": "auto",
             "gemini": "autoEdit"}  # opencode: configOptions only
PRESET_MODE = {"claude": "default", "codex": "read-only", "codex_legacy": "read-only",
               "gemini": "default"}  # what the "ask" policy selects

ORIGINAL = "first line\nanswer_41\nlast line\n"
EDITED = "first line\nanswer_42\nlast line\n"
TYPED = "typed by the user, not saved"


def agents(names: list[str]) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("agent", names, indirect=True)


def edit_prompt(path: Path) -> str:
    return f"[scenario=edit file={path} old=answer_41 new=answer_42] change the answer"


def target(agent: AgentDriver) -> Path:
    path = agent.workspace / "target.txt"
    path.write_text(ORIGINAL)
    return path


@agents(ALL)
def test_streamed_text(agent: AgentDriver) -> None:
    with agent.step("streamed text: the reply appears in the chat"):
        before = agent.send("[scenario=text] say something")
        agent.wait_chat("Streamed reply: alpha beta gamma delta epsilon, all done.")
    with agent.step("streamed text: the turn ends"):
        stop = agent.wait_turn_end(before)
        agent.check(stop == "end_turn", f"stop reason {stop!r}, expected 'end_turn'")


@agents(SENDS_USAGE)
def test_usage_is_rendered(agent: AgentDriver) -> None:
    with agent.step("usage: a turn runs"):
        agent.wait_turn_end(agent.send("[scenario=text] say something"))
    with agent.step("usage: the statusline shows token usage"):
        agent.wait(lambda: "tokens" in agent.status(), "token usage in require('acp_nvim').status()")


@agents(ALL)
def test_read(agent: AgentDriver) -> None:
    path = agent.workspace / "notes.txt"
    path.write_text("the secret is secret-token-73\n")
    with agent.step("read: the agent reads the file and reports its content"):
        before = agent.send(f"[scenario=read file={path} expect=secret-token-73] what does it say")
        agent.wait(lambda: "read-ok secret-token-73" in agent.chat() or "read-missing" in agent.chat(),
                   "the scripted model's verdict on the read")
        agent.check("read-ok secret-token-73" in agent.chat(), "the read tool result lacked the file content")
    with agent.step("read: the turn ends without asking anything"):
        agent.wait_turn_end(before)
        agent.check(agent.no_permission_pending(), "a read asked for permission")


@agents(ALL)
def test_edit_accepted(agent: AgentDriver) -> None:
    path = target(agent)
    buf = agent.open_file(path)
    with agent.step("edit/accept: a permission request arrives"):
        before = agent.send(edit_prompt(path))
        request = agent.wait_permission("edit")
        agent.check(path.read_text() == ORIGINAL, "the file changed before the user answered")
    with agent.step("edit/accept: answering accept lets the edit land on disk"):
        agent.answer(request, "accept")
        agent.wait_turn_end(before)
        agent.wait(lambda: path.read_text() == EDITED, f"{path.name} to hold the accepted text")
    with agent.step("edit/accept: the open buffer shows the accepted text"):
        agent.wait(lambda: agent.buffer_lines(buf) == EDITED.splitlines(), "the buffer to be updated")


@agents(ALL)
def test_edit_rejected(agent: AgentDriver) -> None:
    path = target(agent)
    buf = agent.open_file(path)
    with agent.step("edit/reject: a permission request arrives"):
        before = agent.send(edit_prompt(path))
        request = agent.wait_permission("edit")
    with agent.step("edit/reject: answering reject leaves the file unchanged"):
        agent.answer(request, "reject")
        agent.wait_turn_end(before)
        agent.check(path.read_text() == ORIGINAL, f"the rejected edit changed the file: {path.read_text()!r}")
        agent.check(agent.buffer_lines(buf) == ORIGINAL.splitlines(), "the rejected edit changed the buffer")


@agents(ALL)
@pytest.mark.parametrize("verdict", ["accept", "reject"])
def test_edit_of_unsaved_buffer_loses_nothing(agent: AgentDriver, verdict: str) -> None:
    path = target(agent)
    buf = agent.open_file(path)
    agent.nvim.api.buf_set_lines(buf, -1, -1, False, [TYPED])
    with agent.step(f"unsaved buffer/{verdict}: a permission request arrives"):
        before = agent.send(edit_prompt(path))
        request = agent.wait_permission("edit")
    with agent.step(f"unsaved buffer/{verdict}: after the answer, the typed text is still there"):
        agent.answer(request, verdict)
        agent.wait_turn_end(before)
        agent.check(TYPED in agent.buffer_lines(buf), f"the user's unsaved line is gone: {agent.buffer_lines(buf)}")
        if verdict == "reject":
            agent.check(path.read_text() == ORIGINAL, f"the rejected edit changed the file: {path.read_text()!r}")


@agents(ALL)
def test_new_file_accepted(agent: AgentDriver) -> None:
    path = agent.workspace / "created.txt"
    with agent.step("new file: a permission request arrives"):
        before = agent.send(f"[scenario=new_file file={path} text=brand+new+content] create it")
        request = agent.wait_permission("edit")
        agent.check(not path.exists(), "the file exists before the user answered")
    with agent.step("new file: answering accept creates the file"):
        agent.answer(request, "accept")
        agent.wait_turn_end(before)
        agent.wait(lambda: path.exists() and path.read_text() == "brand new content\n", f"{path} to be created")


@agents(ALL)
def test_shell_command_with_permission(agent: AgentDriver) -> None:
    proof = agent.workspace / "shell_proof.txt"
    with agent.step("shell: a permission request for the command arrives"):
        before = agent.send("[scenario=shell cmd=touch+shell_proof.txt] run it")
        request = agent.wait_permission()
        agent.check(request.kind == "execute", f"permission kind {request.kind!r}, expected 'execute'")
        agent.check(not proof.exists(), "the command ran before the user answered")
    with agent.step("shell: answering accept runs the command"):
        agent.answer(request, "accept")
        agent.wait_turn_end(before)
        agent.wait(proof.exists, f"{proof.name} to be created by the command")


@agents(ALL)
def test_cancel_mid_stream(agent: AgentDriver) -> None:
    with agent.step("cancel mid-stream: the reply starts streaming"):
        before = agent.send("[scenario=slow] count slowly")
        agent.wait_chat("tick3")
    with agent.step("cancel mid-stream: :Ai cancel ends the turn cancelled"):
        agent.cancel()
        stop = agent.wait_turn_end(before, timeout=20)
        agent.check(stop == "cancelled", f"stop reason {stop!r}, expected 'cancelled'")
        agent.check("tick599" not in agent.chat(), "the stream ran to its end despite the cancel")


@agents(ALL)
def test_cancel_while_permission_pending(agent: AgentDriver) -> None:
    path = target(agent)
    with agent.step("cancel with a pending request: the request arrives"):
        before = agent.send(edit_prompt(path))
        agent.wait_permission("edit")
    with agent.step("cancel with a pending request: the request is answered and the turn ends cancelled"):
        agent.cancel()
        stop = agent.wait_turn_end(before, timeout=20)
        agent.check(stop == "cancelled", f"stop reason {stop!r}, expected 'cancelled'")
        agent.check(agent.no_permission_pending(), "the permission prompt is still pending after the cancel")
        agent.check(path.read_text() == ORIGINAL, "the file changed although the request was cancelled")
    with agent.step("cancel with a pending request: the agent got the outcome 'cancelled'"):
        sent = [m for m in agent.wire_messages(agent.workspace.parent / "wire.jsonl") if m["_direction"] == "out"]
        answers = [m.get("result", {}).get("outcome", {}).get("outcome")
                   for m in sent if m["_method"] == "session/request_permission"]
        agent.check(answers == ["cancelled"], f"answers sent to the permission request: {answers}")
        order = [m["_method"] for m in sent if m["_method"] in ("session/cancel", "session/request_permission")]
        agent.check(order == ["session/cancel", "session/request_permission"],
                    f"session/cancel must go out before the answer (read as a refusal otherwise): {order}")


@agents(ALL)
@pytest.mark.parametrize("how", ["Ai close", "doautocmd VimLeavePre"])
def test_no_agent_process_outlives_its_session(agent: AgentDriver, how: str) -> None:
    with agent.step("processes: a turn runs"):
        agent.wait_turn_end(agent.send("[scenario=text] say something"))
        agent.check(bool(agent.processes()), "found no process of the agent")
    with agent.step(f"processes: after :{how}, none of the agent's processes is left"):
        agent.nvim.command(how)
        agent.wait(lambda: not agent.processes(), "every agent process to exit", timeout=15)


@agents(SENDS_PLAN)
def test_plan_is_rendered(agent: AgentDriver) -> None:
    with agent.step("plan: the plan entries appear in the chat"):
        before = agent.send("[scenario=plan] make a plan")
        agent.wait_chat("[ ] Write the scripted plan")
        agent.wait_chat("[ ] Check it")
    with agent.step("plan: the turn ends"):
        agent.wait_turn_end(before)


@agents(list(HAS_MODES))
def test_switch_mode(agent: AgentDriver) -> None:
    wanted = HAS_MODES[agent.name]
    with agent.step("mode: the preset selected the mode that asks"):
        agent.check(agent.state().get("mode") == PRESET_MODE[agent.name],
                    f"mode {agent.state().get('mode')!r}, expected {PRESET_MODE[agent.name]!r}")
    with agent.step(f"mode: :Ai mode {wanted} switches"):
        agent.nvim.command(f"Ai mode {wanted}")
        agent.wait(lambda: agent.state().get("mode") == wanted, f"the session mode to become {wanted!r}")
    path = target(agent)
    with agent.step(f"mode: in {wanted}, the agent edits without asking; acp.nvim reviews the change"):
        before = agent.send(edit_prompt(path))
        # under policy ask, a write nobody was shown opens acp.nvim's own review (the write gate)
        request = agent.wait_permission("edit")
        agent.check(request.view == "review", f"the unasked edit was shown as {request.view!r}, not a review")
        agent.answer(request, "accept")
        agent.wait_turn_end(before)
        agent.wait(lambda: path.read_text() == EDITED, "the accepted edit to stay on disk")


def test_sdk_example_agent(request: pytest.FixtureRequest, model_server: ModelServer) -> None:
    """The ACP SDK's own example agent: streamed text, a tool call, a permission without a diff."""
    if not SDK_EXAMPLE.exists():
        pytest.skip(f"the ACP SDK example agent is not installed ({SDK_EXAMPLE}): run `make agents`")
    agent = AgentDriver(request.getfixturevalue("nvim"), sdk_example(), model_server,
                        request.getfixturevalue("workspace"))
    agent.start()
    with agent.step("sdk example: streamed text and a permission request"):
        before = agent.send("hello")
        agent.wait_chat("I'll help you with that.")
        request_ = agent.wait_permission("edit")
    with agent.step("sdk example: accepting ends the turn normally"):
        agent.answer(request_, "accept")
        stop = agent.wait_turn_end(before)
        agent.check(stop == "end_turn", f"stop reason {stop!r}, expected 'end_turn'")
