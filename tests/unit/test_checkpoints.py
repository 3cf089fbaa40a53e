"""Checkpoints without Neovim: the store (hashes, privacy, the bound), the manifests, the scans, the
plan of a rewind, and the recorder and restore on a real file side over a stateful fake editor."""

from __future__ import annotations

import os
import stat
import zlib
from pathlib import Path

import pytest
from acp.schema import ToolCallUpdate
from test_files_service import Buffers, service, settle, tool_call

from acp_nvim.core.checkpoints.errors import CheckpointCorrupt, CheckpointError, CheckpointGone
from acp_nvim.core.checkpoints.model import (
    ABSENT,
    ABSENT_REF,
    DONE,
    KEPT,
    TOO_LARGE,
    UNDONE,
    UNKNOWN,
    Checkpoint,
    FileEntry,
    Ref,
    refs_of,
)
from acp_nvim.core.checkpoints.plan import choose, fork_point, plan
from acp_nvim.core.checkpoints.recorder import COMMAND, Recorder
from acp_nvim.core.checkpoints.restore import EDITED, REMOVED, RESTORED, SAME, SKIPPED, UNSAVED, Restorer
from acp_nvim.core.checkpoints.scan import compare, scan
from acp_nvim.core.checkpoints.settings import CheckpointSettings
from acp_nvim.core.checkpoints.store import HEADER, CheckpointStore, digest_of, manifest_name
from acp_nvim.core.config import parse_settings
from acp_nvim.core.errors import ConfigError
from acp_nvim.core.transcript.conversation import Conversation
from acp_nvim.core.transcript.tool_calls import ToolCallState

pytestmark = pytest.mark.timeout(20)


# -- the store -------------------------------------------------------------------------

def _rewrite_record(store: CheckpointStore, digest: str, packed: bytes) -> None:
    """Put ``packed`` in place of ``digest``'s record (the header says its new length)."""
    path, offset, length = store.location(digest)
    data = path.read_bytes()
    header = f"{digest} {len(packed):016x}\n".encode()
    path.write_bytes(data[: offset - HEADER] + header + packed + data[offset + length:])


def test_contents_are_kept_once_in_private_packs_and_checked_when_read(tmp_path):
    store = CheckpointStore(str(tmp_path / "state"), "/work/project")
    digest = store.put(b"hello\n")
    assert store.put(b"hello\n") == digest == digest_of(b"hello\n")
    with store.batch() as batch:
        many = [batch.put(f"content {n}\n".encode()) for n in range(50)]
        assert batch.put(b"hello\n") == digest
    assert [store.get(d) for d in many[:2]] == [b"content 0\n", b"content 1\n"]
    packs = sorted(store.packs.iterdir())
    assert len(packs) == 2  # one per batch that held something new, not one per content
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in packs)
    for folder in (store.folder.parent, store.folder, store.packs):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    again = CheckpointStore(str(tmp_path / "state"), "/work/project")  # another Neovim finds them
    assert again.get(many[49]) == b"content 49\n" and again.known(digest)
    _rewrite_record(store, digest, zlib.compress(b"tampered\n"))
    with pytest.raises(CheckpointCorrupt, match="hash differs"):
        CheckpointStore(str(tmp_path / "state"), "/work/project").get(digest)
    _rewrite_record(store, digest, b"not zlib")
    with pytest.raises(CheckpointCorrupt, match="corrupt"):
        CheckpointStore(str(tmp_path / "state"), "/work/project").get(digest)
    store.location(digest)[0].unlink()
    with pytest.raises(CheckpointGone, match="no longer in the checkpoint store"):
        store.get(digest)
    with pytest.raises(CheckpointCorrupt, match="not a content digest"):
        store.get("../../etc/passwd")


def test_each_working_directory_has_its_own_store(tmp_path):
    one, two = CheckpointStore(str(tmp_path), "/a/project"), CheckpointStore(str(tmp_path), "/b/project")
    assert one.folder != two.folder and one.folder.parent == two.folder.parent


def _fsyncs(monkeypatch) -> list[Path]:
    """The files and folders ``os.fsync`` is called on from now on (it still syncs them)."""
    synced: list[Path] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(Path(os.readlink(f"/proc/self/fd/{fd}")))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return synced


