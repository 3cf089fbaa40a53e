"""A hostile agent against a real Neovim and the real host: nothing escapes the workspace.

The agent (hostile_agent.py) flips a workspace folder, a file and a file loaded in a buffer
between the real thing and a symlink to a folder outside, in tight loops on threads of its own,
while it sends reads, writes and buffer writes as fast as they are answered. Hard links to
outside files, a FIFO, a device node and ``/dev/zero`` get their own requests. Each test asserts
that no byte from outside reached the agent and that no file outside was created or changed
(content, mode, inode or time). ``ATTACK_FIGURES`` prints the counts (``-s`` shows them).
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

pytestmark = pytest.mark.timeout(600)

AGENT = Path(__file__).with_name("hostile_agent.py")
READS, WRITES, BUFFER_WRITES = 500, 500, 100
MARK = "OUTSIDE"

SETUP = """
local python, script = ...
_G.acp_test_notes = {}
_G.acp_test_threeways = 0
vim.notify = function(msg, level) table.insert(_G.acp_test_notes, msg) end
-- a held write's three-way view: the user keeps their buffer at once (the agent gets an error)
require('acp_nvim.threeway').open = function(id, spec)
  _G.acp_test_threeways = _G.acp_test_threeways + 1
  vim.schedule(function() require('acp_nvim.host').call.answer(id, 'mine') end)
end
require('acp_nvim').setup({
  agents = {hostile = {command = python, args = {script}}},
  default_agent = 'hostile',
  permissions = {policy = 'auto-edit'},
})
"""


@pytest.fixture
def outside(tmp_path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text(f"{MARK} SECRET\n")
    (folder / "target.txt").write_text(f"{MARK} TARGET\n")
    (folder / "victim.txt").write_text(f"{MARK} VICTIM\n")
    return folder



def send(nvim, tmp: Path, request: dict, timeout: float = 30) -> dict:
    out = tmp / f"hostile-{os.urandom(4).hex()}.json"
    nvim.command("Ai send " + json.dumps({**request, "out": str(out)}))
    wait_for(lambda: out.exists() and out.stat().st_size > 0, timeout=timeout, what=f"hostile {request['op']}")
    return json.loads(out.read_text())


def request(nvim, tmp: Path, kind: str, path: str | Path, content: str = "") -> dict:
    return send(nvim, tmp, {"op": "request", "kind": kind, "path": str(path), "content": content})


def no_escape(results: list[dict]) -> None:
    leaked = [r for r in results if r.get("ok") and MARK in r.get("content", "")]
    assert leaked == [], f"outside bytes reached the agent: {leaked[:3]}"


def test_racing_symlink_flips_never_reach_outside(nvim, workspace, outside, tmp_path):
    nvim.exec_lua(SETUP, sys.executable, str(AGENT))
    (workspace / "dir").mkdir()
    (workspace / "dir" / "secret.txt").write_text("inside\n")
    (workspace / "leaf.txt").write_text("leaf inside\n")
    loaded = workspace / "loaded.txt"
    loaded.write_text("loaded\n")
    nvim.command(f"edit {loaded}")
    before = tree(outside)
    result = send(nvim, tmp_path, {"op": "attack", "ws": str(workspace), "outside": str(outside),
                                   "reads": READS, "writes": WRITES, "buffer_writes": BUFFER_WRITES,
                                   "buffer_file": str(loaded)}, timeout=540)
    results = result["results"]
    reads = [r for r in results if r["kind"] == "read"]
    writes = [r for r in results if r["kind"] == "write" and r["path"] != str(loaded)]
    buffer_writes = [r for r in results if r["kind"] == "write" and r["path"] == str(loaded)]
    assert (len(reads), len(writes), len(buffer_writes)) == (READS, WRITES, BUFFER_WRITES)
    assert all(n > 0 for n in result["flips"]), result["flips"]
    no_escape(reads)
    assert tree(outside) == before, "a file outside the workspace was created or changed"
    assert nvim.api.get_mode()["blocking"] is False
    threeways = nvim.exec_lua("return _G.acp_test_threeways")
    print(f"\nATTACK_FIGURES reads={len(reads)} (ok {sum(r['ok'] for r in reads)}) "
          f"writes={len(writes)} (ok {sum(r['ok'] for r in writes)}) "
          f"buffer_writes={len(buffer_writes)} (ok {sum(r['ok'] for r in buffer_writes)}, "
          f"held for the user {threeways}) flips={result['flips']} escapes=0")


def test_hard_links_to_outside_are_never_read_nor_written_through(nvim, workspace, outside, tmp_path):
    nvim.exec_lua(SETUP, sys.executable, str(AGENT))
    hard = workspace / "hard.txt"
    os.link(outside / "victim.txt", hard)
    before = tree(outside)
    read = request(nvim, tmp_path, "read", hard)
    assert not read["ok"] and "hard links" in read["message"]
    wrote = request(nvim, tmp_path, "write", hard, "through the link\n")
    assert wrote["ok"], wrote
    assert hard.read_text() == "through the link\n"
    assert tree(outside) == before, "the outside name of the hard link changed"
    wait_for(lambda: any("hard links" in n for n in nvim.exec_lua("return _G.acp_test_notes")), timeout=10)


def test_fifos_devices_and_dev_zero_get_an_error_at_once(nvim, workspace, outside, tmp_path):
    nvim.exec_lua(SETUP, sys.executable, str(AGENT))
    os.mkfifo(workspace / "fifo")
    (workspace / "zero-link").symlink_to("/dev/zero")
    targets = [workspace / "fifo", workspace / "zero-link", Path("/dev/zero")]
    if os.geteuid() == 0:  # a device node inside the workspace itself (root only)
        os.mknod(workspace / "zero", stat.S_IFCHR | 0o666, os.makedev(1, 5))
        targets.append(workspace / "zero")
    before = tree(outside)
    for path in targets:
        read = request(nvim, tmp_path, "read", path)
        assert not read["ok"] and read["code"] in (-32602, -32603), read
        wrote = request(nvim, tmp_path, "write", path, "x\n")
        assert not wrote["ok"], (path, wrote)
    assert stat.S_ISFIFO((workspace / "fifo").lstat().st_mode)
    assert tree(outside) == before
    assert nvim.api.get_mode()["blocking"] is False


PENDING = """
local p = require('acp_nvim.question.permission').pending()[1]
if p then
  for _, o in ipairs(p.q.options) do
    if o.kind == 'reject_once' then return {'prompt', p.id, o.id} end
  end
