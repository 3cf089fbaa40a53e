"""The opener: no symlink followed anywhere on the path, only regular files, atomic writes;
the bounded ledger; review decisions that hold for a retry; the review's base text."""

from __future__ import annotations

import errno
import os
import stat

import pytest
from acp import RequestError

from acp_nvim.core.files import opener as opener_module
from acp_nvim.core.files.ledger import FileLedger
from acp_nvim.core.files.opener import TEMP_PREFIX, DiskChanged, Opener
from acp_nvim.core.files.paths import PathPolicy, PathRefused
from acp_nvim.core.permissions.accepted import AcceptedEdit, AcceptedEdits
from acp_nvim.core.permissions.review import read_current


@pytest.fixture
def tree(tmp_path):
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    return ws, outside


def temps(folder) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.startswith(TEMP_PREFIX)]


def test_a_folder_swapped_for_a_symlink_is_refused_never_followed(tree):
    ws, outside = tree
    opener = Opener([ws])
    (ws / "sub").symlink_to(outside)  # as if swapped in after PathPolicy.check
    with pytest.raises(PathRefused, match="symlink or not a folder"):
        opener.read_text(ws / "sub" / "secret.txt")
    with pytest.raises(PathRefused, match="symlink or not a folder"):
        opener.replace(ws / "sub" / "new" / "deep.txt", b"x")
    with pytest.raises(PathRefused):
        opener.replace(ws / "sub" / "secret.txt", b"x")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "secret\n"


def test_a_root_reached_through_a_symlink_is_refused(tree, tmp_path):
    ws, _ = tree
    (tmp_path / "alias").symlink_to(ws)
    with pytest.raises(PathRefused):
        Opener([tmp_path / "alias"]).read_text(tmp_path / "alias" / "x.txt")


def test_only_regular_files_are_opened(tree):
    ws, _ = tree
    os.mkfifo(ws / "fifo")
    opener = Opener([ws])
    with pytest.raises(PathRefused, match="not a regular file"):
        opener.read_text(ws / "fifo")
    with pytest.raises(PathRefused, match="not a regular file"):
        opener.replace(ws / "fifo", b"x")
    assert stat.S_ISFIFO((ws / "fifo").lstat().st_mode)


def test_replace_is_atomic_and_keeps_the_mode(tree):
    ws, _ = tree
    path = ws / "script.sh"
    path.write_text("old\n")
    path.chmod(0o751)
    before = path.stat().st_ino
    replaced = Opener([ws]).replace(path, b"new\n")
    assert path.read_text() == "new\n" and stat.S_IMODE(path.stat().st_mode) == 0o751
    assert path.stat().st_ino != before and replaced.old_links == 1
    assert temps(ws) == []


def test_a_hard_links_other_name_keeps_the_old_text(tree):
    ws, outside = tree
    os.link(outside / "secret.txt", ws / "hard.txt")
    opener = Opener([ws])
    with pytest.raises(PathRefused, match="2 hard links"):
        opener.read_text(ws / "hard.txt")
    replaced = opener.replace(ws / "hard.txt", b"mine\n")
    assert replaced.old_links == 2
    assert (ws / "hard.txt").read_text() == "mine\n" and (outside / "secret.txt").read_text() == "secret\n"


def test_a_failed_write_leaves_the_file_whole(tree, monkeypatch):
    ws, _ = tree
    path = ws / "keep.txt"
    path.write_text("whole\n")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(opener_module.os, "fsync", full)
    with pytest.raises(RequestError, match="No space left on device; the file was left as it was"):
        Opener([ws]).replace(path, b"truncated?")
    assert path.read_text() == "whole\n" and temps(ws) == []


