"""FileService and Reconciler rules against a stateful fake editor (Neovim tests use the real one)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp import RequestError

from acp_nvim.core.files.changes import ChangeLog
from acp_nvim.core.files.opener import Snapshot, file_id_of, stamp_of
from acp_nvim.core.files.paths import PathPolicy
from acp_nvim.core.files.side import FileSide
from acp_nvim.core.log.ring import LogRing
from acp_nvim.core.port import BufferState, BufferWrite, ThreeWay
from acp_nvim.core.questions import Questions, Ticket
from acp_nvim.core.transcript.tool_calls import ToolCallState
from helpers import async_wait_for

pytestmark = pytest.mark.timeout(10)


class Buffers:
    """Loaded buffers as Neovim keeps them: text, changedtick, modified, and the disk state each one
    knows; the service writes the disk (``finish_buffer_write`` marks the buffer saved)."""

    def __init__(self, outcome: str = "mine") -> None:
        self.bufs: dict[str, list] = {}
        self.known: dict[str, tuple[int, int, int, int] | None] = {}
        self.sources: dict[str, tuple[int, int] | None] = {}
        self.notes: list[tuple[str, str]] = []
        self.views: list[ThreeWay] = []
        self.outcome = outcome
        self.reloads: list[str] = []
        self.finished: list[str] = []

    def load(self, path: Path) -> None:
        self.bufs[str(path)] = [path.read_text(), 1, False]
        self.known[str(path)] = stamp_of(path.stat())
        self.sources[str(path)] = file_id_of(path.stat())

    def type(self, path: Path, text: str) -> None:
        buf = self.bufs[str(path)]
        buf[0], buf[1], buf[2] = text, buf[1] + 1, True

    def save(self, path: Path) -> None:
        """The user's own ``:w``."""
        path.write_text(self.bufs[str(path)][0])
        self.bufs[str(path)][2] = False
        self.known[str(path)] = stamp_of(path.stat())
        self.sources[str(path)] = file_id_of(path.stat())

    async def read_buffer(self, path: str) -> BufferState | None:
        buf = self.bufs.get(path)
        return None if buf is None else BufferState(path, buf[0], buf[1], buf[2], self.known.get(path),
                                                    self.sources.get(path))

    def _adopt(self, path: str, stamp) -> None:
        """Neovim's sync: the buffer holds the text of the file ``stamp`` names, if it is still there."""
        now = Path(path).stat() if Path(path).exists() else None
        if now is not None and stamp and stamp[0] == stamp_of(now)[0]:
            self.sources[path] = file_id_of(now)

    async def apply_to_buffer(self, path, content, expected_tick, with_before=False, disk=None) -> BufferWrite:
        buf = self.bufs.get(path)
        if buf is None:
            return BufferWrite("not_loaded")
        if buf[2] and buf[1] != expected_tick:
            return BufferWrite("conflict", buf[1], buf[0])
        if self.known.get(path) != disk:
            return BufferWrite("disk_changed", buf[1], buf[0])
        before = buf[0]
        buf[0], buf[1], buf[2] = content, buf[1] + 1, True
        return BufferWrite("applied", buf[1], before)

    async def finish_buffer_write(self, path: str, tick: int, stamp) -> str:
        buf = self.bufs[path]
        self.finished.append("saved" if stamp else "failed")
        if stamp is None:
            return "kept"
        buf[2] = buf[1] != tick
        self.known[path] = stamp
        self._adopt(path, stamp)
        return "saved"

    async def reload_buffer(self, path: str, content: str, stamp=None) -> str:
        buf = self.bufs.get(path)
        if buf is None:
            return "not_loaded"
        if buf[2]:
            return "modified"
        self.reloads.append(path)
        buf[0], buf[1] = content, buf[1] + 1
        self.known[path] = stamp
        self._adopt(path, stamp)
        return "reloaded"

    async def sync_buffer(self, path: str, stamp=None) -> None:
        self.known[path] = stamp or stamp_of(Path(path).stat())
        self._adopt(path, self.known[path])

    async def loaded_files(self):
        return [(p, b[2], b[1]) for p, b in self.bufs.items()]

    def show_three_way(self, ticket: Ticket, request: ThreeWay) -> None:
        self.views.append(request)
        if self.outcome == "agent":  # the view puts the agent's text in; a write is then saved by the service
            self.bufs[request.path][:] = [request.agent, 99, request.purpose == "write"]
        ticket.answer(self.outcome)

    def notify(self, message: str, level: str = "info") -> None:
        self.notes.append((message, level))


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (tmp_path / "outside.txt").write_text("secret\n")
    return root


