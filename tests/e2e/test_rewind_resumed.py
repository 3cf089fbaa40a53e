"""Checkpoints of a session reopened with :Ai resume, in real Neovim with the demo agent keeping its
sessions: turns that change files, Neovim quits, a new Neovim resumes the session, :Ai checkpoints
lists the earlier turns, a rewind to one of them sets the files back, and the turns sent after the
resume are numbered after them (and found by the next Neovim too); the same after session/load
alone (no local history), after a close and resume in the same Neovim, and for a session that ran
in a git worktree, resumed from the main folder."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pynvim
import pytest

from conftest import ROOT, start_nvim
from helpers import NOTIFY, SELECT, allow, buffer_text, chat, notes, wait_for, wait_idle

pytestmark = pytest.mark.timeout(240)

KEY = "saved/1"
LIST = f"acp://checkpoints/{KEY}"
ORIGINAL = "".join(f"line {n}\n" for n in range(1, 21))
SETUP = """
local dir, pythonpath, history = ...
require('acp_nvim').setup({ default_agent = 'saved', permissions = { policy = 'ask' }, history = history,
  agents = { saved = {
  command = vim.g.python3_host_prog, args = { '-m', 'acp_nvim.demo_agent' },
  env = { ACP_DEMO_SESSIONS_DIR = dir, PYTHONPATH = pythonpath } } } })
"""


class Editors:
    """Neovims started one after the other on the same state folder and cwd."""

    def __init__(self, workspace: Path, agent_dir: Path) -> None:
        self.workspace, self.agent_dir = workspace, agent_dir
        self.running: list[pynvim.Nvim] = []

    def start(self, history: bool = True) -> pynvim.Nvim:
        nvim = start_nvim(self.workspace)
        self.running.append(nvim)
        nvim.command("set columns=160 lines=50")
        nvim.exec_lua(NOTIFY + SELECT)
        nvim.exec_lua(SETUP, str(self.agent_dir), str(ROOT / "python"), history)
        return nvim

    def quit(self, nvim: pynvim.Nvim) -> None:
        nvim.command("silent! doautocmd VimLeavePre")
        nvim.close()
        self.running.remove(nvim)


@pytest.fixture
def editors(nvim_env: dict[str, str], tmp_path: Path) -> Iterator[Editors]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    made = Editors(workspace, tmp_path / "agent-sessions")
    try:
        yield made
    finally:
        for nvim in list(made.running):
            made.quit(nvim)


def turn(nvim: pynvim.Nvim, prompt: str, *, asks: bool = True) -> None:
    done = chat(nvim, KEY).count("── turn ended")
    nvim.command(f"Ai send {prompt}")
    if asks:
        allow(nvim)
    wait_for(lambda: chat(nvim, KEY).count("── turn ended") > done, timeout=30, what=f"the end of {prompt!r}",
             nvim=nvim)
    wait_idle(nvim, KEY)


def resume(nvim: pynvim.Nvim) -> None:
    nvim.command("Ai resume last")
    wait_for(lambda: "new prompts continue it" in chat(nvim, KEY), timeout=30, what="the resumed chat", nvim=nvim)
    wait_idle(nvim, KEY)


def rows(nvim: pynvim.Nvim, count: int, newest_says: str = "") -> list[str]:
    """The rows of ``:Ai checkpoints`` once it lists ``count`` turns (newest first), the newest saying
    ``newest_says``. The list is sent once what the session's turns left is stored."""
    nvim.command("Ai checkpoints")

    def listed() -> list[str] | None:
        found = [line for line in buffer_text(nvim, LIST).splitlines()[3:] if line.strip()[:1].isdigit()]
        return found if len(found) == count and newest_says in found[0] else None
    return wait_for(listed, timeout=30, what=f"{count} turns in :Ai checkpoints", nvim=nvim)