def test_a_turns_files_are_synced_with_their_folders_before_a_rewind_relies_on_them(tmp_path, monkeypatch):
    store = CheckpointStore(str(tmp_path), "/p")
    synced = _fsyncs(monkeypatch)
    with store.batch() as batch:
        batch.put(b"before the turn\n")
    _manifest(store, "00000000000000000001-s-checkpoint-1.json", [b"before the turn\n"])
    _manifest(store, "00000000000000000001-s-checkpoint-1.json", [b"before the turn\n"])  # written again
    assert synced == []  # the turn does not wait for the disk
    pack = next(store.packs.iterdir())
    assert store.sync() == 2
    assert synced == [store.manifests / "00000000000000000001-s-checkpoint-1.json", pack,
                      store.manifests, store.packs]  # each file, then the folders that name them
    synced.clear()
    assert store.sync() == 0 and synced == []
    store.put(b"kept for an undo\n", durable=True)  # durable at once: the file, then its folder
    assert synced[-1] == store.packs and len(synced) == 2
    synced.clear()
    packs = set(store.packs.iterdir())
    with store.batch() as batch:
        batch.put(b"pruned before the sync\n")
    (set(store.packs.iterdir()) - packs).pop().unlink()
    assert store.sync() == 0 and synced == []  # gone meanwhile: nothing to sync, no error


def _age(store: CheckpointStore) -> None:
    """Every pack as written long ago (past the pruning's grace)."""
    for pack in store.packs.iterdir():
        os.utime(pack, (1.0, 1.0))


def _manifest(store: CheckpointStore, name: str, contents: list[bytes]) -> None:
    checkpoint = Checkpoint(1, "p", 0, 1, state=DONE, name=name)
    for i, data in enumerate(contents):
        checkpoint.files[f"/f{i}"] = FileEntry(f"/f{i}", Ref(KEPT, store.put(data), len(data)), ABSENT_REF)
    store.write_manifest(name, checkpoint.to_json("s"))


def test_pruning_keeps_the_store_within_its_bound_oldest_first(tmp_path):
    store = CheckpointStore(str(tmp_path), "/p")
    noise = [os.urandom(3000) for _ in range(5)]  # random: zlib cannot shrink it
    names = [manifest_name("s", f"turn-{i}", now_ns=i + 1) for i in range(3)]
    for name, contents in zip(names, [[noise[0], noise[1]], [noise[2], noise[3]], [noise[4], noise[1]]],
                              strict=True):
        _manifest(store, name, contents)
    _age(store)  # every content is past its grace
    assert store.prune(10**9) == [] and store.size() > 15000
    assert store.prune(14000) == [names[0]]
    assert store.size() <= 14000 and store.manifest_names() == names[1:]
    assert store.get(digest_of(noise[1])) == noise[1]  # still named by the newest manifest
    with pytest.raises(CheckpointGone):
        store.get(digest_of(noise[0]))
    assert store.prune(4096) == names[1:] and store.size() == 0


def test_pruning_spares_fresh_contents_no_manifest_names_yet(tmp_path):
    store = CheckpointStore(str(tmp_path), "/p")
    fresh = store.put(os.urandom(5000))
    assert store.prune(4096) == []
    assert store.has(fresh)
    _age(store)
    assert store.prune(4096) == [] and not store.has(fresh)


def test_a_pack_mostly_dead_is_written_again_with_its_live_contents(tmp_path):
    store = CheckpointStore(str(tmp_path), "/p")
    with store.batch() as batch:
        kept, *gone = [batch.put(os.urandom(2000)) for _ in range(4)]
    old = Checkpoint(1, "p", 0, 1, state=DONE, name=manifest_name("s", "turn-1", now_ns=1))
    for i, digest in enumerate([kept, *gone]):
        old.files[f"/f{i}"] = FileEntry(f"/f{i}", Ref(KEPT, digest, 2000), ABSENT_REF)
    store.write_manifest(old.name, old.to_json("s"))
    new = Checkpoint(2, "p", 0, 2, state=DONE, name=manifest_name("s", "turn-2", now_ns=2))
    new.files["/f0"] = FileEntry("/f0", Ref(KEPT, kept, 2000), ABSENT_REF)
    store.write_manifest(new.name, new.to_json("s"))
    _age(store)
    assert store.prune(4000) == [old.name]
    assert store.size() <= 4000 and len(list(store.packs.iterdir())) == 1
    assert len(store.get(kept)) == 2000 and not store.has(gone[0])


