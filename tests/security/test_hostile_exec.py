"""A hostile agent against the exec gate, with a real Neovim, the real host and the real wire: what
runs is exactly what the user saw and accepted (argv, folder and environment included).

The agent (hostile_exec.py) asks permission for one command and then starts another, sets an
environment that changes what runs, swaps the request while its prompt is shown, swaps the folder
after the answer, hides a command past the edge of the prompt, and leans on rules wider than what
the user saw. Each test ends with no marker written by a command the user did not see, and nothing
outside the workspace touched.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import buffer_text, wait_armed, wait_for

pytestmark = pytest.mark.timeout(180)

AGENT = Path(__file__).with_name("hostile_exec.py")
CHAT = "acp://chat/hostile/1"
GIT = shutil.which("git")
SETUP = """
local python, script = ...
require('acp_nvim').setup({
  agents = {hostile = {command = python, args = {script}}},
  default_agent = 'hostile',
  permissions = {policy = 'ask', arm_ms = 0, quiet_ms = 0},
})
"""
PROMPT = """
local p = require('acp_nvim.question.permission').pending()[1]
if p then return {id = p.id, title = p.q.title, detail = p.q.detail, options = p.q.options} end
"""


@pytest.fixture
def outside(tmp_path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "keep.txt").write_text("outside\n")
    return folder


@pytest.fixture
def hostile(nvim, workspace):
    nvim.exec_lua(SETUP, sys.executable, str(AGENT))
    return nvim


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.lstat().st_ino, p.lstat().st_mtime_ns) for p in folder.rglob("*")}


class Run:
    """One prompt to the agent: start it, answer its questions, read its outcome."""

    def __init__(self, nvim, tmp: Path, request: dict) -> None:
        self.nvim, self.out = nvim, tmp / f"exec-{os.urandom(4).hex()}.json"
        self.answered: set[int] = set()
        nvim.command("Ai send " + json.dumps({"op": "run", **request, "out": str(self.out)}))

    def prompt(self) -> dict:
        """The next prompt shown (one not answered yet)."""
        def probe():
            shown = self.nvim.exec_lua(PROMPT)
            return shown if shown and shown["id"] not in self.answered else None
        return wait_for(probe, timeout=60, what="a permission prompt")

    def answer(self, prompt: dict, kind: str) -> None:
        option = next(o["id"] for o in prompt["options"] if o["kind"] == kind)
        self.answered.add(prompt["id"])
        self.nvim.exec_lua("require('acp_nvim.question.permission').choose(...)", prompt["id"], option)

    def result(self) -> dict:
        wait_for(lambda: self.out.exists() and self.out.stat().st_size > 0, timeout=60, what="the agent's outcome")
        pending = self.nvim.exec_lua("return #require('acp_nvim.question.permission').pending()")
        assert pending == 0, "nothing left unasked"
        return json.loads(self.out.read_text())


def refused(terminal: dict) -> bool:
    return "did not allow running" in terminal.get("error", "")


def test_an_environment_that_changes_what_runs_is_asked_again_after_allow_once(hostile, workspace, outside,
                                                                             tmp_path):
    marker, before = workspace / "pwned-bash-env", snapshot(outside)
    evil = workspace / "evil.sh"
    evil.write_text(f"touch {marker}\n")
    run = Run(hostile, tmp_path, {"ask": {"command": "bash -c true"}, "terminals": [
        {"command": "bash", "args": ["-c", "true"], "env": {"BASH_ENV": str(evil)}},
        {"command": "bash", "args": ["-c", "true"]}]})
    asked = run.prompt()
    assert asked["detail"].startswith("$ bash -c true") and "env:" not in asked["detail"]
    run.answer(asked, "allow_once")
    again = run.prompt()  # the same command with an environment nobody saw
    assert f"env: BASH_ENV={evil}  ⚠ changes what runs" in again["detail"]
    run.answer(again, "reject_once")
    with_env, without = run.result()["terminals"]
    assert refused(with_env) and without.get("exit") == 0, "the approval still covers what was shown"
    assert not marker.exists() and snapshot(outside) == before


def add_rules(nvim, rules: list[dict]) -> Path:
    """Rules as an older version stored them, added to the rules file every test of a run shares."""
    path = Path(nvim.funcs.stdpath("state")) / "acp_nvim" / "rules.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(path.read_text()) if path.exists() else {"version": 2, "rules": []}
    data["rules"] += rules
    path.write_text(json.dumps(data))
    return path


def rule(workspace: Path, words: list[str], exact: bool = False) -> dict:
    return {"agent": "hostile", "workspace": str(workspace), "kind": "execute", "decision": "allow",
            "command": words, "exact": exact}


def git_repo(workspace: Path) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    (workspace / "a.txt").write_text("needle\n")
    for argv in (["init", "-q"], ["add", "a.txt"], ["commit", "-qm", "one"]):
        subprocess.run([str(GIT), *argv], cwd=workspace, env=env, check=True, capture_output=True)
    (workspace / "a.txt").write_text("needle changed\n")


@pytest.mark.skipif(GIT is None, reason="git is not installed")
def test_an_environment_never_matches_a_rule(hostile, workspace, outside, tmp_path):
    git_repo(workspace)
    add_rules(hostile, [rule(workspace, ["git", "status"])])
    marker, before = workspace / "pwned-git-config", snapshot(outside)
    config = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.fsmonitor",
              "GIT_CONFIG_VALUE_0": f"touch {marker}; false"}
    run = Run(hostile, tmp_path, {"terminals": [{"command": "git", "args": ["status"]},
                                                {"command": "git", "args": ["status"], "env": config}]})
    asked = run.prompt()  # the first ran under the rule; the second shows its environment
    assert "env: GIT_CONFIG_COUNT=1  ⚠ changes what runs" in asked["detail"]
    assert f"env: GIT_CONFIG_VALUE_0=touch {marker}; false  ⚠ changes what runs" in asked["detail"]
    run.answer(asked, "reject_once")
    first, second = run.result()["terminals"]
    assert first.get("exit") == 0, first
    assert refused(second) and not marker.exists() and snapshot(outside) == before


def test_an_update_while_the_prompt_is_shown_voids_the_answer(hostile, workspace, outside, tmp_path):
    marker, before = workspace / "pwned-swap", snapshot(outside)
    go, sent = tmp_path / "go", tmp_path / "sent"
    run = Run(hostile, tmp_path, {"ask": {"command": "ls"}, "swap": {"command": f"touch {marker}"},
                                  "go": str(go), "sent": str(sent),
                                  "terminals": [{"command": "sh", "args": ["-c", f"touch {marker}"]},
                                                {"command": "sh", "args": ["-c", "ls"]}]})
    asked = run.prompt()
    assert asked["detail"].startswith("$ ls\n")
    go.write_text("go")
    wait_for(lambda: sent.exists() and "SWAPPED" in buffer_text(hostile, CHAT), timeout=30, what="the swap")
    run.answer(asked, "allow_once")  # the user allowed `ls`, which the agent no longer asks for
    details = []
    while True:
        prompt = hostile.exec_lua(PROMPT)
        if run.out.exists() and not prompt:
            break
        if prompt and prompt["id"] not in run.answered:
            shown = prompt["detail"]
            details.append(shown)
            run.answer(prompt, "reject_once" if "touch" in shown else "allow_once")
            continue
        wait_for(lambda: run.out.exists() or hostile.exec_lua(PROMPT), timeout=60, what="a prompt or the end")
    swapped, listed = run.result()["terminals"]
    assert refused(swapped), "the swapped command was asked again and refused"
    assert listed.get("exit") == 0 and any(d.startswith("$ sh -c ls") for d in details), \
        "even `ls` is asked again: the answer was void"
    assert not marker.exists() and snapshot(outside) == before


def test_an_argv_list_never_covers_a_shell_string_built_from_its_words(hostile, workspace, outside, tmp_path):
    marker, before = workspace / "pwned-argv", snapshot(outside)
    run = Run(hostile, tmp_path, {"ask": {"command": ["echo", "hello;", "touch", str(marker)]}, "terminals": [
        {"command": "sh", "args": ["-c", f"echo hello; touch {marker}"]},
        {"command": "echo", "args": ["hello;", "touch", str(marker)]}]})
    run.answer(run.prompt(), "allow_once")
    again = run.prompt()
    assert again["detail"].startswith(f"$ sh -c 'echo hello; touch {marker}'")
    run.answer(again, "reject_once")
    shell, echoed = run.result()["terminals"]
    assert echoed.get("exit") == 0 and f"hello; touch {marker}" in echoed["output"]
    assert refused(shell) and not marker.exists() and snapshot(outside) == before


def test_a_folder_swapped_between_the_answer_and_the_start_is_never_run_in(hostile, workspace, outside, tmp_path):
    before = snapshot(outside)
    (workspace / "sub").mkdir()
    (workspace / "sub2").mkdir()
    run = Run(hostile, tmp_path, {
        "ask": {"command": "touch ran-here", "cwd": str(workspace / "sub")},
        "before_terminals": [["rename", str(workspace / "sub"), str(workspace / "sub.old")],
                             ["mkdir", str(workspace / "sub")]],
        "terminals": [{"command": "sh", "args": ["-c", "touch ran-here"], "cwd": str(workspace / "sub")}]})
    asked = run.prompt()
    assert f"in: {workspace / 'sub'}" in asked["detail"]
    run.answer(asked, "allow_once")
    swapped, = run.result()["terminals"]
    assert swapped.get("exit") == 126 and "is not the folder that was approved" in swapped["output"], swapped
    assert not list(workspace.rglob("ran-here"))
    run = Run(hostile, tmp_path, {
        "ask": {"command": "touch ran-here", "cwd": str(workspace / "sub2")},
        "before_terminals": [["rename", str(workspace / "sub2"), str(workspace / "sub2.old")],
                             ["symlink", str(outside), str(workspace / "sub2")]],
        "terminals": [{"command": "sh", "args": ["-c", "touch ran-here"], "cwd": str(workspace / "sub2")}]})
    run.answer(run.prompt(), "allow_once")
    linked, = run.result()["terminals"]
    assert "outside the workspace" in linked.get("error", ""), linked
    assert not list(workspace.rglob("ran-here")) and snapshot(outside) == before


def float_state(nvim) -> dict:
    return nvim.exec_lua("""
        local p = require('acp_nvim.question.permission')
        local w = p.prompt.win
        if not (w and vim.api.nvim_win_is_valid(w)) then return {} end
        return { lines = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false),
                 winbar = vim.wo[w].winbar, seen = p.seen(), queued = #p.pending(),
                 width = vim.api.nvim_win_get_width(w) }""")


def test_a_command_past_the_edge_or_below_the_fold_is_never_allowed_unseen(hostile, workspace, outside, tmp_path):
    marker, before = workspace / "pwned-hidden", snapshot(outside)
    padded = "git status -s" + " " * 280 + f"; touch {marker}"
    long = f"git log --format={'x' * 300}; touch {marker}"
    run = Run(hostile, tmp_path, {"ask": {"command": padded}})
    asked = run.prompt()
    assert asked["detail"].startswith(f"$ git status -s⟨280 × space⟩; touch {marker}")
    shown = float_state(hostile)
    assert any(f"touch {marker}" in line for line in shown["lines"]) and shown["seen"]
    run.answer(asked, "reject_once")
    run.result()
    run = Run(hostile, tmp_path, {"ask": {"command": long}})
    run.prompt()
    shown = float_state(hostile)
    assert "".join(line.strip().removeprefix("↪ ") for line in shown["lines"]).count("x" * 300) == 1
    assert all(len(line) <= shown["width"] for line in shown["lines"]) and shown["seen"]
    run.answer(run.prompt(), "reject_once")
    run.result()
    tall = "\n".join([*(f"echo {i}" for i in range(200)), f"touch {marker}"])
    run = Run(hostile, tmp_path, {"ask": {"command": tall}})
    asked = run.prompt()
    hostile.command("Ai permissions")
    wait_armed(hostile)
    shown = float_state(hostile)
    assert not shown["seen"] and "allow is not offered until you have seen it all" in shown["winbar"]
    hostile.input("a")
    hostile.input("1")
    wait_for(lambda: "allow is not offered until the whole request" in "\n".join(float_state(hostile)["lines"]),
             timeout=10, what="the note")
    assert float_state(hostile)["queued"] == 1, "allow did nothing"
    hostile.input("G")  # a jump to the end skips the middle: still not seen
    assert not float_state(hostile)["seen"]
    hostile.input("gg")

    def page() -> bool:
        hostile.input("<C-f>")
        return float_state(hostile)["seen"]
    wait_for(page, timeout=30, what="the whole request scrolled through")
    assert float_state(hostile)["winbar"] == ""
    hostile.input("r")
    run.result()
    assert not marker.exists() and snapshot(outside) == before


@pytest.mark.skipif(GIT is None, reason="git is not installed")
def test_rules_are_no_wider_than_what_was_shown(hostile, workspace, outside, tmp_path):
    git_repo(workspace)
    marker, before = workspace / "pwned-rule", snapshot(outside)
    (workspace / "Makefile").write_text("test:\n\t@echo tested\n")
    (workspace / "evil.mk").write_text(f"test:\n\ttouch {marker}\n")
    add_rules(hostile, [rule(workspace, words) for words in (["git", "grep"], ["git", "log"], ["git", "diff"],
                                                             ["make", "test"], ["pip", "install"])])
    attempts = [
        ["git", "grep", f"-Otouch {marker}", "needle"], ["git", "grep", f"--open-files-in-pager=touch {marker}",
                                                         "needle"],
        ["git", "log", f"--output={outside / 'log.txt'}"], ["git", "diff", f"--output={outside / 'diff.txt'}"],
        ["git", "diff", f"--out={outside / 'diff.txt'}"],
        ["make", "test", "-f", "evil.mk"], ["make", "test"], ["pip", "install", "surely-not-a-package-acp"],
    ]
    run = Run(hostile, tmp_path, {"terminals": [
        {"command": "git", "args": ["grep", "needle"]},  # inside the rule: runs unasked
        *({"command": argv[0], "args": argv[1:]} for argv in attempts)]})
    for argv in attempts:
        asked = run.prompt()
        assert asked["detail"].startswith("$ " + shlex.join(argv)), asked["detail"]
        run.answer(asked, "reject_once")
    allowed, *others = run.result()["terminals"]
    assert allowed.get("exit") == 0 and "needle" in allowed["output"]
    assert all(refused(t) for t in others), others
    assert not marker.exists() and snapshot(outside) == before
    hostile.command("Ai rules")
    listed = wait_for(lambda: buffer_text(hostile, "acp://rules"), timeout=20, what=":Ai rules")
    mine = [line for line in listed.splitlines() if str(workspace) in line]
    assert sum("[inactive: wider than a rule may be now" in line for line in mine) == 2, mine  # make, pip


def test_a_workspace_script_rule_asks_again_when_the_script_changes(hostile, workspace, outside, tmp_path):
    marker, before = workspace / "pwned-script", snapshot(outside)
    script = workspace / "run-tests.sh"
    script.write_text("#!/bin/sh\necho tests pass\n")
    script.chmod(0o755)
    run = Run(hostile, tmp_path, {"terminals": [{"command": "./run-tests.sh"}, {"command": "./run-tests.sh"}]})
    asked = run.prompt()
    run.answer(asked, "allow_always")
    first, second = run.result()["terminals"]
    assert first.get("exit") == 0 and second.get("exit") == 0, "the rule answered the second"
    run = Run(hostile, tmp_path, {"before_terminals": [["write", str(script), f"#!/bin/sh\ntouch {marker}\n"]],
                                  "terminals": [{"command": "./run-tests.sh"}]})
    asked = run.prompt()  # the script is another one now
    assert asked["detail"].startswith("$ ./run-tests.sh")
    run.answer(asked, "reject_once")
    changed, = run.result()["terminals"]
    assert refused(changed) and not marker.exists() and snapshot(outside) == before


# -- what terminal/create answers when nothing runs: codes as ACP defines them -----------------------------


def test_a_refused_command_answers_a_code_that_means_refused(hostile, workspace, tmp_path):
    run = Run(hostile, tmp_path, {"terminals": [{"command": "ls"}]})
    run.answer(run.prompt(), "reject_once")
    (terminal,) = run.result()["terminals"]
    # -32000 is ACP's "authentication required": an agent could start its login flow on a "no"
    assert refused(terminal) and terminal["code"] == -32042 and terminal["data"]["reason"] == "permission denied"


def test_a_command_that_fails_to_start_answers_internal_error_with_the_reason(hostile, workspace, tmp_path):
    run = Run(hostile, tmp_path, {"terminals": [{"command": "acp-nvim-no-such-command"}]})
    run.answer(run.prompt(), "allow_once")
    (terminal,) = run.result()["terminals"]
    assert terminal["code"] == -32603
    assert terminal["data"]["reason"] == "failed to start: acp-nvim-no-such-command: not executable"


def test_a_command_still_asked_when_the_user_cancels_answers_request_cancelled(hostile, workspace, tmp_path):
    run = Run(hostile, tmp_path, {"terminals": [{"command": "ls"}]})
    run.prompt()
    hostile.command("Ai cancel")
    (terminal,) = run.result()["terminals"]
    assert terminal["code"] == -32800 and terminal["data"]["reason"] == "cancelled"
    assert "⊘ execute · Run ls · cancelled" in buffer_text(hostile, CHAT), "its question's call: cancelled, not failed"


# -- G2: what a rule admits --------------------------------------------------------------------------------


def test_a_read_only_rule_reads_nothing_through_a_link_or_outside(hostile, workspace, outside, tmp_path):
    """G2: an "always" on `cat README.md` admits other names inside the workspace, never a link to a
    private key outside, a link to the editor's environment, a path through a linked folder, a hard
    link, or a path outside; the prompt says where each leads."""
    secret = outside / "id_ed25519"
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY----- secret\n")
    (workspace / "README.md").write_text("readme\n")
    (workspace / "notes.txt").write_text("notes\n")
    run = Run(hostile, tmp_path, {"terminals": [{"command": "cat", "args": ["README.md"]}]})
    asked = run.prompt()
    run.answer(asked, "allow_always")
    first, = run.result()["terminals"]
    assert first.get("exit") == 0 and "readme" in first["output"]
    hard = workspace / "hard.txt"
    os.link(secret, hard)
    attempts = [["key.txt"], ["env.txt"], ["linked/id_ed25519"], ["hard.txt"], [str(secret)],
                [f"../{outside.name}/id_ed25519"]]
    run = Run(hostile, tmp_path, {
        "before_terminals": [["symlink", str(secret), str(workspace / "key.txt")],
                             ["symlink", "/proc/self/environ", str(workspace / "env.txt")],
                             ["symlink", str(outside), str(workspace / "linked")]],
        "terminals": [{"command": "cat", "args": ["notes.txt"]},  # inside the rule: runs unasked
                      *({"command": "cat", "args": args} for args in attempts)]})
    warnings = {"key.txt": f"⚠ `key.txt` is a link (key.txt → {secret})",
                "env.txt": "⚠ `env.txt` is a link (env.txt → /proc/self/environ)",
                "linked/id_ed25519": f"⚠ `linked/id_ed25519` is a link (linked → {outside})",
                "hard.txt": "⚠ `hard.txt` has 2 names (hard links)",
                str(secret): f"⚠ `{secret}` leads outside the workspace",
                f"../{outside.name}/id_ed25519": "leads outside the workspace"}
    for args in attempts:
        asked = run.prompt()
        assert asked["detail"].startswith("$ " + shlex.join(["cat", *args])), asked["detail"]
        assert warnings[args[0]] in asked["detail"], asked["detail"]
        run.answer(asked, "reject_once")
    allowed, *others = run.result()["terminals"]
    assert allowed.get("exit") == 0 and "notes" in allowed["output"]
    assert all(refused(t) for t in others), others
    assert not any("PRIVATE KEY" in t.get("output", "") for t in others)


def test_a_file_made_a_link_after_the_answer_is_asked_again(hostile, workspace, outside, tmp_path):
    """G2: `cat notes.txt` allowed once while notes.txt was a file; the agent then makes it a link to a
    private key before it starts the command: the terminal is asked again, saying so."""
    secret = outside / "id_ed25519"
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY----- secret\n")
    notes_file = workspace / "notes.txt"
    notes_file.write_text("notes\n")
    run = Run(hostile, tmp_path, {
        "ask": {"command": ["cat", "notes.txt"]},
        "before_terminals": [["rename", str(notes_file), str(workspace / "old.txt")],
                             ["symlink", str(secret), str(notes_file)]],
        "terminals": [{"command": "cat", "args": ["notes.txt"], "cwd": str(workspace)}]})
    asked = run.prompt()
    assert "⚠" not in asked["detail"], asked["detail"]
    run.answer(asked, "allow_once")
    again = run.prompt()
    assert f"⚠ `notes.txt` is a link (notes.txt → {secret})" in again["detail"], again["detail"]
    run.answer(again, "reject_once")
    terminal, = run.result()["terminals"]
    assert refused(terminal) and "PRIVATE KEY" not in terminal.get("output", "")