def test_a_resumed_session_lists_its_earlier_turns_and_rewinds_to_them(editors):
    first, second = editors.workspace / "first.txt", editors.workspace / "second.txt"
    for path in (first, second):
        path.write_text(ORIGINAL)
    nvim = editors.start()
    turn(nvim, f"edit {first}")
    turn(nvim, f"edit-disk {second}")
    assert first.read_text() != ORIGINAL and second.read_text() != ORIGINAL
    rows(nvim, 2)  # stored (the list waits for that)
    editors.quit(nvim)

    nvim = editors.start()
    resume(nvim)
    listed = rows(nvim, 2)
    assert listed[0].lstrip().startswith("2 ") and "edit-disk" in listed[0] and "1 file" in listed[0]
    assert listed[1].lstrip().startswith("1 ") and "edit " in listed[1] and "1 file" in listed[1]
    nvim.command("Ai open")
    wait_for(lambda: nvim.current.buffer.name == f"acp://chat/{KEY}", what="the chat window", nvim=nvim)
    lines = nvim.current.buffer[:]
    row = next(i for i, line in enumerate(lines) if line == "## You" and "edit-disk" in lines[i + 1])
    nvim.api.win_set_cursor(0, [row + 1, 0])
    nvim.input("\\e")  # an earlier turn's prompt, in the earlier conversation, taken back to edit
    prompt_buf = nvim.buffers[nvim.funcs.bufnr(f"acp://prompt/{KEY}")]
    wait_for(lambda: prompt_buf[-1] == f"edit-disk {second}", what="turn 2's prompt in the prompt", nvim=nvim)
    prompt_buf[:] = [""]
    nvim.command("wincmd p")
    turn(nvim, "echo after the resume", asks=False)
    assert rows(nvim, 3)[0].lstrip().startswith("3 ")

    nvim.command("Ai rewind 2")
    wait_for(lambda: next((n for n in notes(nvim) if "rewound to before turn 2" in n), None), timeout=30,
             what="the rewind's note", nvim=nvim)
    assert second.read_text() == ORIGINAL and first.read_text() != ORIGINAL
    assert "── rewound to before turn 2 ── turns 2–3 folded above" in chat(nvim, KEY)
    wait_idle(nvim, KEY)
    rows(nvim, 3, newest_says="taken back")  # stored again, and the link to the new session
    editors.quit(nvim)

    nvim = editors.start()
    resume(nvim)  # the session the rewind continued in: turn 1 still before it, 2 and 3 taken back
    listed = rows(nvim, 3)
    assert [row.lstrip().split()[0] for row in listed] == ["3", "2", "1"]
    assert "taken back" in listed[0] or "undone" in listed[0]
    nvim.command("Ai rewind 1")
    wait_for(lambda: next((n for n in notes(nvim) if "rewound to before turn 1" in n), None), timeout=30,
             what="the rewind to before turn 1", nvim=nvim)
    assert first.read_text() == ORIGINAL and second.read_text() == ORIGINAL


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin", "HOME": str(cwd)}).stdout


def test_a_worktree_sessions_history_and_checkpoints_are_found_from_the_main_folder(editors):
    repo = editors.workspace
    git(repo, "init", "-q", "-b", "main")
    (repo / "sample.txt").write_text(ORIGINAL)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "start")
    tree = repo / ".git" / "acp-worktrees" / "feature"
    nvim = editors.start()
    nvim.command("Ai new saved --worktree feature")
    wait_for(lambda: any(f"works in {tree}" in n for n in notes(nvim)), timeout=30, what="the worktree session",
             nvim=nvim)
    wait_idle(nvim, KEY)
    turn(nvim, f"edit {tree / 'sample.txt'}")
    assert (tree / "sample.txt").read_text() != ORIGINAL and (repo / "sample.txt").read_text() == ORIGINAL
    rows(nvim, 1)
    editors.quit(nvim)

    nvim = editors.start()  # in the main folder
    assert nvim.funcs.getcwd() == str(repo)
    nvim.command("Ai board")
    wait_for(lambda: "edit " in buffer_text(nvim, "acp://board").split("past sessions of this folder", 1)[-1],
             timeout=30, what="the worktree session among the board's past sessions", nvim=nvim)
    nvim.exec_lua("_G.choose = { '⎇ feature' }")
    nvim.command("Ai resume")
    wait_for(lambda: "new prompts continue it" in chat(nvim, KEY), timeout=30, what="the resumed chat", nvim=nvim)
    picked = nvim.exec_lua("return _G.picked[1]")
    assert [item for item in picked["items"] if "⎇ feature" in item] == [picked["items"][0]]
    assert "## You\nedit " in chat(nvim, KEY)  # the record found in the worktree's folder
    wait_idle(nvim, KEY)
    listed = rows(nvim, 1)
    assert listed[0].lstrip().startswith("1 ") and "1 file" in listed[0]
    nvim.command("Ai rewind 1")
    wait_for(lambda: next((n for n in notes(nvim) if "rewound to before turn 1" in n), None), timeout=30,
             what="the rewind in the worktree", nvim=nvim)
    assert (tree / "sample.txt").read_text() == ORIGINAL
    nvim.command("Ai board")
    wait_for(lambda: "⎇ acp/feature" in buffer_text(nvim, "acp://board"), timeout=20,
             what="the resumed session's branch on the board", nvim=nvim)


