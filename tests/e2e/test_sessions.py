"""Sessions that last, in real Neovim against the demo agent with saved sessions: the local
history, ``:Ai resume`` (picker, ``last``, an id) after quitting Neovim, ``:Ai fork``,
``:Ai close`` sending ``session/close``, ``:Ai delete``, and ``history = false``."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pynvim
import pytest

from conftest import ROOT, start_nvim
from helpers import NOTIFY, SELECT, buffer_text, chat, notes, wait_for
from helpers import session_state as state
from helpers.history import record_data

pytestmark = pytest.mark.timeout(120)

CAPTURE = NOTIFY + SELECT
SETUP = """
local dir, history, pythonpath = ...
require('acp_nvim').setup({ default_agent = 'saved', history = history, agents = { saved = {
  command = vim.g.python3_host_prog, args = { '-m', 'acp_nvim.demo_agent' },
  env = { ACP_DEMO_SESSIONS_DIR = dir, PYTHONPATH = pythonpath } } } })
"""


class Editors:
    """Neovims started one after the other on the same state folder and cwd (quit, start again)."""

    def __init__(self, workspace: Path, agent_dir: Path) -> None:
        self.workspace = workspace
        self.agent_dir = agent_dir
        self.running: list[pynvim.Nvim] = []

    def start(self, history: object = None) -> pynvim.Nvim:
        nvim = start_nvim(self.workspace)
        self.running.append(nvim)
        nvim.command("set columns=160 lines=50")
        nvim.exec_lua(CAPTURE)
        nvim.exec_lua(SETUP, str(self.agent_dir), history if history is not None else default_history(),
                      str(ROOT / "python"))
        return nvim

    def quit(self, nvim: pynvim.Nvim) -> None:
        nvim.command("silent! doautocmd VimLeavePre")
        nvim.close()
        self.running.remove(nvim)


def default_history() -> dict:
    return {"max_sessions": 200, "max_bytes": 2 * 1024 * 1024}


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


def idle(nvim: pynvim.Nvim, key: str) -> None:
    wait_for(lambda: state(nvim, key).get("state") == "idle", timeout=30, what=f"{key} idle")


def wait_note(nvim: pynvim.Nvim, text: str) -> str:
    return wait_for(lambda: next((n for n in notes(nvim) if text in n), None), timeout=30, what=repr(text))


def log_text(nvim: pynvim.Nvim, key: str) -> str:
    nvim.command(f"Ai log {key}")
    return wait_for(lambda: buffer_text(nvim, f"acp://log/{key}") or None, timeout=10, what="the log")


def history_files(nvim_env: dict[str, str]) -> list[Path]:
    return list(Path(nvim_env["XDG_STATE_HOME"], "nvim", "acp_nvim", "history").rglob("*.json"))


def first_turn(editors: Editors, prompt: str = "hello from yesterday") -> str:
    """A prompt in a first Neovim, which then quits; the agent's session id."""
    nvim = editors.start()
    nvim.command(f"Ai send {prompt}")
    wait_for(lambda: f"You said: {prompt}" in chat(nvim, "saved/1"), timeout=30, what="the reply")
    idle(nvim, "saved/1")
    ids = [data["id"] for p in editors.agent_dir.glob("*.json")
           if ["user", prompt] in (data := json.loads(p.read_text()))["history"]]
    record = wait_for(lambda: _record_of(editors, ids[0]), timeout=10, what="the history record")
    assert record["first_prompt"] == prompt
    editors.quit(nvim)
    return ids[0]


def _record_of(editors: Editors, session_id: str) -> dict | None:
    for path in Path(os.environ["XDG_STATE_HOME"], "nvim", "acp_nvim", "history").rglob("*.json"):
        data = record_data(path)
        if data["session_id"] == session_id and data["cwd"] == str(editors.workspace) and data["entries"]:
            return data
    return None


def test_resume_last_after_quitting_continues_the_same_session(editors):
    session_id = first_turn(editors)
    nvim = editors.start()
    nvim.command("Ai resume last")
    idle(nvim, "saved/1")
    text = wait_for(lambda: (t := chat(nvim, "saved/1")) and "new prompts continue it" in t and t,
                    timeout=30, what="the resumed chat")
    assert text.count("You said: hello from yesterday") == 1
    assert "exited" not in text
    assert text.count("## You\nhello from yesterday") == 1
    assert "earlier conversation" in text
    log = log_text(nvim, "saved/1")
    assert "request session/resume" in log and session_id in log and "session/new" not in log
    nvim.command("Ai send recall")
    wait_for(lambda: "Your first prompt was: hello from yesterday" in chat(nvim, "saved/1"), timeout=30,
             what="the agent to remember")
    assert chat(nvim, "saved/1").count("## You\nhello from yesterday") == 1


