"""`make docs`: write the files made from the :Ai subcommand registry; `--check` only reports stale ones.

The registry is python/acp_nvim/nvim/commands/subcommands.py; see subcommand_docs.py for what it makes.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from acp_nvim.nvim.commands.subcommand_docs import ROOT, generated, stale


def main(argv: list[str]) -> int:
    if "--check" in argv:
        old = stale()
        for path in old:
            print(f"stale: {path.relative_to(ROOT)} (run `make docs`)")
        return 1 if old else 0
    for path, text in generated().items():
        if not path.exists() or path.read_text("utf-8") != text:
            path.write_text(text, "utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