class Files:
    """A session's file side as the session composes it (``FileSide.create``), with shortcuts."""

    def __init__(self, ws, editor, notices: list[tuple[str, str]], log: LogRing) -> None:
        self.side = FileSide.create(editor, PathPolicy([str(ws)]), questions=Questions(), owner="s", log=log,
                                    notice=lambda text, kind: notices.append((text, kind)))
        self.service, self.reconciler = self.side.service, self.side.reconciler
        self.ledger = self.side.ledger
        self.changes = self.service.changes
        self.read, self.write, self.begin_turn = self.service.read, self.service.write, self.side.begin_turn
        self.observe_tool_call, self.end_turn = self.reconciler.observe, self.reconciler.end_turn


def service(ws, editor) -> tuple[Files, list[tuple[str, str]], LogRing]:
    notices: list[tuple[str, str]] = []
    log = LogRing()
    return Files(ws, editor, notices, log), notices, log


async def settle():
    """Wait until every background task (snapshots, reconciles, three-way views) has finished."""
    me = asyncio.current_task()
    await async_wait_for(lambda: all(task is me or task.done() for task in asyncio.all_tasks()),
                         what="the background tasks")


async def test_read_serves_unsaved_buffer_text_and_slices(ws):
    path = ws / "a.txt"
    path.write_text("one\ntwo\nthree\n")
    editor = Buffers()
    editor.load(path)
    editor.type(path, "one\nTWO unsaved\nthree\n")
    files, _, _ = service(ws, editor)
    assert (await files.read(str(path), None, None)).content == "one\nTWO unsaved\nthree\n"
    assert (await files.read(str(path), 2, 1)).content == "TWO unsaved\n"
    assert files.ledger.last_read(str(path)).tick == 2


async def test_read_from_disk_when_not_loaded(ws):
    (ws / "d.txt").write_text("disk\n")
    files, _, _ = service(ws, Buffers())
    assert (await files.read(str(ws / "d.txt"), None, None)).content == "disk\n"
    with pytest.raises(RequestError, match="no such file") as info:
        await files.read(str(ws / "missing.txt"), None, None)
    assert info.value.code == -32002


async def test_refusals_are_logged_shown_and_notified(ws):
    editor = Buffers()
    files, notices, log = service(ws, editor)
    for path in ("relative.txt", str(ws / ".." / "outside.txt"), "/etc/passwd"):
        with pytest.raises(RequestError, match=r"acp\.nvim refused"):
            await files.read(path, None, None)
        with pytest.raises(RequestError, match=r"acp\.nvim refused"):
            await files.write(path, "pwned\n")
    assert len(editor.notes) == 6 and all(level == "warn" for _, level in editor.notes)
    assert any("refused to write /etc/passwd" in text for text, _ in notices)
    assert sum(1 for e in log.entries() if e.kind == "fs" and "refused" in e.summary) == 6
    assert (ws.parent / "outside.txt").read_text() == "secret\n"


async def test_write_to_clean_buffer_records_the_change(ws):
    path = ws / "c.txt"
    path.write_text("old\n")
    editor = Buffers()
    editor.load(path)
    files, _, _ = service(ws, editor)
    files.changes.begin_turn()
    await files.write(str(path), "new\n")
    assert path.read_text() == "new\n" and editor.bufs[str(path)][0] == "new\n"
    change = files.changes.current.files[str(path)]
    assert (change.before, change.after, change.via) == ("old\n", "new\n", "fs")