def test_read_only_files_and_changed_files_are_not_written(tree):
    ws, _ = tree
    path = ws / "ro.txt"
    path.write_text("ro\n")
    path.chmod(0o444)
    opener = Opener([ws])
    with pytest.raises(RequestError, match="read-only"):
        opener.replace(path, b"x")
    path.chmod(0o644)
    stamp = opener.stamp(path)
    path.write_text("someone else\n")
    with pytest.raises(DiskChanged):
        opener.replace(path, b"x", expect=stamp)
    with pytest.raises(DiskChanged):
        opener.replace(ws / "new.txt", b"x", expect=stamp)  # expected a file that is not there
    assert path.read_text() == "someone else\n" and not (ws / "new.txt").exists()


def test_the_ledger_is_bounded():
    ledger = FileLedger(max_files=10, max_text_chars=100)
    for i in range(50):
        ledger.note_read(f"/f{i}", i, "x" * 30)
        ledger.note_disk(f"/f{i}", (30, i))
    files, texts, chars = ledger.sizes
    assert files == 10 and texts == 3 and chars == 90
    assert ledger.last_read("/f49") is not None and ledger.last_read("/f0") is None
    assert ledger.last_read("/f45") is not None and ledger.last_read("/f45").text is None  # text dropped, tick kept
    ledger.note_read("/huge", 1, "y" * 500)
    assert ledger.last_read("/huge").text is None


async def test_a_review_decision_holds_for_the_rest_of_the_turn(tmp_path):
    edits = AcceptedEdits(PathPolicy([str(tmp_path)]))
    accepted, rejected = str(tmp_path / "a.txt"), str(tmp_path / "r.txt")
    await edits.add(AcceptedEdit("t1", accepted, "agent's\n", "user's\n", "base\n"))
    await edits.add(AcceptedEdit("t1", rejected, "agent's\n", None, "base\n"))
    decision = edits.decision(await edits.key_of(accepted))
    assert decision.allows("agent's\n") and decision.allows("user's\n") and not decision.allows("new\n")
    assert not edits.decision(await edits.key_of(rejected)).allows("agent's\n")
    assert len(edits.of_tool_call("t1")) == 2
    edits.clear()  # a new turn
    assert edits.decision(await edits.key_of(rejected)) is None


def test_locate_keys_a_file_by_its_folder_and_name_not_its_inode(tmp_path):
    opener = Opener([tmp_path])
    (tmp_path / "d").mkdir()
    path = tmp_path / "d" / "f.txt"
    path.write_text("one\n")
    first = opener.locate(path)
    opener.replace(path, b"two\n")  # a new inode
    assert opener.locate(path).key == first.key and first.rest == "f.txt"
    missing = opener.locate(tmp_path / "d" / "new" / "deep.txt")
    assert missing.folder == first.folder and missing.rest == "new/deep.txt"
    os.rename(tmp_path / "d", tmp_path / "e")
    (tmp_path / "d").symlink_to(tmp_path / "e")
    with pytest.raises(RequestError, match="symlink"):
        opener.locate(path)


async def no_buffer(path: str) -> str | None:
    return None


@pytest.mark.parametrize("name", ["fifo", "zero-link", "dev-zero", "outside-link", "hard"])
async def test_the_reviews_base_text_never_blocks_nor_leaves_the_workspace(tree, name):
    ws, outside = tree
    os.mkfifo(ws / "fifo")
    (ws / "zero-link").symlink_to("/dev/zero")
    (ws / "outside-link").symlink_to(outside / "secret.txt")
    os.link(outside / "secret.txt", ws / "hard")
    path = "/dev/zero" if name == "dev-zero" else str(ws / name)
    current = await read_current(path, PathPolicy([str(ws)]), no_buffer)
    assert current.text is None and current.problem.startswith("its text was not read"), current


async def test_the_reviews_base_text_reads_a_regular_file(tree):
    ws, _ = tree
    (ws / "ok.txt").write_text("ok\n")
    current = await read_current(str(ws / "ok.txt"), PathPolicy([str(ws)]), no_buffer)
    assert (current.text, current.problem) == ("ok\n", "")
    missing = await read_current(str(ws / "missing.txt"), PathPolicy([str(ws)]), no_buffer)
    assert (missing.text, missing.problem) == (None, "")