def test_manifests_name_their_contents_and_bad_ones_are_refused(tmp_path):
    checkpoint = Checkpoint(3, "fix it", 1.0, 7, "sid", "m1", "m9", state=DONE, name="x.json")
    digest = "a" * 64
    checkpoint.files["/w/a"] = FileEntry("/w/a", Ref(KEPT, digest, 3), Ref(TOO_LARGE, size=10**9), "disk", True)
    checkpoint.pending = {"b" * 64}
    assert refs_of(checkpoint.to_json("s")) == {digest, "b" * 64}
    for bad in ("{", '{"format": 99}', '{"format": 1, "files": [{"path": "rel"}]}',
                '{"format": 1, "files": [{"path": "/a", "before": ["kept", "../x", 1]}]}',
                '{"format": 1, "pending": ["nope"]}'):
        with pytest.raises(CheckpointCorrupt):
            refs_of(bad)
    store = CheckpointStore(str(tmp_path), "/p")
    with pytest.raises(CheckpointError, match="not a checkpoint name"):
        store.write_manifest("../escape.json", "{}")


# -- scans ----------------------------------------------------------------------------

def test_a_scan_sees_what_changed_and_never_follows_a_symlink(tmp_path):
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref\n")
    (root / "src" / "a.py").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_text("s\n")
    (root / "link").symlink_to(tmp_path / "outside")
    before = scan([root], 100)
    assert set(before.files) == {str(root / "src" / "a.py"), str(root / "b.txt")} and not before.cut
    (root / "b.txt").write_text("b changed\n")
    (root / "src" / "a.py").unlink()
    (root / "new.txt").write_text("n\n")
    changes = compare(before, scan([root], 100))
    assert (changes.changed, changes.created, changes.removed) == (
        [str(root / "b.txt")], [str(root / "new.txt")], [str(root / "src" / "a.py")])
    cut = scan([root], 1)
    assert cut.cut and list(cut.files) == [str(root / "b.txt")]  # breadth first: the top folder's files first


# -- the plan ---------------------------------------------------------------------------

def _cp(turn: int, files: dict[str, tuple[Ref, Ref]], *, message: str | None = None) -> Checkpoint:
    checkpoint = Checkpoint(turn, f"prompt {turn}", 0, turn * 10, last_message_id=message, state=DONE)
    for path, (before, after) in files.items():
        checkpoint.files[path] = FileEntry(path, before, after)
    return checkpoint


def _ref(name: str) -> Ref:
    return Ref(KEPT, digest_of(name.encode()), len(name))


def test_the_plan_takes_each_file_back_to_its_first_touch_and_expects_its_last():
    turns = [_cp(1, {"/a": (_ref("a0"), _ref("a1"))}, message="m1"),
             _cp(2, {"/a": (_ref("a1"), _ref("a2")), "/b": (ABSENT_REF, _ref("b2"))}, message="m2"),
             _cp(3, {"/a": (_ref("a2"), _ref("a3")), "/c": (_ref("c2"), ABSENT_REF)})]
    steps = {s.path: s for s in plan(turns, 2)}
    assert steps["/a"].want == _ref("a1") and steps["/a"].expect == _ref("a3") and steps["/a"].turn == 2
    assert steps["/b"].want == ABSENT_REF and steps["/c"].expect == ABSENT_REF and steps["/c"].turn == 3
    assert fork_point(turns, 2) == "m1" and fork_point(turns, 1) is None
    turns[2].state, turns[2].undone_by = UNDONE, 3
    assert {s.path for s in plan(turns, 2)} == {"/a", "/b"}  # an undone turn is no longer on the files
    assert choose(turns, None, "demo/1").turn == 2


