"""Start the demo agent's WebSocket server (``python -m acp_nvim.demo_agent --ws``) for a test."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PYTHON_DIR = str(Path(__file__).resolve().parents[1] / "python")


@contextmanager
def demo_ws_server(*flags: str, host: str = "127.0.0.1") -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """The server's ws:// address and process (listening on ``host``); stopped at the end."""
    env = {**os.environ, "PYTHONPATH": PYTHON_DIR}
    proc = subprocess.Popen([sys.executable, "-m", "acp_nvim.demo_agent", "--ws", f"{host}:0", *flags],
                            stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # blocks until it listens (or exits: empty line)
        assert line.startswith("listening on "), f"the server did not start: {line!r}"
        yield line.split()[-1], proc
    finally:
        proc.terminate()
        proc.wait(timeout=10)
