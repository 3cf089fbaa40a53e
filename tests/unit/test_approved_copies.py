"""core/terminal/approved.py: the private copy of an approved script (its modes, where it lies, what runs,
its removal) and the terminal service that runs it and removes it."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest
from fake_editor import FakeEditor

from acp_nvim.core.box.command import checked_prefix
from acp_nvim.core.files.paths import PathPolicy
from acp_nvim.core.log.ring import LogRing
from acp_nvim.core.terminal.approved import Approved, ApprovedCopies, CopyError, Grant, in_box
from acp_nvim.core.terminal.place import identify
from acp_nvim.core.terminal.service import TerminalService
from acp_nvim.core.terminal.settings import TerminalSettings
from helpers import async_wait_for

pytestmark = pytest.mark.timeout(30)


def test_a_copy_is_private_read_only_and_removed(tmp_path):
    copies = ApprovedCopies.make([Approved(0, str(tmp_path / "build.sh"), b"echo ok\n"),
                                  Approved(2, str(tmp_path / "sub" / "build.sh"), b"echo two\n")])
    folder = Path(copies.folder)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and folder.stat().st_uid == os.getuid()
    first, second = Path(copies.paths[0]), Path(copies.paths[2])
    assert first.name == second.name == "build.sh" and first != second, "one file per script, its own name"
    assert first.read_bytes() == b"echo ok\n" and second.read_bytes() == b"echo two\n"
    assert stat.S_IMODE(first.stat().st_mode) == 0o500, "nobody writes it"
    assert not str(first).startswith(str(tmp_path)), "never beside the script"
    assert copies.argv(["./build.sh", "-x", "sub/build.sh"]) == [str(first), "-x", str(second)]
    copies.remove()
    assert not folder.exists()
    copies.remove()  # twice: nothing to do


def test_a_script_approved_while_missing_stays_missing(tmp_path):
    copies = ApprovedCopies.make([Approved(0, str(tmp_path / "gone.sh"), None)])
    assert not os.path.lexists(copies.paths[0]) and os.path.isdir(os.path.dirname(copies.paths[0]))
    copies.remove()


def test_no_copy_inside_the_workspace(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    with pytest.raises(CopyError, match="no folder outside the workspace"):
        ApprovedCopies.make([Approved(0, "x.sh", b"")], avoid=lambda path: path.startswith(str(tmp_path)))


def test_the_box_shows_the_copies_read_only():
    assert in_box((), "/run/x") == ()
    assert in_box(("bwrap", "--ro-bind", "/usr", "/usr", "--"), "/run/x") == (
        "bwrap", "--ro-bind", "/usr", "/usr", "--ro-bind", "/run/x", "/run/x", "--")


async def test_the_terminal_runs_the_copy_and_removes_it_when_it_ends(tmp_path):
    (tmp_path / "build.sh").write_text("echo swapped\n")
    editor = FakeEditor()

    async def gate(spec):
        return Grant(identify(spec.cwd), (Approved(1, str(tmp_path / "build.sh"), b"echo approved\n"),),
                     ("sh", "./build.sh", "arg"), ("bash", "-c"))

    service = TerminalService("s1", editor, PathPolicy([str(tmp_path)]), str(tmp_path), TerminalSettings(),
                              allow=gate, refresh=lambda _: None, log=LogRing(100, 100000, "debug"))
    tid = await service.create("bash", ["-c", "sh ./build.sh arg"], None, None, None)
    spec, sink = editor.terminals[tid]
    shell, flag, line = spec.command, *spec.args
    copy = line.split()[1]
    assert (shell, flag) == ("bash", "-c") and line == f"sh {copy} arg", "the same shell, the copy in place"
    assert Path(copy).read_bytes() == b"echo approved\n"
    sink.exited(0)
    await service.wait_for_exit(tid)
    await async_wait_for(lambda: not Path(copy).parent.parent.exists(), what="the copy removed when it ended")


async def test_a_released_terminal_removes_its_copy(tmp_path):
    editor = FakeEditor()

    async def gate(spec):
        return Grant(identify(spec.cwd), (Approved(0, str(tmp_path / "x.sh"), b"sleep 5\n"),), ("./x.sh",))

    service = TerminalService("s1", editor, PathPolicy([str(tmp_path)]), str(tmp_path), TerminalSettings(),
                              allow=gate, refresh=lambda _: None, log=LogRing(100, 100000, "debug"))
    tid = await service.create("./x.sh", [], None, None, None)
    copy = Path(editor.terminals[tid][0].command)
    assert copy.read_bytes() == b"sleep 5\n"
    service.release(tid)
    assert not copy.parent.parent.exists()


async def test_a_copy_is_removed_when_the_command_cannot_start(tmp_path, monkeypatch):
    run = tmp_path / "run"
    run.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run))
    editor = FakeEditor()
    editor.start_error = OSError("no pty")

    async def gate(spec):
        return Grant(identify(spec.cwd), (Approved(0, str(tmp_path / "x.sh"), b"true\n"),), ("./x.sh",))

    workspace = tmp_path / "ws"
    workspace.mkdir()
    service = TerminalService("s1", editor, PathPolicy([str(workspace)]), str(workspace), TerminalSettings(),
                              allow=gate, refresh=lambda _: None, log=LogRing(100, 100000, "debug"))
    with pytest.raises(Exception, match="no pty"):
        await service.create("./x.sh", [], None, None, None)
    assert not list(run.iterdir()), "nothing is left of the copy"


def test_the_copy_is_shown_in_an_overlay_box_whose_folder_check_runs_outside() -> None:
    bwrap = ["bwrap", "--overlay-src", "/w", "--tmp-overlay", "/w", "--"]
    prefix = checked_prefix(bwrap, "CHECK")
    shown = in_box(prefix, "/run/copies")
    assert shown[:4] == tuple(prefix[:4]) and shown[4] == str(len(bwrap) + 3)
    assert shown[6:] == (*bwrap[:-1], "--ro-bind", "/run/copies", "/run/copies", "--")
