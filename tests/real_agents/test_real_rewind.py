"""Rewind with the real agents and the scripted model: three turns that change files (two edits and
a shell command the agent runs), :Ai rewind 2 with an unsaved edit kept, the next prompt reaching
the model without turns 2–3 (claude-agent-acp in a fork at the end of turn 1's answer; the others
in a new session that carries turn 1 as context), :Ai rewind undo byte for byte; an undo asked as
soon as the rewind's files are back (its conversation still reopening) that waits and runs, a rewind
again and the next prompt; and a past prompt edited and sent again."""

from __future__ import annotations

from pathlib import Path

import pytest

from .driver import AgentDriver

pytestmark = [pytest.mark.real_agent, pytest.mark.timeout(240)]

AGENTS = ["claude", "codex", "gemini", "opencode"]
FORKS_AT_A_MESSAGE = {"claude"}
"""session/fork with a message id (claude-agent-acp's ``_meta.jetbrains.air.fork``)."""
TYPED = "typed by the user, not saved"


def _files(agent: AgentDriver) -> dict[str, Path]:
    files = {name: agent.workspace / f"{name}.txt" for name in ("one", "two", "three")}
    for name, path in files.items():
        path.write_text(f"first line of {name}\nanswer_41\nlast line\n")
    return files


def _accepted(agent: AgentDriver, prompt: str) -> None:
    before = agent.send(prompt)
    agent.answer(agent.wait_permission(), "accept")
    agent.wait_turn_end(before, timeout=90)


def _three_turns(agent: AgentDriver, files: dict[str, Path]) -> None:
    with agent.step("rewind: three turns change files (edit, edit, a shell command)"):
        _accepted(agent, f"[scenario=edit file={files['one']} old=answer_41 new=answer_42] remember=alpha-1")
        _accepted(agent, f"[scenario=edit file={files['two']} old=answer_41 new=answer_42] remember=beta-2")
        _accepted(agent, f"[scenario=shell cmd=sed+-i+s/answer_41/answer_43/+{files['three']}] remember=gamma-3")
        agent.wait(lambda: "answer_43" in files["three"].read_text(), "the command to change three.txt")
        agent.check("answer_42" in files["two"].read_text(), "turn 2's edit did not land")


@pytest.mark.parametrize("agent", AGENTS, indirect=True)
def test_rewind_two_of_three_turns(agent: AgentDriver) -> None:
    files = _files(agent)
    _three_turns(agent, files)
    after_three = {name: path.read_bytes() for name, path in files.items()}
    one = files["one"].read_bytes()
    buf = agent.open_file(files["two"])
    agent.nvim.api.buf_set_lines(buf, -1, -1, False, [TYPED])
    with agent.step("rewind: :Ai rewind 2 sets files back to before turn 2, the unsaved edit kept"):
        agent.nvim.command("Ai rewind 2")
        agent.wait(lambda: "rewound to before turn 2" in agent.chat(), "the rewind's marker in the chat", 60)
        agent.wait(lambda: "the conversation continues" in agent.chat(), "the conversation to reopen", 90)
        agent.check(files["two"].read_text() == "first line of two\nanswer_41\nlast line\n", "two.txt not set back")
        agent.check(files["three"].read_text() == "first line of three\nanswer_41\nlast line\n",
                    "three.txt not set back (the command's change)")
        agent.check(files["one"].read_bytes() == one, "turn 1's file changed")
        agent.check(agent.buffer_lines(buf)[-1] == TYPED, f"the unsaved edit is gone: {agent.buffer_lines(buf)}")
        view = agent.wait(lambda: agent.nvim.exec_lua("return require('acp_nvim.threeway').ids()[1]"),
                          "the three-way view of the unsaved buffer")
        agent.nvim.exec_lua("require('acp_nvim.threeway').finish(..., 'mine')", view)
        agent.wait(lambda: agent.state().get("state") == "idle", "the session to be idle")
    with agent.step("rewind: the next prompt reaches the model without turns 2–3"):
        forked = agent.name in FORKS_AT_A_MESSAGE
        how = "continues in a fork" if forked else "continues in a new session"
        agent.check(how in agent.chat(), f"the chat does not say the conversation {how}")
        agent.wait_turn_end(agent.send("[scenario=recall_all] what is in the conversation"), timeout=90)
        agent.check("Recall-all: alpha-1 ." in agent.chat(), "the model does not see turn 1, or still sees turns 2–3")
        methods = [m.get("method") for m in agent.wire_messages(agent.workspace.parent / "rewind.jsonl")]
        agent.check(("session/fork" if forked else "session/new") in methods[2:], f"requests: {methods}")
    with agent.step("rewind: :Ai rewind undo brings turns 2–3's files back byte for byte"):
        agent.nvim.command("Ai rewind undo")
        agent.wait(lambda: "undid the rewind to before turn 2" in agent.chat(), "the undo's marker", 60)
        for name in ("two", "three"):
            agent.check(files[name].read_bytes() == after_three[name], f"{name}.txt is not as after turn 3")
        agent.check(agent.buffer_lines(buf)[-1] == TYPED, "the unsaved edit is gone after the undo")