def test_choosing_a_turn_says_clearly_why_it_cannot_be_rewound():
    with pytest.raises(CheckpointError, match="no turn has run"):
        choose([], None, "demo/1")
    turns = [_cp(1, {}), _cp(2, {})]
    with pytest.raises(CheckpointError, match=r"there is no turn 7: this session ran turns 1–2"):
        choose(turns, 7, "demo/1")
    turns[1].state, turns[1].undone_by = UNDONE, 2
    with pytest.raises(CheckpointError, match="turn 2 was taken back by the rewind to before turn 2"):
        choose(turns, 2, "demo/1")
    turns[0].pruned = True
    with pytest.raises(CheckpointError, match="pruned from the store"):
        choose(turns, 1, "demo/1")


def test_checkpoints_false_turns_them_off_and_bounds_are_checked():
    assert parse_settings({"checkpoints": False}).checkpoints.enabled is False
    assert parse_settings({}).checkpoints.max_bytes == 200 * 1024 * 1024
    with pytest.raises(ConfigError, match=r"checkpoints\.max_bytes"):
        parse_settings({"checkpoints": {"max_bytes": 10}})


# -- recorder and restore on a real file side ----------------------------------------------

class Editor(Buffers):
    """The file tests' stateful buffers, with a state folder (where checkpoints live)."""

    def __init__(self, state: Path, outcome: str = "mine") -> None:
        super().__init__(outcome)
        self.state = state

    async def state_dir(self) -> str:
        return str(self.state)


class Session:
    """A file side, a transcript and a recorder as a session composes them; turns run by hand."""

    def __init__(self, ws: Path, editor: Editor, settings: CheckpointSettings | None = None) -> None:
        self.files, self.notices, _ = service(ws, editor)
        self.editor = editor
        self.transcript = Conversation()
        self.reports: list[str] = []
        self.recorder = Recorder("demo/1", str(ws), settings or CheckpointSettings(), editor, self.files.service,
                                 self.transcript, lambda: self.files.reconciler.unsaved, self.reports.append)

    async def turn(self, prompt: str, work) -> Checkpoint:
        self.transcript.user_message(prompt)
        await self.files.begin_turn()
        await self.recorder.begin(prompt, self.transcript.blocks[-1].id, "sid", self.files.changes.current)
        await work()
        self.transcript.agent_chunk("done", f"msg-{prompt}")
        self.recorder.end(True, self.files.end_turn())
        await settle()
        await self.recorder.flush()
        return self.recorder.checkpoints[-1]

    async def rewind(self, turn: int):
        store = await self.recorder.store()
        restorer = Restorer("demo/1", self.files.service, self.editor, store, 8 * 1024 * 1024, self.reports.append)
        result = await restorer.run(plan(self.recorder.checkpoints, turn), f"before turn {turn}")
        await settle()
        return result


