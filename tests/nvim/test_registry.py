"""Agents from the ACP registry in real Neovim: a registry fixture served over local HTTP, a binary
agent downloaded, checked against its sha256, unpacked and started with no setup() line, the cache
(hourly, offline, a failed fetch keeps it), and a real npx-distributed pinned agent from npm."""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import re
import sys
import tarfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pynvim
import pytest

from conftest import INIT, NVIM, ROOT
from helpers import buffer_text, notes, wait_for
from helpers.lua import NOTIFY, SELECT
from shell_env import ENV, shell_argv

pytestmark = pytest.mark.timeout(120)

NPX_PACKAGE = "@zed-industries/codex-acp@0.16.0"
"""A pinned agent of tests/agents/package.json (its npm tarball is small; npm's cache has it after
`make agents`)."""


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def tiny_archive() -> bytes:
    """A tar.gz with bin/tiny-agent: this checkout's demo agent, a real ACP agent."""
    script = f'#!/bin/sh\nPYTHONPATH="{ROOT / "python"}" exec "{sys.executable}" -m acp_nvim.demo_agent "$@"\n'
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        info = tarfile.TarInfo("bin/tiny-agent")
        info.size, info.mode = len(script), 0o755
        tar.addfile(info, io.BytesIO(script.encode()))
    return out.getvalue()


@pytest.fixture
def served(tmp_path):
    """A folder served over HTTP on loopback: (folder, base url, stop)."""
    root = tmp_path / "served"
    root.mkdir()
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    stopped = []

    def stop() -> None:
        if not stopped:
            server.shutdown()
            server.server_close()
            stopped.append(True)

    yield root, f"http://127.0.0.1:{server.server_address[1]}", stop
    stop()