def test_resume_picker_lists_agent_pages_and_history_then_by_id(editors):
    first = first_turn(editors, "first one")
    second = first_turn(editors, "second one")
    third = first_turn(editors, "third one")  # three sessions: the demo lists two per page
    nvim = editors.start()
    nvim.exec_lua("_G.choose = {...}", "second one")
    nvim.command("Ai resume")
    picker = wait_for(lambda: nvim.exec_lua("return _G.picked[1]"), timeout=30, what="the picker")
    assert picker["prompt"] == "resume a past session"
    assert len(picker["items"]) == 3 and all(item.startswith("saved · ") for item in picker["items"])
    assert "third one" in picker["items"][0]
    wait_for(lambda: "new prompts continue it" in chat(nvim, "saved/1"), timeout=30, what="resumed")
    assert second in log_text(nvim, "saved/1")
    nvim.command(f"Ai resume {first}")
    wait_for(lambda: "new prompts continue it" in chat(nvim, "saved/2"), timeout=30, what="resumed by id")
    assert "## You\nfirst one" in chat(nvim, "saved/2")
    nvim.command("Ai resume no-such-session")
    wait_note(nvim, "no past session 'no-such-session'")
    assert third


def test_a_session_the_agent_forgot_reads_read_only_in_the_picker_and_rows_count_turns(editors):
    kept = first_turn(editors, "still known")
    forgotten = first_turn(editors, "forgotten by the agent")
    for path in editors.agent_dir.glob("*.json"):
        if json.loads(path.read_text())["id"] == forgotten:
            path.unlink()
    nvim = editors.start()
    nvim.exec_lua("_G.choose = {...}", "no row has this")
    nvim.command("Ai resume")
    picker = wait_for(lambda: nvim.exec_lua("return _G.picked[1]"), timeout=30, what="the picker")
    rows = {("forgotten" if "forgotten by" in item else "kept"): item for item in picker["items"]}
    assert rows["forgotten"].endswith("· read-only: the agent no longer lists it"), rows
    assert " · 1 turn · " in rows["kept"] and "read-only" not in rows["kept"], rows
    assert kept != forgotten


def test_an_agent_session_without_local_history_is_loaded_and_shown_once(editors, nvim_env):
    session_id = first_turn(editors, "only the agent keeps me")
    for path in history_files(nvim_env):
        if record_data(path)["session_id"] == session_id:
            path.unlink()
    nvim = editors.start()
    nvim.command(f"Ai resume {session_id}")
    text = wait_for(lambda: (t := chat(nvim, "saved/1")) and "new prompts continue it" in t and t,
                    timeout=30, what="the reloaded chat")
    assert text.count("## You\nonly the agent keeps me") == 1  # the agent's replay, shown once
    assert "request session/load" in log_text(nvim, "saved/1")
    nvim.command("Ai send recall")
    text = wait_for(lambda: (t := chat(nvim, "saved/1")) and "Your first prompt was: only the agent keeps me" in t
                    and t, timeout=30, what="the agent to remember")
    assert text.index("earlier conversation") < text.index("only the agent") < text.index("end of the earlier")
    assert text.index("end of the earlier") < text.index("## You\nrecall")


def test_fork_opens_a_new_chat_on_a_forked_session_and_close_sends_session_close(editors):
    nvim = editors.start()
    nvim.command("Ai send before the fork")
    wait_for(lambda: "You said: before the fork" in chat(nvim, "saved/1"), timeout=30, what="the reply")
    idle(nvim, "saved/1")
    nvim.command("Ai fork")
    idle(nvim, "saved/2")
    wait_for(lambda: "forked demo-" in chat(nvim, "saved/2"), timeout=30, what="the fork notice")
    assert chat(nvim, "saved/2").count("## You\nbefore the fork") == 1
    nvim.command("Ai send recall")
    wait_for(lambda: "Your first prompt was: before the fork" in chat(nvim, "saved/2"), timeout=30,
             what="the fork to know the conversation")
    assert "request session/fork" in log_text(nvim, "saved/2")
    log_text(nvim, "saved/2")  # the log buffer stays open, and follows the session to its end
    nvim.command("Ai close")
    wait_for(lambda: "response session/close" in buffer_text(nvim, "acp://log/saved/2"), timeout=30,
             what="session/close answered before the agent stops")