async def test_three_turns_rewound_and_the_rewind_undone_byte_for_byte(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    fs_file, disk_file, cmd_file = ws / "fs.txt", ws / "disk.txt", ws / "cmd.txt"
    fs_file.write_text("fs v0\n")
    disk_file.write_bytes(b"disk v0\r\nno newline at the end")
    cmd_file.write_text("cmd v0\n")
    s = Session(ws, Editor(tmp_path / "state"))

    async def one() -> None:
        await s.files.write(str(fs_file), "fs v1\n")

    async def two() -> None:  # the agent writes the disk itself (a tool call names the file)
        s.files.observe_tool_call(tool_call("t2", disk_file, "pending"))
        await settle()
        disk_file.write_bytes(b"disk v2\r\n")
        s.files.observe_tool_call(tool_call("t2", disk_file, "completed"))
        await s.files.write(str(fs_file), "fs v2\n")

    async def three() -> None:  # a command, bracketed by the scans
        await s.recorder.before_command("term-1")
        cmd_file.write_text("cmd v3\n")
        (ws / "made.txt").write_text("made by the command\n")
        s.recorder.after_command("term-1")

    first = await s.turn("one", one)
    await s.turn("two", two)
    third = await s.turn("three", three)
    assert [c.turn for c in s.recorder.checkpoints] == [1, 2, 3] and first.last_message_id == "msg-one"
    assert third.files[str(cmd_file)].via == COMMAND and third.files[str(ws / "made.txt")].before == ABSENT_REF
    after_three = {p: p.read_bytes() for p in (fs_file, disk_file, cmd_file, ws / "made.txt")}

    result = await s.rewind(2)
    assert fs_file.read_text() == "fs v1\n"
    assert disk_file.read_bytes() == b"disk v0\r\nno newline at the end"
    assert cmd_file.read_text() == "cmd v0\n" and not (ws / "made.txt").exists()
    assert result.count(RESTORED) == 3 and result.count(REMOVED) == 1 and result.undo is not None
    assert not s.editor.views and not s.reports

    undo_steps = [(e.path, e.before, e.after) for e in result.undo.files.values()]
    from acp_nvim.core.checkpoints.plan import Step
    store = await s.recorder.store()
    again = await Restorer("demo/1", s.files.service, s.editor, store, 10**7, s.reports.append).run(
        [Step(path, before, after, 0) for path, before, after in undo_steps], "before the rewind")
    assert {p: p.read_bytes() for p in after_three} == after_three
    assert again.undo is not None and store.has_manifest(again.undo.name)


async def test_settle_puts_a_turns_checkpoint_on_disk_for_the_rewind(tmp_path, monkeypatch):
    ws = tmp_path / "ws"
    ws.mkdir()
    target = ws / "a.txt"
    target.write_text("A\n")
    s = Session(ws, Editor(tmp_path / "state"))

    async def edit() -> None:
        await s.files.write(str(target), "B\n")

    synced = _fsyncs(monkeypatch)
    await s.turn("one", edit)
    store = await s.recorder.store()
    assert store is not None
    assert not [p for p in synced if store.folder in p.parents]  # the turn did not wait for the disk
    await s.recorder.settle()  # what :Ai rewind does first
    assert {store.manifests, store.packs} <= set(synced)
    assert any(p.parent == store.packs for p in synced) and any(p.parent == store.manifests for p in synced)
    assert store.sync() == 0  # nothing left unsynced


async def test_a_rewind_keeps_unsaved_edits_and_asks_about_files_changed_since(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    typed, saved = ws / "typed.txt", ws / "saved.txt"
    typed.write_text("line 1\nline 2\n")
    saved.write_text("s0\n")
    editor = Editor(tmp_path / "state")
    s = Session(ws, editor)

    async def work() -> None:
        await s.files.write(str(typed), "line 1 by the agent\nline 2\n")
        await s.files.write(str(saved), "s1\n")
    await s.turn("edit", work)
    editor.load(typed)
    editor.type(typed, "line 1 by the agent\nline 2\nmy unsaved line\n")
    saved.write_text("s1 and my saved change\n")

    result = await s.rewind(1)
    assert typed.read_text() == "line 1\nline 2\n"  # the disk is as before the turn
    assert editor.bufs[str(typed)][0].endswith("my unsaved line\n")  # the buffer kept the user's edit
    assert saved.read_text() == "s1 and my saved change\n"  # kept: the user chose theirs (outcome "mine")
    outcomes = {Path(o.path).name: o.what for o in result.outcomes}
    assert outcomes == {"typed.txt": UNSAVED, "saved.txt": EDITED}
    views = {Path(v.path).name: v for v in editor.views}
    assert (views["typed.txt"].purpose, views["typed.txt"].agent) == ("disk", "line 1\nline 2\n")
    assert (views["saved.txt"].purpose, views["saved.txt"].base, views["saved.txt"].load) == ("write", "s1\n", True)
    assert views["saved.txt"].theirs == "before turn 1"


async def test_a_checkpoint_gone_or_corrupt_refuses_the_rewind_and_changes_nothing(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    a, b = ws / "a.txt", ws / "b.txt"
    a.write_text("a0\n")
    b.write_text("b0\n")
    s = Session(ws, Editor(tmp_path / "state"))

    async def work() -> None:
        await s.files.write(str(a), "a1\n")
        await s.files.write(str(b), "b1\n")
    checkpoint = await s.turn("edit", work)
    store = await s.recorder.store()
    _rewrite_record(store, checkpoint.files[str(b)].before.digest, b"garbage")
    with pytest.raises(CheckpointError, match=r"b\.txt \(turn 1\): .*corrupt.*Nothing was changed"):
        await s.rewind(1)
    for pack in store.packs.iterdir():
        pack.unlink()
    with pytest.raises(CheckpointError, match="no longer in the checkpoint store"):
        await s.rewind(1)
    assert (a.read_text(), b.read_text()) == ("a1\n", "b1\n")
    assert [n for n in store.manifest_names() if "undo" in n] == []


async def test_a_three_way_view_still_open_refuses_the_rewind(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    path = ws / "a.txt"
    path.write_text("a0\n")
    s = Session(ws, Editor(tmp_path / "state"))

    async def work() -> None:
        await s.files.write(str(path), "a1\n")
    await s.turn("edit", work)
    s.files.ledger.open_view(str(path))  # the user has not decided an earlier view yet
    with pytest.raises(CheckpointError, match=r"three-way view of .*a\.txt is still open.*nothing was changed"):
        await s.rewind(1)
    s.files.ledger.close_view(str(path))
    assert path.read_text() == "a1\n"
    await s.rewind(1)
    assert path.read_text() == "a0\n"


async def test_a_file_over_max_file_bytes_is_noted_and_the_rewind_says_so(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    big, small = ws / "big.txt", ws / "small.txt"
    big.write_text("x" * 5000)
    small.write_text("s0\n")
    s = Session(ws, Editor(tmp_path / "state"), CheckpointSettings(max_file_bytes=4096))

    async def work() -> None:
        await s.files.write(str(big), "y" * 5000)
        await s.files.write(str(small), "s1\n")
    checkpoint = await s.turn("edit", work)
    assert checkpoint.files[str(big)].before == Ref(TOO_LARGE, size=5000)
    result = await s.rewind(1)
    assert small.read_text() == "s0\n" and big.read_text() == "y" * 5000
    skipped = [o for o in result.outcomes if o.what == SKIPPED]
    assert len(skipped) == 1 and "larger than checkpoints.max_file_bytes" in skipped[0].why
    assert "1 not set back" in result.summary() and any("big.txt" in line for line in result.details())


async def test_a_command_the_agent_runs_itself_is_scanned_before_its_permission_is_answered(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    ran, cut = ws / "ran.txt", ws / "cut.txt"
    ran.write_text("before the command\n")
    cut.write_text("before the cancelled command\n")
    s = Session(ws, Editor(tmp_path / "state"))

    async def answer() -> str:
        return "allowed"

    async def work() -> None:
        request = ToolCallUpdate(tool_call_id="bash-1", kind="execute", status="pending")
        assert await s.recorder.around_permission(request, answer()) == "allowed"
        ran.write_text("after the command\n")  # the agent runs it once it has the answer
        s.recorder.observe(ToolCallState("bash-1", kind="execute", status="completed"))
        s.recorder.observe(ToolCallState("bash-2", kind="execute", status="in_progress"))
        await s.recorder.flush()
        cut.write_text("changed, then the turn was cancelled\n")  # bash-2 never completes
    checkpoint = await s.turn("run it", work)
    assert {Path(p).name: e.via for p, e in checkpoint.files.items()} == {"ran.txt": COMMAND, "cut.txt": COMMAND}
    await s.rewind(1)
    assert (ran.read_text(), cut.read_text()) == ("before the command\n", "before the cancelled command\n")


async def test_a_prompt_the_agent_never_got_is_no_turn(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    s = Session(ws, Editor(tmp_path / "state"))
    s.transcript.user_message("lost")
    await s.files.begin_turn()
    await s.recorder.begin("lost", s.transcript.blocks[-1].id, "sid", s.files.changes.current)
    s.recorder.end(False)
    assert s.recorder.checkpoints == []
    await s.turn("kept", lambda: settle())
    assert [c.turn for c in s.recorder.checkpoints] == [1]


async def test_unknown_before_and_same_content_are_told_apart(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    same = ws / "same.txt"
    same.write_text("v0\n")
    s = Session(ws, Editor(tmp_path / "state"))

    async def work() -> None:
        await s.files.write(str(same), "v1\n")
    await s.turn("edit", work)
    same.write_text("v0\n")  # put back by hand: nothing to do
    result = await s.rewind(1)
    assert [o.what for o in result.outcomes] == [SAME] and result.undo is None
    assert Ref(UNKNOWN).why_not() == "its content before the turn is unknown"
    assert Ref(ABSENT).restorable and not Ref(UNKNOWN).restorable
