"""What a boxed agent's overlay proposes (core/box/overlay.py): its upper folder read against the
user's tree. The upper folders are made by hand here the way overlayfs leaves them (a whiteout is
a character device 0:0, or an empty file marked ``user.overlay.whiteout``; a folder made again is
marked ``user.overlay.opaque = y``); tests/security/test_overlay.py has the kernel make them."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from acp_nvim.core.box.overlay import MAX_PROPOSED_BYTES, Change, Overlay, remove_tree, scan


@pytest.fixture
def layers(tmp_path: Path) -> tuple[Path, Path]:
    lower, upper = tmp_path / "user", tmp_path / "upper"
    lower.mkdir()
    upper.mkdir()
    (lower / "src").mkdir()
    (lower / "src" / "a.py").write_text("a\n")
    (lower / "src" / "b.py").write_text("b\n")
    (lower / "readme.txt").write_text("readme\n")
    return lower, upper


def whiteout(path: Path) -> None:
    try:
        os.mknod(path, stat.S_IFCHR | 0o000, os.makedev(0, 0))
        return
    except (PermissionError, OSError):
        pass
    path.write_bytes(b"")
    try:
        os.setxattr(path, "user.overlay.whiteout", b"y")
    except OSError as exc:
        pytest.skip(f"neither a 0:0 device nor a user xattr can be made here: {exc.strerror}")


def opaque(path: Path) -> None:
    path.mkdir()
    try:
        os.setxattr(path, "user.overlay.opaque", b"y")
    except OSError as exc:
        pytest.skip(f"no user xattr here: {exc.strerror}")


def changes(lower: Path, upper: Path) -> dict[str, tuple[str, bytes | None, bool]]:
    return {os.path.relpath(c.path, lower): (c.kind, c.data, c.executable) for c in scan(str(upper), str(lower))}


def test_a_modified_file_and_a_new_file_in_a_new_folder_are_proposed(layers):
    lower, upper = layers
    (upper / "src").mkdir()
    (upper / "src" / "a.py").write_text("A\n")
    (upper / "new" / "deep").mkdir(parents=True)
    (upper / "new" / "deep" / "c.py").write_text("c\n")
    (upper / "empty").mkdir()
    assert changes(lower, upper) == {"src/a.py": ("file", b"A\n", False), "new/deep/c.py": ("file", b"c\n", False)}


def test_a_file_copied_up_unchanged_is_no_change(layers):
    lower, upper = layers
    (upper / "readme.txt").write_text("readme\n")  # a copy-up (a touch), or a change already accepted
    assert changes(lower, upper) == {}


def test_an_exec_bit_alone_is_a_change_and_is_told(layers):
    lower, upper = layers
    (upper / "readme.txt").write_text("readme\n")
    os.chmod(upper / "readme.txt", 0o755)
    (upper / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(upper / "run.sh", 0o700)
    assert changes(lower, upper) == {"readme.txt": ("file", b"readme\n", True),
                                     "run.sh": ("file", b"#!/bin/sh\n", True)}


def test_a_whiteout_deletes_a_file_or_every_file_of_a_folder(layers):
    lower, upper = layers
    whiteout(upper / "readme.txt")
    whiteout(upper / "src")
    whiteout(upper / "never-there")
    assert changes(lower, upper) == {"readme.txt": ("deleted", None, False), "src/a.py": ("deleted", None, False),
                                     "src/b.py": ("deleted", None, False)}


def test_a_folder_made_again_deletes_what_it_no_longer_holds(layers):
    lower, upper = layers
    opaque(upper / "src")
    (upper / "src" / "b.py").write_text("b again\n")
    assert changes(lower, upper) == {"src/a.py": ("deleted", None, False), "src/b.py": ("file", b"b again\n", False)}


def test_a_folder_where_the_user_has_a_file_deletes_that_file(layers):
    lower, upper = layers
    (upper / "readme.txt").mkdir()
    (upper / "readme.txt" / "inside").write_text("x\n")
    assert changes(lower, upper) == {"readme.txt": ("deleted", None, False),
                                     "readme.txt/inside": ("file", b"x\n", False)}


def test_a_symlink_is_proposed_as_one_and_a_huge_file_is_not_read(layers):
    lower, upper = layers
    (upper / "link").symlink_to("/etc/passwd")
    with open(upper / "huge.bin", "wb") as handle:
        handle.truncate(MAX_PROPOSED_BYTES + 1)
    assert changes(lower, upper) == {"link": ("symlink", None, False), "huge.bin": ("large", None, False)}


def test_text_is_only_utf8_content():
    assert Change("/w/a", b"caf\xc3\xa9\n").text == "café\n"
    assert Change("/w/a", b"\xff\xfe").text is None
    assert Change("/w/a", None, kind="deleted").text is None


def test_each_read_write_bind_of_a_root_becomes_its_overlay(tmp_path):
    made = Overlay(["/w/one", "/w/one/inner"], parent=str(tmp_path))
    try:
        one, inner = made.layers
        argv = ["bwrap", "--ro-bind", "/usr", "/usr", "--bind-try", "/w/one", "/w/one", "--bind", "/w/one/inner",
                "/w/one/inner", "--bind-try", "/state", "/state", "--", "agent", "--bind-try", "/w/one", "/w/one"]
        assert made.mount(argv) == [
            "bwrap", "--ro-bind", "/usr", "/usr",
            "--overlay-src", "/w/one", "--overlay", one.upper, one.work, "/w/one",
            "--overlay-src", "/w/one/inner", "--overlay", inner.upper, inner.work, "/w/one/inner",
            "--bind-try", "/state", "/state", "--", "agent", "--bind-try", "/w/one", "/w/one"]
        assert stat.S_IMODE(os.stat(made.folder).st_mode) == 0o700
        assert made.layer_of("/w/one/inner/x") == inner and made.layer_of("/w/one/x") == one
        assert made.layer_of("/w/other") is None
    finally:
        made.discard()
    assert not os.path.exists(made.folder)


def test_a_nested_roots_changes_come_from_its_own_layer(tmp_path):
    outer, inner = tmp_path / "w", tmp_path / "w" / "inner"
    inner.mkdir(parents=True)
    made = Overlay([str(outer), str(inner)], parent=str(tmp_path))
    try:
        Path(made.layers[1].upper, "x.txt").write_text("inner\n")
        Path(made.layers[0].upper, "inner").mkdir()
        Path(made.layers[0].upper, "inner", "stale.txt").write_text("never proposed\n")
        assert [(c.path, c.data) for c in made.changes()] == [(str(inner / "x.txt"), b"inner\n")]
    finally:
        made.discard()


def test_a_deep_tree_is_read_without_recursion_and_acp_nvims_own_temp_files_are_no_change(layers):
    lower, upper = layers
    depth = 1200  # deeper than Python's recursion limit, shorter than PATH_MAX
    fd = os.open(upper, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)
    upper.joinpath(*["d"] * depth, "leaf.txt").write_text("leaf\n")
    (upper / ".acp-nvim-overlay-0123456789ab.tmp").write_text("being put in the agent's view\n")
    try:
        found = changes(lower, upper)
    finally:
        remove_tree(str(upper / "d"))  # pytest's own clean-up of old temp folders recurses
    assert list(found.values()) == [("file", b"leaf\n", False)] and next(iter(found)).endswith("d/leaf.txt")
    assert not (upper / "d").exists()