end
local ok, review = pcall(require, 'acp_nvim.review')
local r = ok and review.pending()[1]
if r then return {'review', r.id} end
"""


ALL_BUFFERS = """
local all = {}
for _, b in ipairs(vim.api.nvim_list_bufs()) do
  if vim.api.nvim_buf_is_loaded(b) then all[#all + 1] = vim.api.nvim_buf_get_lines(b, 0, -1, false) end
end
return all
"""


def reject_next(nvim) -> str:
    """Reject the next permission request, wherever it is shown; where it was shown."""
    kind, qid, *option = wait_for(lambda: nvim.exec_lua(PENDING), timeout=20, what="the request shown")
    if kind == "prompt":
        nvim.exec_lua("require('acp_nvim.question.permission').choose(...)", qid, option[0])
    else:
        nvim.exec_lua("require('acp_nvim.review').decide_all(...)", qid, "rejected")
    return kind


def test_diff_reviews_of_fifos_and_devices_are_shown_at_once_and_read_nothing(nvim, workspace, outside, tmp_path):
    nvim.exec_lua(SETUP, sys.executable, str(AGENT))
    os.mkfifo(workspace / "fifo")
    (workspace / "zero-link").symlink_to("/dev/zero")
    (workspace / "secret-link").symlink_to(outside / "secret.txt")
    targets = [workspace / "fifo", workspace / "zero-link", workspace / "secret-link", Path("/dev/zero")]
    if os.geteuid() == 0:
        os.mknod(workspace / "zero", stat.S_IFCHR | 0o666, os.makedev(1, 5))
        targets.append(workspace / "zero")
    before = tree(outside)
    for path in targets:
        out = tmp_path / f"review-{os.urandom(4).hex()}.json"
        nvim.command("Ai send " + json.dumps({"op": "review", "path": str(path), "out": str(out)}))
        reject_next(nvim)
        wait_for(lambda out=out: out.exists() and out.stat().st_size > 0, timeout=20, what=f"review of {path}")
        answer = json.loads(out.read_text())
        assert answer["ok"] and answer["outcome"].get("option_id", answer["outcome"].get("optionId")) == "no", answer
        assert MARK not in json.dumps(nvim.exec_lua("return _G.acp_test_notes"))
        assert MARK not in json.dumps(nvim.exec_lua(ALL_BUFFERS)), "outside bytes reached a Neovim buffer"
    assert tree(outside) == before and stat.S_ISFIFO((workspace / "fifo").lstat().st_mode)
    assert nvim.api.get_mode()["blocking"] is False
