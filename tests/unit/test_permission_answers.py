"""What the broker offers, stores and answers for "always", through a held fake editor: the rule
shown is the rule stored, complex commands get none, the agent is answered "once", edits outside
the workspace always ask; and the kept copies of rejected proposals are pruned."""

from __future__ import annotations

import asyncio
import os

import pytest
from acp.schema import PermissionOption, ToolCallUpdate
from fake_editor import FakeEditor

from acp_nvim.core.files.paths import PathPolicy
from acp_nvim.core.permissions.accepted import AcceptedEdits
from acp_nvim.core.permissions.broker import PermissionBroker, Scope
from acp_nvim.core.permissions.policy import PermissionSettings
from acp_nvim.core.permissions.settle import prune
from acp_nvim.core.questions import Questions
from acp_nvim.core.transcript.conversation import Conversation
from helpers import async_wait_for

pytestmark = pytest.mark.timeout(10)
FURTHER = "(with further file or ref names; no other option, no path outside, no link)"

OPTIONS = [
    PermissionOption(option_id="demo-yes", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="demo-always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="demo-no", name="Reject", kind="reject_once"),
    PermissionOption(option_id="demo-never", name="Always reject", kind="reject_always"),
]


class Files:
    def __init__(self, root: str) -> None:
        self.policy = PathPolicy([root])

    async def write(self, path: str, content: str, *, origin: str = "agent") -> None:
        raise AssertionError("nothing is written")

    async def revert(self, path: str, before: str | None, *, force: bool = False) -> str:
        return "unsaved"  # nothing is written


class Rig:
    def __init__(self, root: str = "/nonexistent-ws") -> None:
        self.questions, self.editor, self.transcript = Questions(), FakeEditor(hold=True), Conversation()
        self.broker = PermissionBroker(Scope("demo/1", "demo", "/ws"), PermissionSettings(), questions=self.questions,
                                       editor=self.editor, transcript=self.transcript, files=Files(root),
                                       accepted=AcceptedEdits(), report=pytest.fail, waiting=lambda asked: None)

    async def ask(self, call: ToolCallUpdate, answer: str | None):
        before = len(self.editor.tickets)
        pending = asyncio.ensure_future(self.broker.handle(call, OPTIONS))
        if answer is None:
            return await pending, None
        await async_wait_for(lambda: len(self.editor.tickets) > before or pending.done())
        if pending.done():
            return await pending, None
        question = self.editor.questions[-1]
        self.editor.tickets[-1].answer(answer)
        return await pending, question

    def notices(self) -> str:
        return "\n".join(block.text() for block in self.transcript.blocks)


def execute(command: object, n: int = 1) -> ToolCallUpdate:
    raw = {"command": command} if command is not None else {}
    return ToolCallUpdate(tool_call_id=f"t{n}", title=str(command), kind="execute", raw_input=raw)


async def test_always_shows_the_rule_it_stores_and_the_agent_is_answered_once():
    rig = Rig()
    response, question = await rig.ask(execute("git status -s"), "demo-always")
    assert question.rules == {
        "allow_always": f"always allow execute `git status -s …` {FURTHER} (demo in /ws)",
        "reject_always": f"always reject execute `git status -s …` {FURTHER} (demo in /ws)"}
    assert question.no_rule == ""
    assert response.outcome.option_id == "demo-yes", "the agent's own 'always' could allow more than our rule"
    assert "remembered: always allow execute `git status -s …`" in rig.notices()
    response, question = await rig.ask(execute("git status -s src", 2), None)
    assert response.outcome.option_id == "demo-yes" and question is None, "the rule answered"
    _, question = await rig.ask(execute("git status && rm -rf ~", 3), "demo-no")
    assert question is not None and question.title == "git status && rm -rf ~", "a compound command asks"
    assert rig.questions.count() == 0


@pytest.mark.parametrize(("command", "reason"), [
    ("git status && rm -rf ~", "the command is not a simple command: it has `&`/`&&` runs several commands"),
    ("bash -c 'git status'", "`bash` runs another command"),
    (None, "the request names no command"),
])
async def test_no_always_for_complex_commands_or_none_and_it_stores_nothing(command, reason):
    rig = Rig()
    response, question = await rig.ask(execute(command), "demo-always")  # only through the API: Lua hides it
    assert question.rules == {} and reason in question.no_rule
    assert response.outcome.option_id == "demo-yes", "answered once"
    assert await (await rig.broker.rule_store()).all() == []
    assert "not remembered" in rig.notices()


async def test_a_multi_line_command_is_shown_line_by_line():
    rig = Rig()
    _, question = await rig.ask(execute("git status\nrm -rf ~"), "demo-no")
    assert question.detail.splitlines()[:2] == ["$ git status", "  rm -rf ~"]


async def test_an_argument_list_is_shown_quoted():
    rig = Rig()
    _, question = await rig.ask(execute(["git", "commit", "-m", "a; b"]), "demo-no")
    assert question.detail.splitlines()[0] == "$ git commit -m 'a; b'"


async def test_an_always_allow_edit_rule_asks_outside_the_workspace(tmp_path):
    rig = Rig(root=str(tmp_path))
    inside, outside = str(tmp_path / "a.txt"), "/etc/passwd"

    def delete(path: str, n: int) -> ToolCallUpdate:
        return ToolCallUpdate(tool_call_id=f"d{n}", title=f"delete {path}", kind="delete",
                              locations=[{"path": path}])

    response, question = await rig.ask(delete(inside, 1), "demo-always")
    assert question.rules["allow_always"] == "always allow delete inside the workspace (demo in /ws)"
    response, question = await rig.ask(delete(inside, 2), None)
    assert question is None and response.outcome.option_id == "demo-yes"
    response, question = await rig.ask(delete(outside, 3), "demo-no")
    assert question is not None, "outside the workspace always asks"
    response, question = await rig.ask(ToolCallUpdate(tool_call_id="d4", title="delete ?", kind="delete"), "demo-no")
    assert question is not None, "no paths: not known to be inside"


# -- rejected proposals are pruned -------------------------------------------------------


def kept(folder, name: str, size: int, age_days: float, now: float) -> None:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    os.utime(path, (now - age_days * 86400, now - age_days * 86400))


def test_prune_by_age_count_and_size(tmp_path):
    now = 1_000_000_000.0
    for i in range(6):
        kept(tmp_path, f"demo-1/{i}-a.txt", 100, age_days=i, now=now)
    kept(tmp_path, "demo-2/1-old.txt", 100, age_days=40, now=now)
    (tmp_path / "demo-3").mkdir()
    assert prune(tmp_path, max_files=0, max_age_s=max_age_days_s(30), max_bytes=0, now=now) == 1
    assert not (tmp_path / "demo-2").exists() and not (tmp_path / "demo-3").exists(), "empty folders go too"
    assert prune(tmp_path, max_files=4, max_age_s=0, max_bytes=0, now=now) == 2
    assert sorted(p.name for p in (tmp_path / "demo-1").iterdir()) == ["0-a.txt", "1-a.txt", "2-a.txt", "3-a.txt"]
    assert prune(tmp_path, max_files=0, max_age_s=0, max_bytes=250, now=now) == 2
    assert sorted(p.name for p in (tmp_path / "demo-1").iterdir()) == ["0-a.txt", "1-a.txt"], "the newest stay"


def test_prune_never_follows_links(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious").write_text("keep")
    folder = tmp_path / "rejected"
    folder.mkdir()
    (folder / "link").symlink_to(outside, target_is_directory=True)
    (folder / "file-link").symlink_to(outside / "precious")
    assert prune(folder, max_files=0, max_age_s=1, max_bytes=0, now=10**12) == 0
    assert (outside / "precious").read_text() == "keep"


def max_age_days_s(days: float) -> float:
    return days * 86400


async def test_an_execute_request_shows_argv_folder_and_environment_in_full(tmp_path):
    rig = Rig()
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    padded = "git status -s" + " " * 280 + "; touch pwned"
    raw = {"command": padded + "\x1b[2K\u202e", "cwd": str(tmp_path / "link"),
           "env": {"GIT_CONFIG_COUNT": "1", "TERM": "dumb"}, "timeout": 5}
    call = ToolCallUpdate(tool_call_id="t9", title="Run", kind="execute", raw_input=raw)
    _, question = await rig.ask(call, "demo-no")
    lines = question.detail.splitlines()
    assert lines[0] == "$ git status -s⟨280 × space⟩; touch pwned\\x1b[2K<U+202E>"
    assert lines[1] == f"in: {tmp_path / 'link'} (real path {tmp_path / 'real'})"
    assert lines[2] == "env: GIT_CONFIG_COUNT=1  ⚠ changes what runs" and lines[3] == "env: TERM=dumb"
    assert lines[4] == "timeout: 5"
    long = execute("\n".join(f"echo {i}" for i in range(100)))
    _, question = await rig.ask(long, "demo-no")
    assert "echo 99" in question.detail and "more lines" not in question.detail, "no cut"
    _, question = await rig.ask(execute(["echo", "a\nb", "\u200b"]), "demo-no")
    assert question.detail.splitlines()[:2] == ["$ echo 'a\\nb' '<U+200B>'", "  (argv: 3 words, run without a shell)"]
