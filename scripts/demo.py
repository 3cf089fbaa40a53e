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


def main() -> None:
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(STATE / "config"),
        "XDG_DATA_HOME": str(STATE / "data"),
        "XDG_STATE_HOME": str(STATE / "state"),
        "XDG_CACHE_HOME": str(STATE / "cache"),
        "NVIM_RPLUGIN_MANIFEST": str(STATE / "rplugin.vim"),
        "ACP_NVIM_ROOT": str(ROOT),
        "ACP_NVIM_PYTHON": sys.executable,
    }
    workspace = STATE / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    sample = workspace / SAMPLE_NAME
    if not sample.exists():
        sample.write_text(SAMPLE)
    os.chdir(workspace)
    os.execve(NVIM, [NVIM, "-u", str(INIT), str(sample)], env)


if __name__ == "__main__":
    main()