def registry(root: Path, base: str) -> str:
    archive = tiny_archive()
    (root / "tiny.tar.gz").write_bytes(archive)
    platform = {"x86_64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}[os.uname().machine]
    key = f"{'darwin' if sys.platform == 'darwin' else 'linux'}-{platform}"
    agents = [
        {"id": "tiny", "name": "Tiny", "version": "1.0.0", "description": "the demo agent as a binary",
         "distribution": {"binary": {key: {"archive": f"{base}/tiny.tar.gz", "cmd": "./bin/tiny-agent",
                                           "sha256": hashlib.sha256(archive).hexdigest()}}}},
        {"id": "bad-sum", "name": "Bad sum", "version": "2.0.0", "description": "a download that was changed",
         "distribution": {"binary": {key: {"archive": f"{base}/tiny.tar.gz", "cmd": "./bin/tiny-agent",
                                           "sha256": "0" * 64}}}},
        {"id": "codex-acp", "name": "Codex", "version": "0.16.0", "description": "OpenAI's Codex",
         "distribution": {"npx": {"package": NPX_PACKAGE}}},
    ]
    (root / "registry.json").write_text(json.dumps({"version": "1.0.0", "agents": agents}))
    return f"{base}/registry.json"


def started(tmp_path: Path, url: str) -> pynvim.Nvim:
    """Neovim with its own data and cache folders, configured with the registry at ``url``."""
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    env = [f"XDG_DATA_HOME={tmp_path / 'data'}", f"XDG_CACHE_HOME={tmp_path / 'cache'}"]
    instance = pynvim.attach("child", argv=shell_argv(workspace, [ENV, *env, NVIM, "-u", INIT, "--embed",
                                                                   "--headless"]))
    instance.command(f"cd {workspace}")
    instance.exec_lua(NOTIFY + SELECT)
    instance.exec_lua("require('acp_nvim').setup({ registry = { url = ... } })", url)
    return instance


def agents_dir(tmp_path: Path) -> Path:
    return tmp_path / "data" / "nvim" / "acp_nvim" / "agents"


def test_a_binary_agent_is_checked_installed_and_started_with_no_setup_line(nvim_env, tmp_path, served):
    root, base, _stop = served
    nvim = started(tmp_path, registry(root, base))
    try:
        nvim.command("Ai install tiny")
        assert notes(nvim)[-1] == "[acp.nvim] installed tiny 1.0.0: :Ai new tiny", notes(nvim)
        command = agents_dir(tmp_path) / "tiny" / "1.0.0" / "bin" / "tiny-agent"
        assert os.access(command, os.X_OK)
        manifest = json.loads((command.parents[1] / "agent.json").read_text())
        assert manifest["kind"] == "binary" and manifest["command"] == str(command)

        nvim.command("Ai install bad-sum")
        assert "the registry says 0000" in notes(nvim)[-1] and "not installed" in notes(nvim)[-1]
        assert not (agents_dir(tmp_path) / "bad-sum").exists()

        nvim.command("Ai new tiny")
        nvim.command("Ai send hello")
        wait_for(lambda: "turn ended" in buffer_text(nvim, "acp://chat/tiny/1"), 60, what="a turn of tiny")

        nvim.command("Ai agents")
        items = nvim.exec_lua("return vim.tbl_map(function(a) return require('acp_nvim.presets.registry').describe(a, "
                              "require('acp_nvim.presets.registry').installed()) end, _G.picked[1].items)")
        assert items[0] == "Tiny (tiny) 1.0.0 · installed 1.0.0 · binary — the demo agent as a binary"
        assert items[2] == "Codex (codex-acp) 0.16.0 · not installed · npx — OpenAI's Codex"
        assert "tiny" in nvim.exec_lua("return require('acp_nvim').complete('', 'Ai new ', 7)")

        nvim.command("Ai uninstall tiny")
        assert not (agents_dir(tmp_path) / "tiny").exists()
    finally:
        nvim.command("silent! doautocmd VimLeavePre")
        nvim.close()


def test_the_registry_is_cached_hourly_and_a_failed_fetch_keeps_the_cache(nvim_env, tmp_path, served):
    root, base, stop = served
    nvim = started(tmp_path, registry(root, base))
    try:
        nvim.command("Ai agents")
        cache = Path(nvim.exec_lua("return require('acp_nvim.presets.registry').cache_file()"))
        assert cache.parent == tmp_path / "cache" / "nvim" / "acp_nvim"
        assert cache.exists() and len(nvim.exec_lua("return _G.picked[1].items")) == 3
        (root / "registry.json").write_text("not json")
        nvim.command("Ai agents")  # fresh cache: not fetched again
        assert len(nvim.exec_lua("return _G.picked[2].items")) == 3 and notes(nvim) == []

        old = cache.stat().st_mtime - 2 * 3600  # older than the hour it is used for
        os.utime(cache, (old, old))
        nvim.command("Ai agents")
        assert "could not be fetched (not a registry" in notes(nvim)[-1] and "using the copy of" in notes(nvim)[-1]
        assert len(nvim.exec_lua("return _G.picked[3].items")) == 3 and json.loads(cache.read_text())["agents"]

        stop()  # offline
        nvim.command("Ai agents")
        assert "could not be fetched" in notes(nvim)[-1] and len(nvim.exec_lua("return _G.picked[4].items")) == 3

        nvim.exec_lua("require('acp_nvim').setup({ registry = { url = 'http://127.0.0.1:9/none.json' } })")
        cache.unlink()
        nvim.command("Ai agents")
        said = notes(nvim)[-1]
        assert "[acp.nvim] the agent registry http://127.0.0.1:9/none.json could not be fetched (" in said
        assert "using the snapshot of 2026-02-07 shipped with acp.nvim" in said
    finally:
        nvim.close()


@pytest.mark.timeout(900)
def test_a_real_npx_agent_is_installed_with_npm_into_its_folder(nvim_env, tmp_path, served):
    root, base, _stop = served
    nvim = started(tmp_path, registry(root, base))
    try:
        nvim.command("Ai install codex-acp")
        assert notes(nvim)[-1] == "[acp.nvim] installed codex-acp 0.16.0: :Ai new codex-acp", notes(nvim)
        folder = agents_dir(tmp_path) / "codex-acp" / "0.16.0"
        assert os.access(folder / "node_modules" / ".bin" / "codex-acp", os.X_OK)
        spec = nvim.exec_lua("return require('acp_nvim.presets.registry').with_installed(require('acp_nvim').config)"
                             ".agents['codex-acp']")
        assert spec["command"] == str(folder / "node_modules" / ".bin" / "codex-acp")
        assert spec["mode"] == "read-only", "the codex preset's permission settings apply"
        nvim.command("Ai update")
        assert notes(nvim)[-1] == "[acp.nvim] every installed agent is the registry's version"
    finally:
        nvim.close()


SNAPSHOT = json.loads((ROOT / "data" / "acp_registry_snapshot.json").read_text())


def test_offline_with_no_cache_the_shipped_snapshot_serves_marked_in_the_list(nvim_env, tmp_path):
    """`:Ai agents` with the registry unreachable and nothing cached: the dated snapshot, said in the
    picker's title with the reason, not a bare curl error; `:Ai install` knows its ids."""
    nvim = started(tmp_path, "http://127.0.0.1:9/registry.json")  # nothing listens on port 9
    try:
        nvim.command("Ai agents")
        picked = nvim.exec_lua("return _G.picked[1]")
        assert picked["prompt"].startswith("ACP registry agents: snapshot of 2026-02-07, the registry could not be "
                                           "fetched: curl: (7)"), picked["prompt"]
        assert [a["id"] for a in picked["items"]] == [a["id"] for a in SNAPSHOT["agents"]]
        assert "gemini" in nvim.exec_lua("return require('acp_nvim.presets.registry').known_ids()")
        assert not Path(nvim.exec_lua("return require('acp_nvim.presets.registry').cache_file()")).exists(), \
            "the snapshot is not written as the URL's cache"
        nvim.command("Ai install no-such-agent")
        assert notes(nvim)[-1].startswith('[acp.nvim] no agent "no-such-agent" in the registry'), notes(nvim)
    finally:
        nvim.close()


def test_the_snapshot_is_dated_and_a_registry(nvim_env):
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", SNAPSHOT["snapshot"]["date"])
    assert SNAPSHOT["agents"] and all({"id", "name", "version", "distribution"} <= set(a) for a in SNAPSHOT["agents"])


def test_a_file_url_registry_works_and_each_url_has_its_own_cache(nvim_env, tmp_path, served):
    root, base, _stop = served
    local = tmp_path / "mine.json"
    local.write_text(json.dumps({"version": "1.0.0", "agents": [
        {"id": "mine", "name": "Mine", "version": "0.1.0", "description": "a local registry",
         "distribution": {"npx": {"package": "mine-acp@0.1.0"}}}]}))
    nvim = started(tmp_path, f"file://{local}")
    try:
        nvim.command("Ai agents")
        assert [a["id"] for a in nvim.exec_lua("return _G.picked[1].items")] == ["mine"]
        mine = nvim.exec_lua("return require('acp_nvim.presets.registry').cache_file()")
        nvim.exec_lua("require('acp_nvim').setup({ registry = { url = ... } })", registry(root, base))
        nvim.command("Ai agents")  # the other URL's cache is fresh, but it is another registry's
        assert [a["id"] for a in nvim.exec_lua("return _G.picked[2].items")] == ["tiny", "bad-sum", "codex-acp"]
        theirs = nvim.exec_lua("return require('acp_nvim.presets.registry').cache_file()")
        assert mine != theirs and Path(mine).exists() and Path(theirs).exists()
    finally:
        nvim.close()
