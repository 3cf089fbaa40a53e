"""What ``:Ai install`` and ``:Ai update`` run and replace happens only as the user says (G10).

Real Neovim, registries and downloads as ``file://`` URLs: an npm package whose ``postinstall``
writes a marker (npm runs it unless told not to), a binary entry with no sha256 (nothing checks
what arrives), one that claims in its own fields to be accepted, and an update that is a downgrade.
Each question goes through ``vim.ui.select``; declining leaves nothing run, installed or replaced.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import sys
import tarfile
from pathlib import Path

import pynvim
import pytest

from conftest import INIT, NVIM
from helpers.lua import NOTIFY, SELECT, notes
from shell_env import ENV, shell_argv

pytestmark = pytest.mark.timeout(180)


def platform_key() -> str:
    machine = {"x86_64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}[os.uname().machine]
    return f"{'darwin' if sys.platform == 'darwin' else 'linux'}-{machine}"


def tar_gz(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, body in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(body), 0o755
            tar.addfile(info, io.BytesIO(body))
    return out.getvalue()


def publish(root: Path, agents: list[dict]) -> str:
    (root / "registry.json").write_text(json.dumps({"version": "1.0.0", "agents": agents}))
    return (root / "registry.json").as_uri()


def binary(root: Path, version: str, *, sha: bool = True, **extra: object) -> dict:
    body = tar_gz({"bin/agent": f"#!/bin/sh\necho {version}\n".encode()})
    archive = root / f"agent-{version}.tar.gz"
    archive.write_bytes(body)
    dist: dict[str, object] = {"archive": archive.as_uri(), "cmd": "./bin/agent", **extra}
    if sha:
        dist["sha256"] = hashlib.sha256(body).hexdigest()
    return {"id": "tiny", "name": "Tiny", "version": version, "description": "a binary agent",
            "distribution": {"binary": {platform_key(): dist}}}


def started(tmp_path: Path, url: str) -> pynvim.Nvim:
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    env = [f"XDG_DATA_HOME={tmp_path / 'data'}", f"XDG_CACHE_HOME={tmp_path / 'cache'}",
           f"npm_config_cache={tmp_path / 'npm-cache'}"]
    instance = pynvim.attach("child", argv=shell_argv(workspace, [ENV, *env, NVIM, "-u", INIT, "--embed",
                                                                   "--headless"]))
    instance.command(f"cd {workspace}")
    instance.exec_lua(NOTIFY + SELECT)
    instance.exec_lua("require('acp_nvim').setup({ registry = { url = ... } })", url)
    return instance


def asked(nvim) -> list[str]:
    return [q["prompt"] for q in nvim.exec_lua("return _G.picked")]


def agents(tmp_path: Path) -> Path:
    return tmp_path / "data" / "nvim" / "acp_nvim" / "agents"


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_npm_install_scripts_run_only_when_the_user_says_so(nvim_env, tmp_path):
    root, marker = tmp_path / "served", tmp_path / "SCRIPT-RAN"
    root.mkdir()
    script = f"node -e \"require('fs').writeFileSync('{marker}', 'ran')\""
    package = {"name": "evil-agent", "version": "1.0.0", "bin": {"evil-agent": "agent.js"},
               "scripts": {"postinstall": script}}
    tgz = root / "evil-agent-1.0.0.tgz"
    tgz.write_bytes(tar_gz({"package/package.json": json.dumps(package).encode(),
                            "package/agent.js": b"#!/usr/bin/env node\nconsole.log('agent')\n"}))
    url = publish(root, [{"id": "evil-agent", "name": "Evil", "version": "1.0.0", "description": "scripts",
                          "distribution": {"npx": {"package": f"evil-agent@file:{tgz}"}}}])
    nvim = started(tmp_path, url)
    try:
        nvim.command("Ai install evil-agent")  # nothing chosen: the scripts stay out
        assert notes(nvim)[-1] == "[acp.nvim] installed evil-agent 1.0.0: :Ai new evil-agent", notes(nvim)
        assert not marker.exists(), "npm ran the package's postinstall unasked"
        question = asked(nvim)[-1]
        assert "left out the install scripts of evil-agent (postinstall: node -e" in question, question
        assert "runs code from those packages as you" in question
        assert os.access(agents(tmp_path) / "evil-agent" / "1.0.0" / "node_modules" / ".bin" / "evil-agent", os.X_OK)

        nvim.command("Ai uninstall evil-agent")
        nvim.exec_lua("_G.choose = { 'run their install scripts' }")
        nvim.command("Ai install evil-agent")
        assert notes(nvim)[-1] == "[acp.nvim] installed evil-agent 1.0.0: :Ai new evil-agent", notes(nvim)
        assert marker.read_text() == "ran", "the scripts run once the user says so"
    finally:
        nvim.close()


def test_a_binary_without_a_sha256_is_installed_only_when_accepted_unchecked(nvim_env, tmp_path):
    root = tmp_path / "served"
    root.mkdir()
    # the entry's own fields cannot accept it for the user
    nvim = started(tmp_path, publish(root, [binary(root, "1.0.0", sha=False, unchecked_ok=True, unchecked=True)]))
    try:
        nvim.command("Ai install tiny")
        said = notes(nvim)[-1]
        assert said.startswith("[acp.nvim] installing tiny failed:") and "no sha256" in said, notes(nvim)
        question = asked(nvim)[-1]
        assert "no sha256" in question and "cannot be checked" in question and "Install it unchecked?" in question
        assert not (agents(tmp_path) / "tiny").exists()

        nvim.exec_lua("_G.choose = { 'install it unchecked' }")
        nvim.command("Ai install tiny")
        assert notes(nvim)[-1] == "[acp.nvim] installed tiny 1.0.0: :Ai new tiny", notes(nvim)
        assert os.access(agents(tmp_path) / "tiny" / "1.0.0" / "bin" / "agent", os.X_OK)
    finally:
        nvim.close()


def test_an_update_says_what_it_replaces_with_what_and_asks(nvim_env, tmp_path):
    root = tmp_path / "served"
    root.mkdir()
    nvim = started(tmp_path, publish(root, [binary(root, "2.0.0")]))
    try:
        nvim.command("Ai install tiny")
        assert notes(nvim)[-1] == "[acp.nvim] installed tiny 2.0.0: :Ai new tiny", notes(nvim)
        publish(root, [binary(root, "1.0.0")])  # the registry now offers an older one

        nvim.command("Ai update")  # nothing chosen: kept
        question = asked(nvim)[-1]
        assert question == "update tiny: the registry has 1.0.0, 2.0.0 is installed: a DOWNGRADE", question
        assert notes(nvim)[-1] == "[acp.nvim] kept tiny 2.0.0", notes(nvim)
        assert (agents(tmp_path) / "tiny" / "2.0.0").exists() and not (agents(tmp_path) / "tiny" / "1.0.0").exists()

        nvim.exec_lua("_G.choose = { 'replace tiny 2.0.0 with 1.0.0 (a DOWNGRADE)' }")
        nvim.command("Ai update tiny")
        assert notes(nvim)[-1] == "[acp.nvim] installed tiny 1.0.0: :Ai new tiny", notes(nvim)
        assert not (agents(tmp_path) / "tiny" / "2.0.0").exists()

        publish(root, [binary(root, "1.5.0")])
        nvim.command("Ai update")
        assert asked(nvim)[-1] == "update tiny: the registry has 1.5.0, 1.0.0 is installed: an upgrade"
    finally:
        nvim.close()
