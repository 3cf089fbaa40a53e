"""Which file a buffer is the view of: the opener's identity of a path, and reads that serve a
buffer only while its source is the file the opener finds at its name."""

from __future__ import annotations

import os

import pytest
from acp import RequestError
from fake_editor import FakeEditor

from acp_nvim.core.files.opener import NOT_FOUND, Opener, file_id_of
from acp_nvim.core.files.paths import PathPolicy, PathRefused
from acp_nvim.core.files.side import FileSide
from acp_nvim.core.log.ring import LogRing
from acp_nvim.core.port import NEW_FILE
from acp_nvim.core.questions import Questions

pytestmark = pytest.mark.timeout(10)


@pytest.fixture
def tree(tmp_path):
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("OUTSIDE secret\n")
    return ws, outside


def test_identity_is_device_and_inode_of_the_regular_file(tree):
    ws, _ = tree
    (ws / "sub").mkdir()
    path = ws / "sub" / "a.txt"
    path.write_text("a\n")
    info = os.stat(path)
    assert Opener([ws]).identity(path) == (info.st_dev, info.st_ino) == file_id_of(info)


def test_identity_refuses_what_a_read_refuses(tree):
    ws, outside = tree
    opener = Opener([ws])
    (ws / "link").symlink_to(outside / "secret.txt")
    (ws / "dirlink").symlink_to(outside)
    os.mkfifo(ws / "fifo")
    os.link(outside / "secret.txt", ws / "hard")
    (ws / "folder").mkdir()
    with pytest.raises(PathRefused, match="symlink"):
        opener.identity(ws / "link")
    with pytest.raises(PathRefused, match="symlink or not a folder"):
        opener.identity(ws / "dirlink" / "secret.txt")
    with pytest.raises(PathRefused, match="not a regular file"):
        opener.identity(ws / "fifo")
    with pytest.raises(PathRefused, match="hard links"):
        opener.identity(ws / "hard")
    with pytest.raises(RequestError, match="directory"):
        opener.identity(ws / "folder")
    with pytest.raises(PathRefused, match="outside the workspace"):
        opener.identity(outside / "secret.txt")
    with pytest.raises(RequestError) as missing:
        opener.identity(ws / "missing.txt")
    assert missing.value.code == NOT_FOUND


def test_source_of_says_new_file_for_a_missing_one_and_none_for_a_refused_one(tree):
    ws, outside = tree
    opener = Opener([ws])
    (ws / "link").symlink_to(outside / "secret.txt")
    (ws / "a.txt").write_text("a\n")
    assert opener.source_of(ws / "missing" / "deep.txt") == NEW_FILE
    assert opener.source_of(ws / "link") is None
    assert opener.source_of(ws / "a.txt") == opener.identity(ws / "a.txt")


def files(ws, editor):
    side = FileSide.create(editor, PathPolicy([str(ws)]), questions=Questions(), owner="s", log=LogRing(),
                           notice=lambda text, kind: None)
    return side.service


async def test_a_buffer_is_served_while_it_is_the_file_at_its_name(tree):
    ws, _ = tree
    path = ws / "a.txt"
    path.write_text("on disk\n")
    editor = FakeEditor()
    editor.buffers[str(path)] = "unsaved edits\n"
    editor.sources[str(path)] = file_id_of(os.stat(path))
    service = files(ws, editor)
    assert (await service.read(str(path), None, None)).content == "unsaved edits\n"
    with open(path, "w") as handle:  # written in place: still that file
        handle.write("rewritten\n")
    assert (await service.read(str(path), None, None)).content == "unsaved edits\n"


async def test_a_buffer_of_another_file_is_not_served(tree):
    ws, outside = tree
    path = ws / "a.txt"
    editor = FakeEditor()
    editor.buffers[str(path)] = "OUTSIDE secret\n"  # read through a symlink, since removed
    editor.sources[str(path)] = file_id_of(os.stat(outside / "secret.txt"))
    service = files(ws, editor)
    with pytest.raises(RequestError, match="no such file"):
        await service.read(str(path), None, None)
    path.write_text("the regular file now\n")
    assert (await service.read(str(path), None, None)).content == "the regular file now\n"
    editor.sources[str(path)] = None  # unknown
    assert (await service.read(str(path), None, None)).content == "the regular file now\n"


async def test_a_new_files_buffer_is_served_only_while_no_file_is_there(tree):
    ws, _ = tree
    path = ws / "new.txt"
    editor = FakeEditor()
    editor.buffers[str(path)] = "typed, never saved\n"
    editor.sources[str(path)] = NEW_FILE
    service = files(ws, editor)
    assert (await service.read(str(path), None, None)).content == "typed, never saved\n"
    path.write_text("created behind the buffer\n")
    assert (await service.read(str(path), None, None)).content == "created behind the buffer\n"
