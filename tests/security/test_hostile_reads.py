"""Buffers that are no longer the file at their name, against a real Neovim, the real host and a
hostile agent over the real wire (hostile_reads.py): nothing outside reaches the agent.

Neovim loads a buffer through a workspace symlink to a file outside (or loads a file that is then
renamed away); the test removes or replaces what is at that name; the agent reads the name with
``fs/read_text_file`` and asks the editor's MCP tools about it. A buffer is served only while the
file it was read from is the file the opener finds at its name now; otherwise the disk answers,
or an error. MCP opens of a FIFO, ``/dev/zero`` or a symlink to outside fail at once and Neovim
stays responsive. Each test ends with: no outside byte reached the agent, nothing outside changed.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from helpers import wait_for
from helpers.files import tree

pytestmark = pytest.mark.timeout(300)

AGENT = Path(__file__).with_name("hostile_reads.py")
MARK = "OUTSIDE"

SETUP = """
local python, script = ...
vim.notify = function() end
require('acp_nvim').setup({
  agents = {reads = {command = python, args = {script}}},
  default_agent = 'reads',
})
"""


@pytest.fixture
def outside(tmp_path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text(f"{MARK} SECRET key material\n")
    (folder / "other.txt").write_text(f"{MARK} OTHER\n")
    return folder



class Agent:
    """The hostile agent's session in this Neovim; every answer it got, for the final check."""

    def __init__(self, nvim, tmp: Path) -> None:
        self.nvim, self.tmp = nvim, tmp
        self.answers: list[dict] = []

    def send(self, request: dict) -> dict:
        out = self.tmp / f"reads-{os.urandom(4).hex()}.json"
        self.nvim.command("Ai send " + json.dumps({**request, "out": str(out)}))
        wait_for(lambda: out.exists() and out.stat().st_size > 0, timeout=60, what=f"hostile {request['op']}")
        answer = json.loads(out.read_text())
        self.answers.append(answer)
        return answer

    def read(self, path: Path) -> dict:
        return self.send({"op": "read", "path": str(path)})

    def tool(self, name: str, args: dict | None = None) -> dict:
        return self.send({"op": "mcp", "tool": name, "args": args or {}})

    def nothing_leaked(self) -> None:
        leaked = [a for a in self.answers if MARK in json.dumps(a)]
        assert leaked == [], f"outside bytes reached the agent: {leaked[:3]}"


@pytest.fixture
def agent(nvim, workspace, tmp_path) -> Agent:
    """The session, started (the host tracks every buffer read from here on) with one honest read."""
    nvim.exec_lua(SETUP, sys.executable, str(AGENT))
    (workspace / "hello.txt").write_text("hello\n")
    started = Agent(nvim, tmp_path)
    assert started.read(workspace / "hello.txt") == {"ok": True, "content": "hello\n"}
    return started


def load(nvim, path: Path) -> int:
    """``:edit`` ``path`` in Neovim, as the user would; its buffer number."""
    nvim.command(f"edit {path}")
    return nvim.funcs.bufnr(str(path))


def lines(nvim, buf: int) -> str:
    return "\n".join(nvim.api.buf_get_lines(buf, 0, -1, False))


def test_a_buffer_read_through_a_symlink_to_outside_is_never_served(nvim, workspace, outside, agent):
    before = tree(outside)
    key = workspace / "key.txt"
    key.symlink_to(outside / "secret.txt")
    buf = load(nvim, key)
    assert MARK in lines(nvim, buf), "Neovim read the file outside through the link"

    linked = agent.read(key)
    assert not linked["ok"] and "outside the workspace" in linked["message"]
    key.unlink()  # removed: nothing at the name
    removed = agent.read(key)
    assert not removed["ok"] and "no such file" in removed["message"], removed
    key.write_text("a regular file now\n")  # replaced by a regular file
    assert agent.read(key) == {"ok": True, "content": "a regular file now\n"}
    key.unlink()
    (workspace / "inside.txt").write_text("inside target\n")
    key.symlink_to(workspace / "inside.txt")  # a link to a file inside: its buffer's name still matches
    assert agent.read(key) == {"ok": True, "content": "inside target\n"}
    key.unlink()
    key.symlink_to(outside / "other.txt")  # a link elsewhere outside
    refused = agent.read(key)
    assert not refused["ok"] and "outside the workspace" in refused["message"]

    # the turn-end reconcile may reload the clean buffer from the file at its name (never from outside)
    shown = lines(nvim, buf)
    assert MARK in shown or shown in ("a regular file now", "inside target"), shown
    agent.nothing_leaked()
    assert tree(outside) == before
    assert nvim.api.get_mode()["blocking"] is False


def test_a_buffer_whose_file_was_renamed_away_is_not_served_for_the_new_file(nvim, workspace, outside, agent):
    before = tree(outside)
    path = workspace / "notes.txt"
    path.write_text("original\n")
    buf = load(nvim, path)
    nvim.api.buf_set_lines(buf, 0, -1, False, [f"{MARK} unsaved text of the old file"])
    assert agent.read(path) == {"ok": True, "content": f"{MARK} unsaved text of the old file\n"}, \
        "the user's view of that very file: its unsaved text is served"
    agent.answers.clear()  # that answer was the user's own buffer, read on purpose

    path.rename(workspace / "notes.old")
    removed = agent.read(path)
    assert not removed["ok"] and "no such file" in removed["message"], removed
    path.write_text("another file at the name\n")
    assert agent.read(path) == {"ok": True, "content": "another file at the name\n"}

    nvim.command("edit!")  # the user reloads: the buffer is the new file's view now
    nvim.api.buf_set_lines(buf, 0, -1, False, ["edited, unsaved"])
    with path.open("a") as handle:  # written in place by someone else: still that file
        handle.write("appended\n")
    assert agent.read(path) == {"ok": True, "content": "edited, unsaved\n"}

    agent.nothing_leaked()
    assert tree(outside) == before