@pytest.mark.parametrize("agent", ["claude", "gemini"], indirect=True)
def test_a_past_prompt_edited_and_sent_again(agent: AgentDriver) -> None:
    with agent.step("resubmit: two turns"):
        agent.wait_turn_end(agent.send("[scenario=text] remember=first-1"))
        agent.wait_turn_end(agent.send("[scenario=text] remember=second-2"))
    with agent.step("resubmit: e on turn 2's prompt, edited, sent with <C-s>"):
        agent.nvim.command("Ai open")
        agent.wait(lambda: agent.nvim.current.buffer.name == agent.chat_name, "the chat window")
        lines = agent.nvim.current.buffer[:]
        heading = max(i for i, line in enumerate(lines) if line == "## You")
        agent.nvim.api.win_set_cursor(0, [heading + 1, 0])
        agent.nvim.input("\\e")  # <LocalLeader>e: the default maplocalleader is a backslash
        agent.wait(lambda: agent.nvim.current.buffer[-1] == "[scenario=text] remember=second-2",
                   "turn 2's prompt in the prompt (its window takes the cursor)")
        agent.nvim.current.buffer[-1] = "[scenario=recall_all] remember=edited-3"
        before = agent.turns_ended()
        agent.nvim.input("<C-s>")
        agent.wait_turn_end(before, timeout=90)
    with agent.step("resubmit: the edited text reached the model, after turn 1 and without turn 2"):
        recalled = agent.chat().rsplit("Recall-all:", 1)[-1].split(" .", 1)[0].split()
        agent.check(sorted(recalled) == ["edited-3", "first-1"], f"the model's conversation holds {recalled}, not "
                    "turn 1 and the edited prompt")


@pytest.mark.parametrize("agent", ["claude", "gemini", "opencode"], indirect=True)
def test_an_undo_at_once_waits_for_the_rewind_then_a_rewind_again_and_the_next_prompt(agent: AgentDriver) -> None:
    target = agent.workspace / "abc.txt"
    target.write_text("first line\nanswer_41\nlast line\n")
    contents = [target.read_bytes()]
    with agent.step("rewind at once: a turn without files, then two accepted edits (A → B → C)"):
        agent.wait_turn_end(agent.send("[scenario=text] remember=zero-0"), timeout=90)
        _accepted(agent, f"[scenario=edit file={target} old=answer_41 new=answer_42] remember=alpha-1")
        contents.append(target.read_bytes())
        _accepted(agent, f"[scenario=edit file={target} old=answer_42 new=answer_43] remember=beta-2")
        contents.append(target.read_bytes())
        agent.check(len(set(contents)) == 3, f"the two edits did not land: {contents}")
    a, _, c = contents
    with agent.step("rewind at once: :Ai rewind 2, and :Ai rewind undo as soon as the file is A again"):
        agent.nvim.command("Ai rewind 2")
        agent.wait(lambda: target.read_bytes() == a, "the rewind to set the file back to A", 60)
        agent.nvim.command("Ai rewind undo")
        agent.wait(lambda: "undid the rewind to before turn 2" in agent.chat(), "the undo's marker", 90)
        agent.check(not any("already running" in n for n in agent.notes()), f"refused: {agent.notes()}")
        agent.check(target.read_bytes() == c, "the undo did not put C back")
        agent.check("the conversation is back on session" in agent.chat(), "the conversation is not back")
        agent.wait(lambda: agent.state().get("state") == "idle", "the session to be idle")
    with agent.step("rewind at once: :Ai rewind 2 again, then the next prompt without turns 2–3"):
        agent.nvim.command("Ai rewind 2")
        agent.wait(lambda: agent.chat().count("── rewound to before turn 2 ──") == 2, "the second rewind's marker", 60)
        agent.wait(lambda: agent.chat().count("the conversation continues") == 2, "the conversation to reopen", 90)
        agent.check(target.read_bytes() == a, "the second rewind did not set the file back to A")
        agent.wait(lambda: agent.state().get("state") == "idle", "the session to be idle")
        agent.wait_turn_end(agent.send("[scenario=recall_all] what is in the conversation"), timeout=90)
        agent.check("Recall-all: zero-0 ." in agent.chat(), "the model does not see turn 1, or still sees turns 2–3")
