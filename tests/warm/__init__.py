"""A warm interpreter per test process (``server.py``): programs the tests start with Python — the
plugin's host, the demo agent, test agents — are forked from it instead of importing the ACP SDK
and pynvim cold. ``start`` returns the path to name as the Python (``ACP_NVIM_TEST_PYTHON``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def start(folder: Path) -> tuple[Path, subprocess.Popen[bytes]]:
    """Start a server whose socket lives in ``folder``; the launcher to use as the Python, and the server."""
    sock = folder / "warm.sock"
    launcher = folder / "python"
    source = (HERE / "launcher.py").read_text()
    for name, value in (("socket", sock), ("real", sys.executable), ("self", launcher)):
        source = source.replace(f'"{{{name}}}"', repr(str(value)))
    launcher.write_text(f"#!{sys.executable} -SE\n{source}")
    launcher.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    server = subprocess.Popen([sys.executable, str(HERE / "server.py"), str(sock)], stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, env=env, start_new_session=True)
    assert server.stdout is not None
    if server.stdout.readline().strip() != b"ready":
        server.kill()
        raise RuntimeError("the warm interpreter did not start")
    return launcher, server