def test_the_mcp_tools_never_report_such_buffers(nvim, workspace, outside, agent):
    before = tree(outside)
    key = workspace / "key.py"
    key.symlink_to(outside / "secret.txt")
    buf = load(nvim, key)
    nvim.command("normal! ggVG\x1b")  # the user's last visual selection is in it
    nvim.exec_lua("""
        local buf = ...
        vim.diagnostic.set(vim.api.nvim_create_namespace('linter'), buf,
          { { lnum = 0, col = 0, message = 'OUTSIDE in a message', severity = vim.diagnostic.severity.ERROR } })""",
                  buf)
    key.unlink()
    key.write_text("print('inside')\n")  # a regular file at the name now: not what the buffer holds

    selection = agent.tool("selection")
    assert selection["ok"] and json.loads(selection["text"])["selection"] is None, selection
    buffers = agent.tool("open_buffers")
    listed = json.loads(buffers["text"])
    assert str(key) not in [b["path"] for b in listed["buffers"]] and listed["not_the_file"], listed
    every = json.loads(agent.tool("diagnostics")["text"])
    assert every["diagnostics"] == [] and every["not_the_file"], every
    one = json.loads(agent.tool("diagnostics", {"path": str(key)})["text"])
    assert one["diagnostics"] == [], one
    symbols = agent.tool("symbols", {"path": str(key)})
    assert not symbols["ok"] or "OUTSIDE" not in symbols["text"]

    key.unlink()  # nothing at the name: still not reported
    assert json.loads(agent.tool("open_buffers")["text"])["not_the_file"]

    honest = load(nvim, workspace / "hello.txt")  # an honest buffer is still reported
    assert honest > 0
    names = [b["path"] for b in json.loads(agent.tool("open_buffers")["text"])["buffers"]]
    assert str(workspace / "hello.txt") in names
    agent.nothing_leaked()
    assert tree(outside) == before


def test_mcp_opens_of_fifos_devices_and_links_out_fail_at_once(nvim, workspace, outside, agent):
    before = tree(outside)
    os.mkfifo(workspace / "fifo")
    (workspace / "zero-link").symlink_to("/dev/zero")
    (workspace / "out-link").symlink_to(outside / "secret.txt")
    for target in (workspace / "fifo", Path("/dev/zero"), workspace / "zero-link", workspace / "out-link"):
        for name, args in (("open_file", {}), ("definition", {"line": 1, "column": 1}),
                           ("symbols", {})):
            answer = agent.tool(name, {"path": str(target), **args})
            assert not answer["ok"], (target, name, answer)
            assert nvim.api.get_mode()["blocking"] is False
    assert nvim.funcs.bufnr(str(workspace / "fifo")) == -1, "the FIFO never became a buffer"

    # swapped for a FIFO after the opener's check: Lua sees it is not that file and loads nothing
    regular = workspace / "regular.txt"
    regular.write_text("x\n")
    checked = os.stat(regular)
    regular.unlink()
    os.mkfifo(regular)
    shown = nvim.exec_lua("return require('acp_nvim.host.editor_tools').open_file(..., 1, {select(2, ...)})",
                          str(regular), checked.st_dev, checked.st_ino)
    assert "changed on disk" in shown["error"]
    started = nvim.exec_lua("return require('acp_nvim.host.editor_tools').lsp(0, ...)",
                            {"kind": "definition", "path": str(regular), "line": 1, "column": 1,
                             "expect": [checked.st_dev, checked.st_ino]})
    assert "changed on disk" in started["error"]
    assert nvim.api.get_mode()["blocking"] is False
    assert nvim.funcs.bufnr(str(regular)) == -1

    agent.nothing_leaked()
    assert stat.S_ISFIFO((workspace / "fifo").lstat().st_mode)
    assert tree(outside) == before


@pytest.mark.parametrize("method", ["fs/read_text_file", "_hostile/deep"])
def test_a_request_nested_too_deep_is_refused_as_invalid_and_the_connection_goes_on(nvim, workspace, agent, method):
    """A value nested 900 deep would be read, then fail inside the SDK's validation as an internal
    error; it is refused before it is handled, saying why, and the next request is answered."""
    hello = workspace / "hello.txt"
    for depth in (65, 900):
        refused = agent.send({"op": "deep", "method": method, "depth": depth, "path": str(hello)})
        assert not refused["ok"] and refused["code"] in (-32600, -32700), refused
        assert "nested deeper than 64 levels" in refused["message"], refused
    if method == "fs/read_text_file":
        assert agent.send({"op": "deep", "method": method, "depth": 64, "path": str(hello)}) == {"ok": True}
    assert agent.read(hello) == {"ok": True, "content": "hello\n"}
    assert nvim.api.get_mode()["blocking"] is False
