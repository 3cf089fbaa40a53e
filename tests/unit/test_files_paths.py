"""Workspace confinement and the disk layer: no path outside the roots is readable or writable."""

from __future__ import annotations

import os

import pytest
from acp import RequestError

from acp_nvim.core.files.opener import Opener, Snapshot, stamp_of
from acp_nvim.core.files.paths import PathPolicy, PathRefused


@pytest.fixture
def tree(tmp_path):
    """ws/ (the root) with a file, a subfolder, and symlinks inside and out; outside/secret.txt."""
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "sub").mkdir(parents=True)
    outside.mkdir()
    (ws / "file.txt").write_text("inside\n")
    (outside / "secret.txt").write_text("secret\n")
    (ws / "link-out.txt").symlink_to(outside / "secret.txt")
    (ws / "link-dir").symlink_to(outside)
    (ws / "link-in.txt").symlink_to(ws / "file.txt")
    (ws / "dangling-out.txt").symlink_to(outside / "not-yet.txt")
    os.mkfifo(ws / "fifo")
    return ws, outside


def refused(policy, path) -> str:
    with pytest.raises(RequestError) as info:
        policy.check(str(path))
    return str(info.value)


def test_inside_paths_resolve(tree):
    ws, _ = tree
    policy = PathPolicy([str(ws)])
    assert policy.check(str(ws / "file.txt")) == ws / "file.txt"
    assert policy.check(str(ws / "sub" / ".." / "file.txt")) == ws / "file.txt"
    assert policy.check(str(ws / "link-in.txt")) == ws / "file.txt"
    assert policy.check(str(ws / "new" / "deep" / "file.txt")) == ws / "new" / "deep" / "file.txt"


@pytest.mark.parametrize(("make_path", "reason"), [
    (lambda ws, out: "file.txt", "must be absolute"),
    (lambda ws, out: "./file.txt", "must be absolute"),
    (lambda ws, out: "", "not a valid path"),
    (lambda ws, out: f"{ws}/file\0.txt", "not a valid path"),
    (lambda ws, out: f"{ws}/../outside/secret.txt", "outside the workspace roots"),
    (lambda ws, out: f"{ws}/sub/../../outside/secret.txt", "outside the workspace roots"),
    (lambda ws, out: f"{out}/secret.txt", "outside the workspace roots"),
    (lambda ws, out: "/etc/passwd", "outside the workspace roots"),
    (lambda ws, out: f"{ws}/link-out.txt", "outside the workspace roots"),
    (lambda ws, out: f"{ws}/link-dir/secret.txt", "outside the workspace roots"),
    (lambda ws, out: f"{ws}/link-dir/new.txt", "outside the workspace roots"),
    (lambda ws, out: f"{ws}/dangling-out.txt", "outside the workspace roots"),
    (lambda ws, out: f"{ws}/fifo", "not a regular file"),
    (lambda ws, out: f"{ws}/sub", "is a directory"),
    (lambda ws, out: f"{ws}", "is a directory"),
])
def test_refused(tree, make_path, reason):
    ws, outside = tree
    message = refused(PathPolicy([str(ws)]), make_path(ws, outside))
    assert reason in message


def test_confinement_errors_name_the_path_and_roots(tree):
    ws, outside = tree
    with pytest.raises(PathRefused) as info:
        PathPolicy([str(ws)]).check(str(outside / "secret.txt"))
    assert info.value.code == -32602
    assert str(outside / "secret.txt") in str(info.value) and str(ws) in str(info.value)
    assert info.value.data == {"path": str(outside / "secret.txt"), "reason": info.value.reason}


def test_device_files_are_refused_even_inside_a_root():
    assert "not a regular file" in refused(PathPolicy(["/dev"]), "/dev/null")


def test_extra_roots(tree):
    ws, outside = tree
    policy = PathPolicy.for_workspace(str(ws), [str(outside)])
    assert policy.check(str(outside / "secret.txt")) == outside / "secret.txt"
    assert policy.check(str(ws / "link-out.txt")) == outside / "secret.txt"
    relative = PathPolicy.for_workspace(str(ws / "sub"), ["../../outside"])
    assert relative.check(str(outside / "secret.txt")) == outside / "secret.txt"


def test_root_given_through_a_symlink(tree, tmp_path):
    ws, _ = tree
    (tmp_path / "ws-link").symlink_to(ws)
    policy = PathPolicy([str(tmp_path / "ws-link")])
    assert policy.check(str(ws / "file.txt")) == ws / "file.txt"
    assert policy.check(str(tmp_path / "ws-link" / "file.txt")) == ws / "file.txt"


# -- the opener (tests/unit/test_files_opener.py has the rest) ----------------------------------


def test_read_errors_are_clear(tmp_path):
    opener = Opener([tmp_path])
    (tmp_path / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    (tmp_path / "big.txt").write_text("x" * 101)
    with pytest.raises(RequestError, match=r"not valid UTF-8 text \(invalid byte at offset 3\)"):
        opener.read_text(tmp_path / "latin1.txt")
    with pytest.raises(RequestError, match=r"file too large \(101 bytes; the limit is 100 bytes\)") as info:
        opener.read_text(tmp_path / "big.txt", cap=100)
    assert info.value.code == -32602
    with pytest.raises(RequestError, match="no such file") as info:
        opener.read_text(tmp_path / "missing.txt")
    assert info.value.code == -32002
    with pytest.raises(RequestError, match="is a directory"):
        opener.read_text(tmp_path)
    (tmp_path / "sub").mkdir()
    with pytest.raises(RequestError, match="is a directory"):
        opener.read_text(tmp_path / "sub")


def test_disk_never_follows_a_symlink_swapped_in_after_the_check(tmp_path):
    opener = Opener([tmp_path])
    (tmp_path / "secret.txt").write_text("secret\n")
    (tmp_path / "swapped.txt").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(PathRefused, match="symlink"):
        opener.read_text(tmp_path / "swapped.txt")
    with pytest.raises(PathRefused, match="symlink"):
        opener.replace(tmp_path / "swapped.txt", b"overwritten\n")
    assert (tmp_path / "secret.txt").read_text() == "secret\n"


def test_write_creates_parent_folders_and_keeps_bytes(tmp_path):
    opener = Opener([tmp_path])
    target = tmp_path / "a" / "b" / "c.txt"
    opener.replace(target, b"x\r\ny")
    assert target.read_bytes() == b"x\r\ny"
    assert opener.read_text(target) == "x\r\ny"


def test_snapshot_never_raises(tmp_path):
    opener = Opener([tmp_path])
    (tmp_path / "bin").write_bytes(b"\xff\xfe")
    assert opener.snapshot(tmp_path / "missing") == Snapshot(False, None)
    assert opener.snapshot(tmp_path / "bin") == Snapshot(True, None)
    (tmp_path / "ok").write_text("ok")
    snap = opener.snapshot(tmp_path / "ok")
    assert (snap.exists, snap.text) == (True, "ok") and snap.stamp == stamp_of((tmp_path / "ok").stat())
