"""fs/* end to end: real Neovim, the real Python host, a real agent process sending exact requests.

The probe agent (files_probe_agent.py) sends paths verbatim, so relative paths, ``..`` and
symlinks reach the client as an agent would send them.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from helpers import NOTIFY, buffer_text, notes, wait_for

pytestmark = pytest.mark.timeout(60)

PROBE = Path(__file__).with_name("files_probe_agent.py")
PYTHON_DIR = Path(__file__).resolve().parents[2] / "python"
CHAT = "acp://chat/probe/1"

SETUP = """
local python, script = ...
""" + NOTIFY + """require('acp_nvim').setup({
  agents = {probe = {command = python, args = {script}}},
  default_agent = 'probe',
  workspace_roots = _G.acp_test_roots or {},
  -- these tests are about confinement, buffers and three-way views, not review: writes land as
  -- under auto-edit (tests/security/test_hostile_writes.py tests the write gate under ask)
  permissions = {policy = 'auto-edit'},
})
"""


def use_probe(nvim, roots: list[str] | None = None) -> None:
    nvim.exec_lua("_G.acp_test_roots = ...", roots or [])
    nvim.exec_lua(SETUP, sys.executable, str(PROBE))


def probe(nvim, tmp: Path, op: str, **request) -> dict:
    """Send one request through the agent; its JSON outcome."""
    out = tmp / f"probe-{os.urandom(4).hex()}.json"
    nvim.command("Ai send " + json.dumps({"op": op, "out": str(out), **request}))
    wait_for(lambda: out.exists() and out.stat().st_size > 0, timeout=20, what=f"probe {op}")
    return json.loads(out.read_text())



@pytest.fixture
def outside(tmp_path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("secret\n")
    return folder


def edit_unsaved(nvim, path: Path, keys: str) -> None:
    nvim.command(f"edit {path}")
    nvim.command(f"normal! {keys}")
    assert nvim.current.buffer.options["modified"]


# -- fs/read_text_file -------------------------------------------------------------------------


def test_read_serves_the_unsaved_buffer(nvim, workspace, tmp_path):
    use_probe(nvim)
    path = workspace / "notes.txt"
    path.write_text("on disk\n")
    edit_unsaved(nvim, path, "A and unsaved\x1b")
    assert probe(nvim, tmp_path, "read", path=str(path)) == {"ok": True, "content": "on disk and unsaved\n"}
    (workspace / "closed.txt").write_text("from disk\n")
    assert probe(nvim, tmp_path, "read", path=str(workspace / "closed.txt"))["content"] == "from disk\n"


LINE_LIMIT = [
    ({}, "l1\r\nl2 unsaved\r\nl3"),
    ({"line": 2}, "l2 unsaved\r\nl3"),
    ({"line": 3}, "l3"),  # last line without newline
    ({"line": 4}, ""),  # past the end
    ({"line": 50, "limit": 2}, ""),
    ({"limit": 0}, ""),
    ({"line": 2, "limit": 0}, ""),
    ({"limit": 1}, "l1\r\n"),  # only limit
    ({"line": 2, "limit": 1}, "l2 unsaved\r\n"),  # CRLF kept
    ({"line": 2, "limit": 9}, "l2 unsaved\r\nl3"),
]


def test_line_and_limit_on_a_dirty_crlf_buffer_without_final_newline(nvim, workspace, tmp_path):
    use_probe(nvim)
    path = workspace / "dos.txt"
    path.write_bytes(b"l1\r\nl2\r\nl3")
    edit_unsaved(nvim, path, "2GA unsaved\x1b")
    for window, expected in LINE_LIMIT:
        assert probe(nvim, tmp_path, "read", path=str(path), **window) == {"ok": True, "content": expected}, window


def test_read_errors_are_clear_json_rpc_errors(nvim, workspace, tmp_path):
    use_probe(nvim)
    (workspace / "latin1.txt").write_bytes(b"caf\xe9\n")
    (workspace / "folder").mkdir()
    with open(workspace / "huge.txt", "wb") as handle:
        handle.truncate(33 * 1024 * 1024)  # sparse: over the 32 MiB cap without writing it
    cases = {
        "latin1.txt": (-32602, "not valid UTF-8 text"),
        "folder": (-32602, "is a directory"),
        "missing.txt": (-32002, "no such file"),
        "huge.txt": (-32602, "file too large (34603008 bytes; the limit is 33554432 bytes)"),
    }
    for name, (code, reason) in cases.items():
        result = probe(nvim, tmp_path, "read", path=str(workspace / name))
        assert result["ok"] is False and result["code"] == code, (name, result)
        assert reason in result["message"] and str(workspace / name) in result["message"], result
    assert nvim.eval("1 + 1") == 2


# -- confinement (security) --------------------------------------------------------------------


def escape_paths(workspace: Path, outside: Path) -> dict[str, str]:
    (workspace / "link-out.txt").symlink_to(outside / "secret.txt")
    (workspace / "link-dir").symlink_to(outside)
    (workspace / "dangling-out.txt").symlink_to(outside / "created-through-link.txt")
    os.mkfifo(workspace / "fifo")
    return {
        "relative": "secret.txt",
        "dot-relative": "./notes.txt",
        "dotdot": f"{workspace}/../outside/secret.txt",
        "dotdot-deep": f"{workspace}/a/b/../../../outside/secret.txt",
        "absolute-outside": str(outside / "secret.txt"),
        "etc": "/etc/hostname",
        "symlink-file": str(workspace / "link-out.txt"),
        "symlink-dir": str(workspace / "link-dir" / "secret.txt"),
        "symlink-dir-new": str(workspace / "link-dir" / "new.txt"),
        "dangling-symlink": str(workspace / "dangling-out.txt"),
        "fifo": str(workspace / "fifo"),
        "device": "/dev/null",
    }


def test_no_path_outside_the_roots_can_be_read_or_written(nvim, workspace, tmp_path, outside):
    use_probe(nvim)
    (workspace / "notes.txt").write_text("inside\n")
    before = {p: p.read_bytes() for p in outside.iterdir()}
    for name, path in escape_paths(workspace, outside).items():
        read = probe(nvim, tmp_path, "read", path=path)
        assert read["ok"] is False and read["code"] == -32602, (name, read)
        assert "acp.nvim refused" in read["message"], (name, read)
        wrote = probe(nvim, tmp_path, "write", path=path, content="pwned\n")
        assert wrote["ok"] is False and "acp.nvim refused" in wrote["message"], (name, wrote)
    assert {p: p.read_bytes() for p in outside.iterdir()} == before, "nothing outside changed or appeared"
    assert Path("/dev/null").is_char_device()
    shown = notes(nvim)
    assert any("refused to read secret.txt: path must be absolute" in n for n in shown)
    assert any("refused to write" in n and "outside the workspace roots" in n for n in shown)
    assert any("not a regular file" in n for n in shown)
    chat = buffer_text(nvim, CHAT)
    assert "refused to write" in chat and str(outside / "secret.txt") in chat


def test_configured_roots_extend_the_workspace(nvim, workspace, tmp_path, outside):
    use_probe(nvim, [str(outside)])
    assert probe(nvim, tmp_path, "read", path=str(outside / "secret.txt"))["content"] == "secret\n"
    (workspace / "link-out.txt").symlink_to(outside / "secret.txt")
    assert probe(nvim, tmp_path, "read", path=str(workspace / "link-out.txt"))["content"] == "secret\n"
    assert probe(nvim, tmp_path, "read", path="/etc/hostname")["ok"] is False


# -- fs/write_text_file ------------------------------------------------------------------------


def test_write_into_a_clean_loaded_buffer_is_one_undo_step_and_saved(nvim, workspace, tmp_path):
    use_probe(nvim)
    path = workspace / "code.py"
    original = "".join(f"line {n}\n" for n in range(1, 31))
    path.write_text(original)
    nvim.command(f"edit {path}")
    nvim.command("normal! 15Gmx")
    new = original.replace("line 2\n", "line 2 agent\n").replace("line 30\n", "line 30\nline 31 agent\n")
    assert probe(nvim, tmp_path, "write", path=str(path), content=new) == {"ok": True}
    assert path.read_text() == new
    assert nvim.current.buffer[:] == new.splitlines()
    assert not nvim.current.buffer.options["modified"]
    assert nvim.current.window.cursor[0] == 15 and nvim.funcs.line("'x") == 15
    nvim.command("normal! u")
    assert nvim.current.buffer[:] == original.splitlines(), "u takes the agent's edit back in one step"


def test_write_over_unsaved_changes_the_agent_never_read_waits_for_the_user(nvim, workspace, tmp_path):
    use_probe(nvim)
    path = workspace / "dirty.txt"
    path.write_text("base\n")
    edit_unsaved(nvim, path, "Ayours\x1b")
    out = tmp_path / "w.json"
    nvim.command("Ai send " + json.dumps({"op": "write", "path": str(path), "content": "base agent\n",
                                          "out": str(out)}))
    view = wait_for(lambda: nvim.exec_lua("return require('acp_nvim.threeway').ids()[1]"), timeout=20)
    names = sorted(nvim.api.buf_get_name(nvim.api.win_get_buf(w)) for w in nvim.api.tabpage_list_wins(0))
    assert names == sorted([f"acp://agent/{view}{path}", f"acp://base/{view}{path}", str(path)])
    assert buffer_text(nvim, f"acp://agent/{view}{path}") == "base agent"
    assert buffer_text(nvim, f"acp://base/{view}{path}") == "base"
    assert nvim.current.buffer[:] == ["baseyours"] and path.read_text() == "base\n"
    assert not out.exists(), "the write waits for the decision"
    nvim.command("normal gm")
    result = wait_for(lambda: out.exists() and out.stat().st_size and json.loads(out.read_text()), timeout=10)
    assert result["ok"] is False and "kept their unsaved changes" in result["message"]
    assert nvim.funcs.bufnr(str(path)) != -1 and buffer_text(nvim, str(path)) == "baseyours"
    assert path.read_text() == "base\n" and len(nvim.api.list_tabpages()) == 1


def test_taking_the_agents_text_in_the_three_way_view_writes_it(nvim, workspace, tmp_path):
    use_probe(nvim)
    path = workspace / "take.txt"
    path.write_text("one\ntwo\n")
    edit_unsaved(nvim, path, "Gomine\x1b")
    out = tmp_path / "w.json"
    nvim.command("Ai send " + json.dumps({"op": "write", "path": str(path), "content": "one\ntwo\nagent\n",
                                          "out": str(out)}))
    wait_for(lambda: nvim.exec_lua("return require('acp_nvim.threeway').ids()[1]"), timeout=20)
    nvim.command("normal ga")
    result = wait_for(lambda: out.exists() and out.stat().st_size and json.loads(out.read_text()), timeout=10)
    assert result == {"ok": True}
    assert path.read_text() == "one\ntwo\nagent\n" and buffer_text(nvim, str(path)) == "one\ntwo\nagent"
    nvim.command(f"buffer {nvim.funcs.bufnr(str(path))}")
    nvim.command("normal! u")
    assert nvim.current.buffer[:] == ["one", "two", "mine"], "the user's text is one undo step away"


def test_write_after_reading_the_unsaved_text_applies(nvim, workspace, tmp_path):
    use_probe(nvim)
    path = workspace / "seen.txt"
    path.write_text("base\n")
    edit_unsaved(nvim, path, "A seen\x1b")
    assert probe(nvim, tmp_path, "read", path=str(path))["content"] == "base seen\n"
    assert probe(nvim, tmp_path, "write", path=str(path), content="base seen agent\n") == {"ok": True}
    assert path.read_text() == "base seen agent\n" and not nvim.current.buffer.options["modified"]
    assert not nvim.exec_lua("return require('acp_nvim.threeway').ids()[1]")


def test_new_file_with_parent_folders(nvim, workspace, tmp_path):
    use_probe(nvim)
    target = workspace / "src" / "deep" / "new.py"
    assert probe(nvim, tmp_path, "write", path=str(target), content="print('hi')\n") == {"ok": True}
    assert target.read_text() == "print('hi')\n"
    assert probe(nvim, tmp_path, "read", path=str(target))["content"] == "print('hi')\n"


def test_write_into_a_buffer_that_is_not_modifiable_is_a_clear_error(nvim, workspace, tmp_path):
    use_probe(nvim)
    path = workspace / "locked.txt"
    path.write_text("locked\n")
    nvim.command(f"edit {path}")
    nvim.command("setlocal nomodifiable")
    result = probe(nvim, tmp_path, "write", path=str(path), content="agent\n")
    assert result["ok"] is False and result["code"] == -32603
    assert result["message"] == f"{path}: not written: the buffer is not modifiable", result
    assert path.read_text() == "locked\n"