async def test_write_never_overwrites_unsaved_changes_the_agent_did_not_read(ws):
    path = ws / "w.txt"
    path.write_text("base\n")
    editor = Buffers(outcome="mine")
    editor.load(path)
    files, notices, _ = service(ws, editor)
    await files.read(str(path), None, None)
    editor.type(path, "base\nyours\n")
    with pytest.raises(RequestError, match="kept their unsaved changes"):
        await files.write(str(path), "base\nagent\n")
    assert editor.bufs[str(path)][0] == "base\nyours\n" and path.read_text() == "base\n"
    view = editor.views[0]
    assert (view.base, view.agent, view.purpose) == ("base\n", "base\nagent\n", "write")
    assert any("three-way" in text for text, _ in notices)


async def test_write_over_unsaved_changes_the_agent_read_goes_through(ws):
    path = ws / "s.txt"
    path.write_text("base\n")
    editor = Buffers()
    editor.load(path)
    editor.type(path, "base\nyours\n")
    files, _, _ = service(ws, editor)
    await files.read(str(path), None, None)
    await files.write(str(path), "base\nyours\nagent\n")
    assert path.read_text() == "base\nyours\nagent\n" and not editor.views


async def test_taking_the_agents_text_in_the_three_way_view_answers_success(ws):
    path = ws / "t.txt"
    path.write_text("base\n")
    editor = Buffers(outcome="agent")
    editor.load(path)
    editor.type(path, "yours\n")
    files, _, _ = service(ws, editor)
    files.changes.begin_turn()
    await files.write(str(path), "agent\n")
    assert files.changes.current.files[str(path)].before == "yours\n"


