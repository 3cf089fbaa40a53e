"""Buffer-true files with the demo agent: edits through fs/*, agents that write the disk
themselves, the three-way view, and :Ai changes (list, diff, revert a file or a hunk)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import PENDING_LUA, allow, buffer_text, notify_stub, wait_for

pytestmark = pytest.mark.timeout(60)

CHAT = "acp://chat/demo/1"
LIST = "acp://changes/demo/1"
ORIGINAL = "".join(f"line {n}\n" for n in range(1, 21))
EDITED = ORIGINAL.replace("line 1\n", "line 1 edited by demo\n", 1) + "added by the demo agent\n"

CAPTURE_NOTIFY = notify_stub("acp_test_notes")


def turns_ended(nvim) -> int:
    return buffer_text(nvim, CHAT).count("turn ended")


def run(nvim, prompt: str, answer: bool = True) -> None:
    """Send a prompt, allow its permission request, wait for the end of the turn."""
    done = turns_ended(nvim)
    nvim.command(f"Ai send {prompt}")
    if answer:
        allow(nvim)
    wait_for(lambda: turns_ended(nvim) > done, timeout=20, what=f"the end of {prompt!r}")


def lines(nvim, path: Path) -> list[str]:
    return nvim.api.buf_get_lines(nvim.funcs.bufnr(str(path)), 0, -1, False)


def show_changes(nvim, expect: str) -> str:
    """:Ai changes (answered asynchronously by the host); the list once it shows ``expect``."""
    nvim.command("Ai changes")
    return wait_for(lambda: expect in buffer_text(nvim, LIST) and buffer_text(nvim, LIST), timeout=10,
                    what=f"{expect!r} in the changes list")


def threeway_id(nvim) -> int:
    return wait_for(lambda: nvim.exec_lua("return require('acp_nvim.threeway').ids()[1]"), timeout=20,
                    what="the three-way view")


@pytest.fixture
def target(workspace) -> Path:
    path = workspace / "target.txt"
    path.write_text(ORIGINAL)
    return path


def test_edit_through_fs_into_a_clean_buffer(nvim, target):
    nvim.command(f"edit {target}")
    nvim.command("normal! 10G")
    run(nvim, f"edit {target}")
    assert target.read_text() == EDITED
    assert lines(nvim, target) == EDITED.splitlines()
    assert not nvim.current.buffer.options["modified"] and nvim.current.window.cursor[0] == 10
    nvim.command("normal! u")
    assert lines(nvim, target) == ORIGINAL.splitlines()


def test_edit_when_the_user_typed_after_the_agent_read_opens_three_way(nvim, target):
    nvim.command(f"edit {target}")
    done = turns_ended(nvim)
    nvim.command(f"Ai send edit {target}")
    wait_for(lambda: nvim.exec_lua(PENDING_LUA), timeout=20, what="the permission request")
    nvim.command(f"buffer {nvim.funcs.bufnr(str(target))}")
    nvim.command("normal! 5GAuser typed this\x1b")
    allow(nvim)
    view = threeway_id(nvim)
    assert buffer_text(nvim, f"acp://agent/{view}{target}") + "\n" == EDITED
    assert lines(nvim, target)[4] == "line 5user typed this" and target.read_text() == ORIGINAL
    nvim.exec_lua("require('acp_nvim.threeway').finish(...)", view, "mine")
    wait_for(lambda: turns_ended(nvim) > done, timeout=20)
    assert "kept their unsaved changes" in buffer_text(nvim, CHAT)
    assert lines(nvim, target)[4] == "line 5user typed this" and target.read_text() == ORIGINAL


def test_new_file_through_fs(nvim, workspace):
    path = workspace / "pkg" / "sub" / "created.txt"
    run(nvim, f"new-file {path}")
    assert path.read_text() == "created by the demo agent\n"


def test_agent_disk_write_under_a_clean_buffer_reloads_quietly(nvim, target):
    nvim.exec_lua(CAPTURE_NOTIFY)
    nvim.command(f"edit {target}")
    nvim.command("normal! 12Gzt")
    top = nvim.funcs.line("w0")
    run(nvim, f"edit-disk {target}")
    wait_for(lambda: lines(nvim, target) == EDITED.splitlines(), timeout=10, what="the reload")
    assert not nvim.current.buffer.options["modified"]
    assert nvim.current.window.cursor[0] == 12 and nvim.funcs.line("w0") == top
    nvim.exec_lua("_G.fcs = 0; vim.api.nvim_create_autocmd('FileChangedShell', {callback = function()"
                  " _G.fcs = _G.fcs + 1; vim.v.fcs_choice = '' end})")
    nvim.command("checktime")
    assert nvim.exec_lua("return _G.fcs") == 0, "no reload prompt is left for Neovim to show"
    assert not any("unsaved" in n for n in nvim.exec_lua("return _G.acp_test_notes"))
    nvim.command("normal! u")
    assert lines(nvim, target) == ORIGINAL.splitlines()


def test_agent_disk_write_under_a_modified_buffer_is_never_reloaded(nvim, target):
    nvim.exec_lua(CAPTURE_NOTIFY)
    nvim.command(f"edit {target}")
    nvim.command(f"Ai send edit-disk {target}")
    wait_for(lambda: nvim.exec_lua(PENDING_LUA), timeout=20, what="the permission request")
    nvim.command(f"buffer {nvim.funcs.bufnr(str(target))}")
    nvim.command("normal! 3GAmine\x1b")
    allow(nvim)
    view = threeway_id(nvim)
    wait_for(lambda: target.read_text() == EDITED, timeout=10)
    assert lines(nvim, target)[2] == "line 3mine", "the unsaved edit is still there"
    assert buffer_text(nvim, f"acp://base/{view}{target}") + "\n" == ORIGINAL
    assert buffer_text(nvim, f"acp://agent/{view}{target}") + "\n" == EDITED
    message = "changed on disk while its buffer has unsaved changes"
    assert any(message in n for n in nvim.exec_lua("return _G.acp_test_notes"))
    wait_for(lambda: message in buffer_text(nvim, CHAT), timeout=10)
    nvim.command("normal ga")
    assert lines(nvim, target) == EDITED.splitlines()
    assert not nvim.api.get_option_value("modified", {"buf": nvim.funcs.bufnr(str(target))})
    nvim.command(f"buffer {nvim.funcs.bufnr(str(target))}")
    nvim.command("normal! u")
    assert lines(nvim, target)[2] == "line 3mine", "the user's text is one undo step away"


def test_warns_once_when_a_disk_agent_works_on_an_unsaved_file(nvim, target):
    nvim.command(f"edit {target}")
    nvim.command("normal! Aunsaved\x1b")
    run(nvim, f"pieces {target}", answer=False)
    run(nvim, f"pieces {target}", answer=False)
    wait_for(lambda: "does not see them" in buffer_text(nvim, CHAT), timeout=10)
    assert buffer_text(nvim, CHAT).count("does not see them") == 1
    assert nvim.current.buffer[0] == "line 1unsaved"


def test_changes_lists_and_reverts_a_file_and_a_hunk(nvim, workspace, target):
    other = workspace / "other.txt"
    other.write_text(ORIGINAL)
    nvim.command(f"edit {target}")
    done = turns_ended(nvim)
    nvim.command(f"Ai send multi-edit {target} {other}")
    allow(nvim)
    wait_for(lambda: turns_ended(nvim) > done, timeout=20)
    assert target.read_text() == EDITED and other.read_text() == EDITED
    listing = show_changes(nvim, "M  target.txt  +2 -1")
    assert "M  other.txt  +2 -1" in listing
    # revert a whole file from the list
    nvim.command("call search('other.txt')")
    nvim.command("normal X")  # the revert runs in Python (through the opener): wait for it
    wait_for(lambda: other.read_text() == ORIGINAL, timeout=10)
    wait_for(lambda: "=  other.txt" in buffer_text(nvim, LIST), timeout=10)
    # revert one hunk in the diff view
    nvim.command("call search('target.txt')")
    nvim.command("execute \"normal \\<CR>\"")
    assert nvim.api.buf_get_name(0) == str(target) and nvim.current.window.options["diff"]
    nvim.command("normal! gg")
    nvim.command("normal do")
    nvim.command("write")
    assert target.read_text() == ORIGINAL + "added by the demo agent\n"


def test_changes_covers_agents_that_write_the_disk(nvim, target):
    run(nvim, f"edit-disk {target}")
    wait_for(lambda: target.read_text() == EDITED, timeout=10)
    nvim.command(f"edit {target}")  # loaded: the revert is one undo step in its buffer
    show_changes(nvim, "(on disk)")
    nvim.command("call search('target.txt')")
    nvim.command("normal X")
    wait_for(lambda: target.read_text() == ORIGINAL, timeout=10)
    wait_for(lambda: lines(nvim, target) == ORIGINAL.splitlines(), timeout=10)
    nvim.command(f"buffer {nvim.funcs.bufnr(str(target))}")
    nvim.command("normal! u")
    assert target.read_text() == ORIGINAL and lines(nvim, target) == EDITED.splitlines()


def test_changes_reverts_a_created_file(nvim, workspace):
    path = workspace / "made" / "new.txt"
    run(nvim, f"new-file {path}")
    show_changes(nvim, "A  made/new.txt  +1 -0")
    nvim.command("call search('new.txt')")
    nvim.command("normal X")
    wait_for(lambda: not path.exists(), timeout=10)


@pytest.mark.parametrize("presses", [1, 2])
def test_changes_revert_never_overwrites_unsaved_edits_unasked(nvim, workspace, presses):
    nvim.exec_lua(CAPTURE_NOTIFY)
    other = workspace / "other.txt"
    other.write_text(ORIGINAL)
    nvim.command(f"edit {other}")
    done = turns_ended(nvim)
    nvim.command(f"Ai send multi-edit {other} {other}")
    allow(nvim)
    wait_for(lambda: turns_ended(nvim) > done, timeout=20)
    assert other.read_text() == EDITED
    nvim.command(f"buffer {nvim.funcs.bufnr(str(other))}")
    nvim.command("normal! Gounsaved by me\x1b")
    mine = lines(nvim, other)
    show_changes(nvim, "other.txt")
    nvim.command("call search('other.txt')")
    nvim.command("normal X")
    refused = "not reverted: it has unsaved changes"
    wait_for(lambda: any(refused in n for n in nvim.exec_lua("return _G.acp_test_notes")), timeout=10, what=refused)
    assert lines(nvim, other) == mine and other.read_text() == EDITED
    assert nvim.api.get_mode()["blocking"] is False, "no modal question"
    if presses == 1:
        return
    nvim.command("normal X")  # asked again for the same unsaved text: revert it
    wait_for(lambda: other.read_text() == ORIGINAL, timeout=10)
    assert lines(nvim, other) == ORIGINAL.splitlines()
    wait_for(lambda: not nvim.api.get_option_value("modified", {"buf": nvim.funcs.bufnr(str(other))}),
             timeout=10, what="the buffer saved")  # the file is written first, then the buffer marked saved
    nvim.command(f"buffer {nvim.funcs.bufnr(str(other))}")
    nvim.command("normal! u")
    assert lines(nvim, other) == mine, "the user's unsaved text is one undo step away"


def test_changes_revert_names_bad_input(nvim, workspace, target):
    nvim.exec_lua(CAPTURE_NOTIFY)
    run(nvim, f"edit-disk {target}")
    for args, expect in [("", "usage: :Ai changes revert {file}"),
                         (" nothere.txt", "the agent did not change it")]:
        nvim.command(f"Ai changes revert{args}")
        wait_for(lambda expect=expect: any(expect in n for n in nvim.exec_lua("return _G.acp_test_notes")),
                 timeout=10, what=expect)
    assert target.read_text() == EDITED


def test_capabilities_match_what_is_implemented():
    from acp_nvim.core.agent.process import CAPABILITIES

    assert CAPABILITIES.fs.read_text_file and CAPABILITIES.fs.write_text_file
