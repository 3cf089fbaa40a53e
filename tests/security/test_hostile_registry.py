"""A hostile registry entry against ``:Ai install`` in a real Neovim (|acp_nvim-install-folder|): every file
the install creates, renames, chmods or names as the command lies inside
``agents/<id>/<version>``. The entry's archive is served over local HTTP with a correct sha256
(the checksum does not cover ``cmd``); its ``cmd`` climbs out with ``..``, is absolute, or names a
file through a link the archive carries. A stand-in for ``~/.bashrc`` and a 0600 private key
outside must stay as they were, and the refusal says why."""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import sys
import tarfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pynvim
import pytest

from conftest import INIT, NVIM
from helpers.lua import NOTIFY, SELECT, notes
from shell_env import ENV, shell_argv

pytestmark = pytest.mark.timeout(120)

PAYLOAD = b"#!/bin/sh\necho planted\n"
KEY = "dir/home/.ssh/id_ed25519"


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def served(tmp_path):
    root = tmp_path / "served"
    root.mkdir()
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def home(tmp_path) -> Path:
    """The user's files an install must never touch."""
    folder = tmp_path / "dir" / "home"
    (folder / ".ssh").mkdir(parents=True)
    (folder / ".bashrc").write_text("# mine\n")
    key = folder / ".ssh" / "id_ed25519"
    key.write_text("PRIVATE\n")
    key.chmod(0o600)
    return folder


def untouched(home: Path) -> None:
    assert (home / ".bashrc").read_text() == "# mine\n"
    key = home / ".ssh" / "id_ed25519"
    assert key.read_text() == "PRIVATE\n" and (key.stat().st_mode & 0o777) == 0o600
    assert sorted(p.name for p in home.rglob("*")) == [".bashrc", ".ssh", "id_ed25519"]


def linked_archive(target: Path) -> bytes:
    """A tar.gz whose ``bin`` is a link to ``target`` (a folder outside)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        info = tarfile.TarInfo("bin")
        info.type, info.linkname = tarfile.SYMTYPE, str(target)
        tar.addfile(info)
    return out.getvalue()


def platform_key() -> str:
    machine = {"x86_64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}[os.uname().machine]
    return f"{'darwin' if sys.platform == 'darwin' else 'linux'}-{machine}"


def entry(root: Path, base: str, name: str, body: bytes, cmd: str) -> dict:
    (root / name).write_bytes(body)
    return {"id": "evil", "name": "Evil", "version": "1.0.0", "description": "a hostile entry",
            "distribution": {"binary": {platform_key(): {"archive": f"{base}/{name}", "cmd": cmd,
                                                         "sha256": hashlib.sha256(body).hexdigest()}}}}


def started(tmp_path: Path, url: str) -> pynvim.Nvim:
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    env = [f"XDG_DATA_HOME={tmp_path / 'data'}", f"XDG_CACHE_HOME={tmp_path / 'cache'}"]
    instance = pynvim.attach("child", argv=shell_argv(workspace, [ENV, *env, NVIM, "-u", INIT, "--embed",
                                                                   "--headless"]))
    instance.command(f"cd {workspace}")
    instance.exec_lua(NOTIFY + SELECT)
    instance.exec_lua("require('acp_nvim').setup({ registry = { url = ... } })", url)
    return instance


# The install folder is data/nvim/acp_nvim/agents/evil/1.0.0(.part): six folders below tmp_path.
CLIMB = "../../../../../../dir/home/.bashrc"
ATTACKS = {
    "a_bare_download_renamed_up_the_tree": ("agent", PAYLOAD, CLIMB, "climbs out of its folder"),
    "a_bare_download_renamed_to_an_absolute_path": ("agent", PAYLOAD, "{home}/.bashrc", "absolute cmd"),
    "an_archive_linking_out_and_a_cmd_through_the_link": ("agent.tar.gz", None, "bin/id_ed25519",
                                                          "link that leads outside"),
}


@pytest.mark.parametrize(("name", "body", "cmd", "why"), ATTACKS.values(), ids=ATTACKS.keys())
def test_a_registry_entry_installs_nothing_outside_its_folder(nvim_env, tmp_path, served, home, name, body, cmd,
                                                               why):
    root, base = served
    body = body if body is not None else linked_archive(home / ".ssh")
    agent = entry(root, base, name, body, cmd.format(home=home))
    (root / "registry.json").write_text(json.dumps({"version": "1.0.0", "agents": [agent]}))
    nvim = started(tmp_path, f"{base}/registry.json")
    try:
        nvim.command("Ai install evil")
        said = notes(nvim)[-1]
        assert said.startswith("[acp.nvim] installing evil failed:") and why in said, notes(nvim)
        untouched(home)
        assert not (tmp_path / "data" / "nvim" / "acp_nvim" / "agents" / "evil").exists()
    finally:
        nvim.close()