def test_delete_removes_the_local_record(editors, nvim_env):
    session_id = first_turn(editors, "delete me")
    nvim = editors.start()
    nvim.command(f"Ai delete {session_id}")
    note = wait_note(nvim, f"deleted session {session_id}")
    assert "local history" in note and "offers no session/delete" in note
    assert not [p for p in history_files(nvim_env) if record_data(p)["session_id"] == session_id]


def test_history_false_keeps_nothing(editors, nvim_env):
    nvim = editors.start(history=False)
    nvim.command("Ai send keep nothing of me")
    wait_for(lambda: "You said: keep nothing of me" in chat(nvim, "saved/1"), timeout=30, what="the reply")
    idle(nvim, "saved/1")
    assert not [p for p in history_files(nvim_env) if "keep nothing of me" in p.read_text()]


def test_a_fork_is_refused_where_the_agent_offers_none(nvim):
    nvim.exec_lua(CAPTURE)
    nvim.command("Ai send hi")
    idle(nvim, "demo/1")
    nvim.command("Ai fork")
    wait_note(nvim, "does not offer session/fork")


def test_workspace_roots_go_as_additional_directories_where_offered(editors, tmp_path):
    nvim = editors.start()
    extra = tmp_path / "extra"
    extra.mkdir()
    nvim.exec_lua("local c = require('acp_nvim').config; c.workspace_roots = { ... }", str(extra))
    nvim.command("Ai send hello roots")
    idle(nvim, "saved/1")
    log = log_text(nvim, "saved/1")
    assert f'"additionalDirectories": [\n        "{extra}"' in log or f'"additionalDirectories":["{extra}"]' in log


def test_a_session_the_agent_lost_is_shown_read_only(editors):
    session_id = first_turn(editors, "the agent forgot me")
    for path in editors.agent_dir.glob("*.json"):
        path.unlink()
    nvim = editors.start()
    nvim.command("Ai resume last")
    text = wait_for(lambda: (t := chat(nvim, "saved/1")) and "read-only" in t and t, timeout=30,
                    what="the read-only note")
    assert text.count("## You\nthe agent forgot me") == 1
    assert f"cannot continue session {session_id}" in text and "session/resume" in text and "session/load" in text
    nvim.command("Ai send are you there")  # the read-only session is closed: a new one takes the prompt
    wait_for(lambda: "You said: are you there" in chat(nvim, "saved/2"), timeout=30, what="a new session")
    assert "## You\nare you there" not in chat(nvim, "saved/1")


def test_a_long_local_record_opens_on_its_newest_turns_and_the_older_follow_as_the_user_scrolls_up(editors, nvim_env):
    from acp_nvim.core.history.record import Entry, HistorySettings, SessionRecord
    from acp_nvim.core.history.store import HistoryStore
    from acp_nvim.nvim.sessions.history_commands import NEWEST_FIRST

    turns = NEWEST_FIRST  # four entries a turn: the newest quarter is read first, the rest after
    entries = [entry for n in range(turns) for entry in (
        Entry("user", f"## You\nquestion {n:04d}"), Entry("heading", "## demo"), Entry("agent", f"answer {n:04d}"),
        Entry("turn_end", "── turn ended: end_turn ──"))]
    store = HistoryStore(str(Path(nvim_env["XDG_STATE_HOME"], "nvim")), HistorySettings(max_bytes=1 << 30))
    record = SessionRecord("saved", str(editors.workspace), "long-ago-1", 1.0, 2.0, "long", "question 0000", entries)
    store.save(record, lambda text: text)
    nvim = editors.start({"max_sessions": 200, "max_bytes": 1 << 30})
    nvim.command("Ai resume long-ago-1")
    wait_for(lambda: f"answer {turns - 1:04d}" in chat(nvim, "saved/1"), timeout=30, what="the newest turn")
    assert "answer 0000" not in chat(nvim, "saved/1"), "the oldest turns wait until the user scrolls up"
    win = nvim.funcs.bufwinid("acp://chat/saved/1")
    while "question 0000" not in (text := chat(nvim, "saved/1")):
        nvim.api.set_current_win(win)
        nvim.command("normal! gg")
        shown = len(text)
        wait_for(lambda n=shown: len(chat(nvim, "saved/1")) > n, timeout=10, what="older turns")
    answers = [line for line in chat(nvim, "saved/1").split("\n") if line.startswith("answer ")]
    assert answers == [f"answer {n:04d}" for n in range(turns)], "every turn, in order, once"
