"""A hostile agent against a real Neovim and the real host: what lands is what the user accepted.

The agent (hostile_writes.py) scripts permission requests, tool call updates, ``fs`` writes, its
own disk writes and statuses within one turn. The test answers every question the way a user
would (reject, accept, accept after editing) and then checks the disk: each test ends with the
file holding what the user accepted (or its base after a reject), and nothing outside the
workspace touched. No file is ever run: the ``.git/config`` case checks the file's content.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from helpers import wait_for

pytestmark = pytest.mark.timeout(120)

AGENT = Path(__file__).with_name("hostile_writes.py")
RACE_AGENT = Path(__file__).with_name("hostile_agent.py")
FSMONITOR = "[core]\n\tfsmonitor = touch MARKER-RAN\n"

SETUP = """
local python, script, policy = ...
_G.acp_test_notes = {}
vim.notify = function(msg, level) table.insert(_G.acp_test_notes, msg) end
require('acp_nvim.threeway').open = function(id, spec)
  vim.schedule(function() require('acp_nvim.host').call.answer(id, 'mine') end)
end
require('acp_nvim').setup({
  agents = {hostile = {command = python, args = {script}}},
  default_agent = 'hostile',
  permissions = {policy = policy, arm_ms = 0, quiet_ms = 0},
})
"""

PENDING = """
local p = require('acp_nvim.question.permission').pending()[1]
if p then
  local options = {}
  for _, o in ipairs(p.q.options) do options[o.kind] = o.id end
  return {'prompt', p.id, options, p.q.title or ''}
