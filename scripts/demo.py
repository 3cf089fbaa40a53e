"""`make demo`: Neovim with acp.nvim and the bundled offline demo agent, isolated from your config.

Private XDG folders and a sample file, then this process is replaced with Neovim (the plugin
starts its own Python host).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STATE = ROOT / ".cache" / "demo"
NVIM = str(Path(sys.executable).parent / "nvim")
INIT = ROOT / "scripts" / "demo_init.lua"
SAMPLE_NAME = "hello.py"
SAMPLE = 'def greet(name):\n    return "hello " + name\n\n\nprint(greet("world"))\n'
"""The file the demo opens; the banner's examples (demo_init.lua) act on it."""


def environment(state: Path, base: dict[str, str]) -> dict[str, str]:
    """``base`` with the demo's private XDG folders under ``state`` and the checkout's plugin."""
    return {
        **base,
        "XDG_CONFIG_HOME": str(state / "config"),
        "XDG_DATA_HOME": str(state / "data"),
        "XDG_STATE_HOME": str(state / "state"),
        "XDG_CACHE_HOME": str(state / "cache"),
        "NVIM_RPLUGIN_MANIFEST": str(state / "rplugin.vim"),
        "ACP_NVIM_ROOT": str(ROOT),
        "ACP_NVIM_PYTHON": sys.executable,
    }


def sample_file(state: Path) -> Path:
    """The demo's workspace under ``state``, with the sample file in it."""
    workspace = state / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    sample = workspace / SAMPLE_NAME
    if not sample.exists():
        sample.write_text(SAMPLE)
    return sample


def main() -> None:
    sample = sample_file(STATE)
    os.chdir(sample.parent)
    os.execve(NVIM, [NVIM, "-u", str(INIT), str(sample)], environment(STATE, dict(os.environ)))


if __name__ == "__main__":
    main()