class Gate:
    """A write gate that upper-cases the agent's writes and lets everything else pass."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    async def admit(self, path, content, origin):
        self.seen.append((origin, str(path)))
        return content.upper() if origin == "agent" else content


async def test_new_file_with_parent_folders_and_the_write_gate(ws):
    editor = Buffers()
    files, _, _ = service(ws, editor)
    gate = files.service.gate = Gate()
    files.changes.begin_turn()
    await files.write(str(ws / "x" / "y" / "new.txt"), "created\n")
    assert (ws / "x" / "y" / "new.txt").read_text() == "CREATED\n"
    change = files.changes.current.files[str(ws / "x" / "y" / "new.txt")]
    assert change.before is None and change.known
    await files.write(str(ws / "plain.txt"), "x\n", origin="correction")
    assert (ws / "plain.txt").read_text() == "x\n"
    assert await files.service.revert(str(ws / "plain.txt"), "back\n") == "reverted"
    assert (ws / "plain.txt").read_text() == "back\n"
    assert [origin for origin, _ in gate.seen] == ["agent", "correction", "revert"]


def tool_call(call_id: str, path: Path, status: str, old: str | None = None, new: str | None = None):
    state = ToolCallState(call_id, kind="edit", status=status)
    state.locations = [(str(path), None)]
    if new is not None:
        from acp.helpers import tool_diff_content

        state.content = [tool_diff_content(str(path), new, old)]
    return state


async def test_disk_write_under_clean_buffer_reloads_quietly(ws):
    path = ws / "r.txt"
    path.write_text("before\n")
    editor = Buffers()
    editor.load(path)
    files, notices, _ = service(ws, editor)
    await files.begin_turn()
    files.observe_tool_call(tool_call("t1", path, "pending"))
    await settle()
    path.write_text("after\n")
    files.observe_tool_call(tool_call("t1", path, "completed"))
    await settle()
    assert editor.reloads == [str(path)] and editor.bufs[str(path)][0] == "after\n"
    assert not notices and not editor.views
    change = files.changes.current.files[str(path)]
    assert (change.before, change.after, change.via) == ("before\n", "after\n", "disk")


async def test_disk_write_under_dirty_buffer_opens_three_way_never_reloads(ws):
    path = ws / "m.txt"
    path.write_text("before\n")
    editor = Buffers(outcome="mine")
    editor.load(path)
    editor.type(path, "before\nunsaved\n")
    files, notices, _ = service(ws, editor)
    await files.begin_turn()
    path.write_text("agent\n")
    files.observe_tool_call(tool_call("t1", path, "completed"))
    await settle()
    assert editor.bufs[str(path)][0] == "before\nunsaved\n" and not editor.reloads
    view = editor.views[0]
    assert (view.base, view.agent, view.purpose) == ("before\n", "agent\n", "disk")
    assert any("unsaved changes" in text and "three-way" in text for text, _ in notices)
    assert files.changes.current.files[str(path)].before == "before\n"


async def test_turn_end_finds_disk_changes_without_tool_calls(ws):
    path = ws / "e.txt"
    path.write_text("v1\n")
    editor = Buffers()
    editor.load(path)
    files, _, _ = service(ws, editor)
    await files.begin_turn()
    path.write_text("v2 longer\n")
    files.end_turn()
    await settle()
    assert editor.bufs[str(path)][0] == "v2 longer\n"
    assert files.changes.latest().files[str(path)].before == "v1\n"


async def test_before_from_a_whole_file_diff_when_the_snapshot_came_too_late(ws):
    path = ws / "late.txt"
    path.write_text("agent text\n")  # the agent wrote before the client could snapshot
    files, _, _ = service(ws, Buffers())
    await files.begin_turn()
    files.observe_tool_call(tool_call("t1", path, "completed", old="old text\n", new="agent text\n"))
    await settle()
    change = files.changes.current.files[str(path)]
    assert (change.before, change.after) == ("old text\n", "agent text\n")


async def test_a_permission_answer_waits_for_the_snapshot_of_the_files_the_request_names(ws):
    from acp.helpers import tool_diff_content
    from acp.schema import ToolCallLocation, ToolCallUpdate

    path = ws / "asked.txt"
    path.write_text("base\n")
    files, _, _ = service(ws, Buffers())
    await files.begin_turn()
    request = ToolCallUpdate(tool_call_id="t1", kind="edit", locations=[ToolCallLocation(path=str(path))],
                             content=[tool_diff_content(str(path), "ok\n", "base\n")])

    async def answer() -> str:
        return "allowed"  # at once: the snapshot, started with the request, must still come first

    assert await files.reconciler.around_permission(request, answer()) == "allowed"
    assert files.changes.current.baseline(str(path)) == Snapshot(True, "base\n", stamp_of(path.stat()))
    path.write_text("other\n")  # once allowed, on disk, and the call is never reported again
    files.end_turn()
    await settle()
    change = files.changes.current.files[str(path)]
    assert (change.before, change.after, change.via) == ("base\n", "other\n", "disk")


async def test_warns_once_when_the_agent_works_on_a_file_with_unsaved_changes(ws):
    path = ws / "u.txt"
    path.write_text("same\n")
    editor = Buffers()
    editor.load(path)
    editor.type(path, "same\nunsaved\n")
    files, notices, _ = service(ws, editor)
    await files.begin_turn()
    for call in ("t1", "t2"):
        files.observe_tool_call(tool_call(call, path, "completed"))
        await settle()
    warnings = [text for text, _ in notices if "does not see them" in text]
    assert len(warnings) == 1 and str(path) in warnings[0]
    assert not editor.views, "the disk did not change: nothing to merge"


def test_changeset_keeps_the_first_before():

    log = ChangeLog()
    turn = log.begin_turn()
    turn.note_baseline("/p", Snapshot(True, "v0"))
    turn.record("/p", "v1", "disk")
    turn.record("/p", "v2", "fs", Snapshot(True, "v1"))
    assert (turn.files["/p"].before, turn.files["/p"].after) == ("v0", "v2")
    turn.record("/q", "same", "disk", Snapshot(True, "same"))
    assert "/q" not in turn.files
    turn.record("/r", "x", "disk", Snapshot(True, None))
    assert not turn.files["/r"].known
    log.begin_turn()
    assert log.latest() is turn and log.current.turn == 2


async def test_a_file_the_user_saved_during_the_turn_is_not_the_agents_change(ws):
    path = ws / "saved.txt"
    path.write_text("v1\n")
    editor = Buffers()
    editor.load(path)
    files, _, _ = service(ws, editor)
    await files.begin_turn()
    editor.bufs[str(path)][0] = "v2 saved by the user\n"
    path.write_text("v2 saved by the user\n")
    files.end_turn()
    await settle()
    assert files.changes.latest() is None and not editor.views