def test_a_session_loaded_from_the_agent_alone_lists_its_turns_and_rewinds(editors):
    """No local history: the agent's session/load replays the conversation, and the checkpoints are
    matched to the replayed prompts."""
    target = editors.workspace / "target.txt"
    target.write_text(ORIGINAL)
    nvim = editors.start(history=False)
    turn(nvim, "echo nothing changes", asks=False)
    turn(nvim, f"edit {target}")
    rows(nvim, 2)
    editors.quit(nvim)

    nvim = editors.start(history=False)
    nvim.command("Ai resume last")
    wait_for(lambda: "new prompts continue it" in chat(nvim, KEY), timeout=30, what="the loaded chat", nvim=nvim)
    wait_idle(nvim, KEY)
    assert chat(nvim, KEY).count(f"## You\nedit {target}") == 1  # the agent's replay
    listed = rows(nvim, 2)
    assert "1 file" in listed[0] and "no files" in listed[1]
    nvim.command("Ai open")
    wait_for(lambda: nvim.current.buffer.name == f"acp://chat/{KEY}", what="the chat window", nvim=nvim)
    lines = nvim.current.buffer[:]
    row = next(i for i, line in enumerate(lines) if line == "## You" and lines[i + 1].startswith("edit "))
    nvim.api.win_set_cursor(0, [row + 1, 0])
    nvim.input("\\e")  # the replayed prompt is turn 2's
    prompt_buf = nvim.buffers[nvim.funcs.bufnr(f"acp://prompt/{KEY}")]
    wait_for(lambda: prompt_buf[-1] == f"edit {target}", what="turn 2's prompt in the prompt", nvim=nvim)
    prompt_buf[:] = [""]
    nvim.command("Ai rewind 2")
    wait_for(lambda: next((n for n in notes(nvim) if "rewound to before turn 2" in n), None), timeout=30,
             what="the rewind", nvim=nvim)
    assert target.read_text() == ORIGINAL


def test_a_session_closed_and_resumed_in_the_same_neovim_keeps_its_turns(editors):
    target = editors.workspace / "target.txt"
    target.write_text(ORIGINAL)
    nvim = editors.start()
    turn(nvim, f"edit {target}")
    rows(nvim, 1)
    nvim.command("Ai close")
    wait_for(lambda: nvim.exec_lua("return require('acp_nvim.state').sessions[...] == nil", KEY)
             or "closed" in str(nvim.exec_lua("return (require('acp_nvim.state').sessions[...] or {}).state", KEY)),
             timeout=30, what="the session closed", nvim=nvim)
    nvim.command("Ai resume last")
    wait_for(lambda: "new prompts continue it" in chat(nvim, "saved/2"), timeout=30, what="the resumed chat",
             nvim=nvim)
    wait_idle(nvim, "saved/2")
    nvim.command("Ai checkpoints")
    listing = wait_for(lambda: (t := buffer_text(nvim, "acp://checkpoints/saved/2")) and "edit " in t and t,
                       timeout=30, what="turn 1 listed for the resumed session", nvim=nvim)
    assert next(line for line in listing.splitlines()[3:] if line.strip()).lstrip().startswith("1 ")