end
local r = require('acp_nvim.review').pending()[1]
if r and not r.sent then
  local files = {}
  for _, f in ipairs(r.spec.files) do files[#files + 1] = {f.path, table.concat(f.agent or {}, '\\n')} end
  return {'review', r.id, files, r.spec.title or ''}
end
"""


def setup(nvim, policy: str = "ask", agent: Path = AGENT) -> None:
    nvim.exec_lua(SETUP, sys.executable, str(agent), policy)


def answer_next(nvim, verdict: str) -> tuple[str, object]:
    """Answer the next question: ``accepted``/``rejected`` (a prompt: allow_once/reject_once) or
    ``always`` (a prompt's allow_always); returns (where it was shown, the files a review showed)."""
    kind, qid, detail, _ = wait_for(lambda: nvim.exec_lua(PENDING), timeout=45, what="a question shown")
    if kind == "prompt":
        wanted = {"accepted": "allow_once", "rejected": "reject_once", "always": "allow_always"}[verdict]
        nvim.exec_lua("require('acp_nvim.question.permission').choose(...)", qid, detail[wanted])
    else:
        nvim.exec_lua("require('acp_nvim.review').decide_all(...)", qid, verdict)
    wait_for(lambda: not nvim.exec_lua(PENDING) or nvim.exec_lua(PENDING)[1] != qid, timeout=10,
             what="the question closed")
    return kind, detail


def no_question(nvim) -> bool:
    return not nvim.exec_lua(PENDING)


def start(nvim, tmp: Path, steps: list[dict]) -> Path:
    out = tmp / f"writes-{os.urandom(4).hex()}.json"
    nvim.command("Ai send " + json.dumps({"op": "script", "steps": steps, "out": str(out)}))
    return out


def results(out: Path, timeout: float = 30) -> list[dict]:
    wait_for(lambda: out.exists() and out.stat().st_size > 0, timeout=timeout, what="the agent's script")
    return json.loads(out.read_text())["results"]


def diff(path: Path | str, old: str | None, new: str) -> list:
    return [str(path), old, new]


@pytest.fixture
def outside(tmp_path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "keep.txt").write_text("outside\n")
    return folder


def untouched(outside: Path) -> None:
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]
    assert (outside / "keep.txt").read_text() == "outside\n"


# -- holes: writes that were never gated under `ask` ----------------------------------------


def test_a_rejected_file_less_request_does_not_cover_a_write_to_git_config(nvim, workspace, tmp_path, outside):
    setup(nvim)
    (workspace / ".git").mkdir()
    config = workspace / ".git" / "config"
    config.write_text("[core]\n")
    out = start(nvim, tmp_path, [
        {"do": "ask", "id": "think", "kind": "think", "title": "Think about it"},
        {"do": "write", "path": str(config), "content": FSMONITOR}])
    assert answer_next(nvim, "rejected")[0] == "prompt"
    kind, files = answer_next(nvim, "rejected")  # the write opened a review of its own
    assert kind == "review" and files[0][0] == str(config) and "fsmonitor" in files[0][1]
    asked, wrote = results(out)
    assert asked["option"] == "no" and not wrote["ok"] and "rejected this write" in wrote["message"]
    assert config.read_text() == "[core]\n" and not (workspace / "MARKER-RAN").exists()
    untouched(outside)


def test_an_unasked_write_waits_for_its_own_review_and_lands_the_accepted_text(nvim, workspace, tmp_path):
    setup(nvim)
    target = workspace / "a.txt"
    target.write_text("base\n")
    out = start(nvim, tmp_path, [{"do": "write", "path": str(target), "content": "agent\n"}])
    kind, files = answer_next(nvim, "accepted")
    assert kind == "review" and files[0][1] == "agent"
    assert results(out) == [{"ok": True}]
    assert target.read_text() == "agent\n"


def test_a_review_with_a_relative_diff_path_covers_only_its_accepted_text(nvim, workspace, tmp_path):
    setup(nvim)
    target = workspace / "rel.txt"
    target.write_text("base\n")
    out = start(nvim, tmp_path, [
        {"do": "ask", "id": "e1", "kind": "edit", "title": "Edit rel.txt",
         "diffs": [diff("rel.txt", "base\n", "one\n")]},
        {"do": "write", "path": str(target), "content": "one\n"},
        {"do": "write", "path": str(target), "content": "other\n"}])
    assert answer_next(nvim, "accepted")[0] == "review"
    kind, files = answer_next(nvim, "rejected")  # the second write, with other text
    assert kind == "review" and files[0][1] == "other"
    asked, first, second = results(out)
    assert asked["option"] == "yes" and first == {"ok": True} and not second["ok"]
    assert target.read_text() == "one\n"


def test_widened_locations_after_the_answer_cover_nothing(nvim, workspace, tmp_path):
    setup(nvim)
    a, b = workspace / "a.txt", workspace / "b.txt"
    a.write_text("a\n")
    b.write_text("b\n")
    out = start(nvim, tmp_path, [
        {"do": "ask", "id": "e1", "kind": "edit", "title": "Edit a.txt", "diffs": [diff(a, "a\n", "A\n")],
         "locations": [str(a)]},
        {"do": "update", "id": "e1", "locations": [str(a), str(b)], "diffs": [diff(a, "a\n", "A\n"),
                                                                               diff(b, "b\n", "B\n")]},
        {"do": "write", "path": str(a), "content": "A\n"},
        {"do": "write", "path": str(b), "content": "B\n"}])
    assert answer_next(nvim, "accepted")[0] == "review"
    assert answer_next(nvim, "rejected")[0] == "review"  # a's write: the answer was voided by the update
    assert answer_next(nvim, "rejected")[0] == "review"  # b was never shown
    _, _, wrote_a, wrote_b = results(out)
    assert not wrote_a["ok"] and not wrote_b["ok"]
    assert (a.read_text(), b.read_text()) == ("a\n", "b\n")


# -- holes: only the first write was checked ------------------------------------------------


def test_a_write_while_the_review_is_open_waits_and_is_refused_after_the_reject(nvim, workspace, tmp_path):
    setup(nvim)
    target = workspace / "w.txt"
    target.write_text("base\n")
    out = start(nvim, tmp_path, [
        {"do": "ask", "id": "e1", "kind": "edit", "title": "Edit w.txt", "diffs": [diff(target, "base\n", "new\n")],
         "wait": False},
        {"do": "write", "path": str(target), "content": "new\n"}])
    wait_for(lambda: nvim.exec_lua(PENDING), timeout=20, what="the review")
    assert target.read_text() == "base\n"  # the write waits for the review
    assert answer_next(nvim, "rejected")[0] == "review"
    asked, wrote = results(out)
    assert asked["option"] == "no" and not wrote["ok"] and "rejected" in wrote["message"]
    assert target.read_text() == "base\n" and no_question(nvim)


# What the agent does after the user accepted base -> ok (each step gets the file's path or the call's id).
AFTER_THE_ACCEPT = {
    "then_failed": [{"do": "disk", "content": "something else\n"}, {"do": "status", "status": "failed"}],
    "after_completed": [{"do": "disk", "content": "ok\n"}, {"do": "status", "status": "completed"},
                        {"do": "disk", "content": "later\n"}],
    # the request is the only message that names the file: the turn's end must still follow it
    "never_reporting_a_status": [{"do": "disk", "content": "other\n"}],
}


@pytest.mark.parametrize("then", AFTER_THE_ACCEPT.values(), ids=AFTER_THE_ACCEPT.keys())
def test_a_disk_write_after_the_accept_is_put_back_to_the_accepted_text(nvim, workspace, tmp_path, then):
    setup(nvim)
    target = workspace / "f.txt"
    target.write_text("base\n")
    out = start(nvim, tmp_path, [
        {"do": "ask", "id": "e1", "kind": "edit", "title": "Edit f.txt", "diffs": [diff(target, "base\n", "ok\n")],
         "locations": [str(target)]},
        *({**step, "path": str(target)} if step["do"] == "disk" else {**step, "id": "e1"} for step in then)])
    assert answer_next(nvim, "accepted")[0] == "review"
    results(out)
    wait_for(lambda: target.read_text() == "ok\n", timeout=20, what="the accepted text put back")
    assert no_question(nvim)


def test_a_disk_change_nobody_accepted_is_reviewed_and_a_reject_puts_the_base_back(nvim, workspace, tmp_path):
    setup(nvim)
    target = workspace / "d.txt"
    target.write_text("base\n")
    out = start(nvim, tmp_path, [
        {"do": "update", "id": "x1", "kind": "execute", "title": "Run a script", "locations": [str(target)],
         "status": "pending"},
        {"do": "ask", "id": "x1", "kind": "execute", "title": "Run a script", "locations": [str(target)],
         "raw_input": {"command": "./script"}},
        {"do": "disk", "path": str(target), "content": "sneaky\n"},
        {"do": "status", "id": "x1", "status": "completed"}])
    assert answer_next(nvim, "accepted")[0] == "prompt"  # the command, not what it does to d.txt
    results(out)
    kind, files = answer_next(nvim, "rejected")
    assert kind == "review" and files[0][1] == "sneaky"
    wait_for(lambda: target.read_text() == "base\n", timeout=20, what="the base put back")


# -- rules, config files, voided requests -------------------------------------------------


def test_a_read_rule_never_answers_a_request_that_carries_an_edit(nvim, workspace, tmp_path):
    setup(nvim)
    envrc = workspace / ".envrc"
    out = start(nvim, tmp_path, [
        {"do": "ask", "id": "r1", "kind": "read", "title": "Read notes", "locations": [str(workspace / "n.txt")]},
        {"do": "ask", "id": "r2", "kind": "read", "title": "Read .envrc", "diffs": [diff(envrc, None, "eval x\n")]},
        {"do": "ask", "id": "r3", "kind": "read", "title": "Read m.txt", "diffs": [diff(workspace / "m.txt", None,
                                                                                          "m\n")]}])
    assert answer_next(nvim, "always")[0] == "prompt"  # stores "always allow read inside the workspace"
    assert answer_next(nvim, "rejected")[0] == "review"  # not answered by the read rule
    assert answer_next(nvim, "rejected")[0] == "review"
    first, second, third = results(out)
    assert first["option"] == "yes" and second["option"] == "no" and third["option"] == "no"
    assert not envrc.exists() and not (workspace / "m.txt").exists()


@pytest.mark.parametrize("policy", ["auto-edit", "trust"])
def test_files_that_configure_execution_are_reviewed_under_every_policy(nvim, workspace, tmp_path, policy):
    setup(nvim, policy)
    hook = workspace / "tool.sh"
    hook.write_text("#!/bin/sh\n")
    hook.chmod(0o755)
    plain = workspace / "plain.txt"
    out = start(nvim, tmp_path, [
        {"do": "ask", "id": "e1", "kind": "edit", "title": "Edit .nvim.lua",
         "diffs": [diff(workspace / ".nvim.lua", None, "os.execute('x')\n")]},
        {"do": "write", "path": str(hook), "content": "#!/bin/sh\nrm -rf ~\n"},
        {"do": "write", "path": str(plain), "content": "fine\n"}])
    assert answer_next(nvim, "rejected")[0] == "review"
    assert answer_next(nvim, "rejected")[0] == "review"
    asked, wrote_hook, wrote_plain = results(out)
    assert asked["option"] == "no" and not wrote_hook["ok"] and wrote_plain == {"ok": True}
    assert hook.read_text() == "#!/bin/sh\n" and plain.read_text() == "fine\n"
    assert not (workspace / ".nvim.lua").exists()


def test_a_request_voided_while_it_is_shown_is_asked_again(nvim, workspace, tmp_path):
    setup(nvim)
    target = workspace / "v.txt"
    target.write_text("base\n")
    shown = workspace / "shown.flag"
    out = start(nvim, tmp_path, [
        {"do": "ask", "id": "e1", "kind": "edit", "title": "Edit v.txt", "diffs": [diff(target, "base\n", "shown\n")],
         "wait": False},
        {"do": "until", "path": str(shown)},
        {"do": "update", "id": "e1", "diffs": [diff(target, "base\n", "swapped\n")]},
        {"do": "write", "path": str(target), "content": "swapped\n"}])
    wait_for(lambda: (p := nvim.exec_lua(PENDING)) and p[2][0][1] == "shown", timeout=45, what="the first review")
    shown.write_text("seen\n")
    kind = wait_for(lambda: (p := nvim.exec_lua(PENDING)) and p[2][0][1] == "swapped" and p[0],
                    timeout=45, what="the review asked again with what the request says now")
    assert kind == "review"
    answer_next(nvim, "accepted")
    asked, _, _, wrote = results(out)
    assert asked["option"] == "yes" and wrote == {"ok": True}
    assert target.read_text() == "swapped\n" and no_question(nvim)


def test_buffer_writes_while_the_name_flips_never_end_in_internal_error(nvim, workspace, tmp_path, outside):
    setup(nvim, "auto-edit", RACE_AGENT)
    (outside / "target.txt").write_text("OUTSIDE TARGET\n")
    (workspace / "leaf.txt").write_text("leaf\n")
    loaded = workspace / "loaded.txt"
    loaded.write_text("loaded\n")
    nvim.command(f"edit {loaded}")
    out = tmp_path / "race.json"
    nvim.command("Ai send " + json.dumps({"op": "attack", "ws": str(workspace), "outside": str(outside), "reads": 0,
                                          "writes": 0, "buffer_writes": 100, "buffer_file": str(loaded),
                                          "out": str(out)}))
    wait_for(lambda: out.exists() and out.stat().st_size > 0, timeout=100, what="the race")
    answers = json.loads(out.read_text())["results"]
    assert len(answers) == 100
    internal = [r for r in answers if r.get("code") == -32603]
    assert internal == [], internal[:3]
    assert (outside / "target.txt").read_text() == "OUTSIDE TARGET\n"


@pytest.mark.parametrize("policy", ["auto-edit", "trust"])
def test_a_dot_git_file_and_the_git_folder_it_names_are_reviewed_under_every_policy(nvim, workspace, tmp_path,
                                                                                    policy):
    """A linked worktree's ``.git`` is a file naming its git folder: pointing it at a folder the agent
    filled (or writing that folder's ``config``) sets what git runs, like ``.git/config`` does."""
    setup(nvim, policy)
    pointer = workspace / ".git"
    pointer.write_text("gitdir: meta\n")
    meta = workspace / "meta"
    meta.mkdir()
    (meta / "config").write_text("[core]\n")
    shaped = workspace / "vendor" / "lib"  # a git folder no .git file above it names
    (shaped / "objects").mkdir(parents=True)
    (shaped / "HEAD").write_text("ref: refs/heads/main\n")
    plain = workspace / "plain.txt"
    out = start(nvim, tmp_path, [
        {"do": "write", "path": str(pointer), "content": "gitdir: evil\n"},
        {"do": "write", "path": str(meta / "config"), "content": FSMONITOR},
        {"do": "write", "path": str(shaped / "config"), "content": FSMONITOR},
        {"do": "write", "path": str(plain), "content": "fine\n"}])
    for shown in (pointer, meta / "config", shaped / "config"):
        kind, files = answer_next(nvim, "rejected")
        assert kind == "review" and files[0][0] == str(shown)
    *refused, wrote_plain = results(out)
    assert [r["ok"] for r in refused] == [False, False, False] and wrote_plain == {"ok": True}
    assert pointer.read_text() == "gitdir: meta\n" and (meta / "config").read_text() == "[core]\n"
    assert not (shaped / "config").exists() and plain.read_text() == "fine\n"


WINDOW_TEXT = """
local win = ...
vim.cmd('redraw')
local row, col = unpack(vim.api.nvim_win_get_position(win))
local rows, textoff = {}, vim.fn.getwininfo(win)[1].textoff  -- the fold column is no text
for r = 1, vim.api.nvim_win_get_height(win) do
  local cells = {}
  for c = textoff + 1, vim.api.nvim_win_get_width(win) do cells[#cells + 1] = vim.fn.screenstring(row + r, col + c) end
  rows[r] = table.concat(cells)
end
local marks = {}
for _, m in ipairs(vim.api.nvim_buf_get_extmarks(vim.api.nvim_win_get_buf(win), -1, 0, -1, {details = true})) do
  for _, chunk in ipairs(m[4].virt_text or {}) do marks[#marks + 1] = chunk[1] end
end
return {rows = rows, wrap = vim.wo[win].wrap, marks = marks}
"""
PROPOSAL_WIN = """
local r = require('acp_nvim.review').pending()[1]
return r and r.files and r.files[1] and r.files[1].wins and r.files[1].wins[2]
"""


def test_every_changed_character_of_a_review_is_on_screen_before_an_accept(nvim, workspace, tmp_path):
    """A command past column 199 of a window 40 columns wide, and characters that show as nothing
    (an Arabic letter mark, a no-break space), are seen in the review: it wraps and marks them."""
    nvim.command("set columns=80 lines=40")
    setup(nvim)
    target = workspace / "settings.py"
    target.write_text("debug = False\n")
    hidden = "debug = False" + " " * 190 + "; __import__('os').system('touch PWNED')"
    out = start(nvim, tmp_path, [{"do": "ask", "id": "e1", "kind": "edit", "title": "Edit settings.py",
                                  "diffs": [diff(target, "debug = False\n",
                                                 f"{hidden}\nname = 'a\u061cb'\nsep = 'x\u00a0y'\n")]}])
    win = wait_for(lambda: nvim.exec_lua(PROPOSAL_WIN), what="the review's proposal window", nvim=nvim)
    shown = nvim.exec_lua(WINDOW_TEXT, win)
    screen = "".join(shown["rows"])
    assert shown["wrap"] and "__import__('os').system('touch PWNED')" in screen, shown["rows"]
    assert "·" * 20 in screen  # the run of spaces is drawn, not blank
    assert "⟨U+061C⟩" in shown["marks"] and "⟨U+00A0⟩" in shown["marks"], shown["marks"]
    assert answer_next(nvim, "rejected")[0] == "review"
    assert results(out)[0]["option"] == "no" and target.read_text() == "debug = False\n"


LEFT_BAR = """
local r = require('acp_nvim.review').pending()[1]
local w = r and r.files and r.files[1] and r.files[1].wins and r.files[1].wins[1]
return w and vim.api.nvim_win_is_valid(w) and vim.wo[w].winbar or nil
"""


@pytest.mark.parametrize("policy", ["ask", "auto-edit"])
def test_a_review_names_the_file_a_link_leads_to_and_that_it_configures_execution(nvim, workspace, tmp_path,
                                                                                   policy):
    """"Edit docs/settings.ini" through a workspace link writes .git/config: the review says so."""
    setup(nvim, policy)
    (workspace / ".git").mkdir()
    config = workspace / ".git" / "config"
    config.write_text("[core]\n")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "settings.ini").symlink_to(config)
    out = start(nvim, tmp_path, [{"do": "ask", "id": "e1", "kind": "edit", "title": "Edit docs/settings.ini",
                                  "diffs": [diff("docs/settings.ini", "[core]\n", FSMONITOR)]}])
    bar = wait_for(lambda: nvim.exec_lua(LEFT_BAR), what="the review's winbar", nvim=nvim)
    assert "docs/settings.ini" in bar and "[link → writes .git/config]" in bar, bar
    assert "[configures code execution]" in bar, bar
    assert answer_next(nvim, "rejected")[0] == "review"
    assert results(out)[0]["option"] == "no" and config.read_text() == "[core]\n"


def test_a_write_still_in_review_when_the_user_cancels_answers_request_cancelled(nvim, workspace, tmp_path):
    setup(nvim)
    target = workspace / "a.txt"
    target.write_text("before\n")
    out = start(nvim, tmp_path, [{"do": "write", "path": str(target), "content": "after\n"}])
    wait_for(lambda: nvim.exec_lua(PENDING), what="the write's review")
    nvim.command("Ai cancel")
    (wrote,) = results(out)
    assert not wrote["ok"] and wrote["code"] == -32800, wrote  # never a refusal the user did not make
    assert target.read_text() == "before\n"
