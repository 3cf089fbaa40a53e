"""`make docs`: write the files made from the :Ai subcommand registry and the configuration schema;
`--check` only reports stale ones.

The registry is python/acp_nvim/nvim/commands/subcommands.py (subcommand_docs.py says what it makes), the schema
python/acp_nvim/core/config.py with the agents' mode table (config_docs.py says what they make).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from acp_nvim.nvim.commands import config_docs, subcommand_docs

ROOT = subcommand_docs.ROOT
MAKERS = (subcommand_docs, config_docs)


def main(argv: list[str]) -> int:
    if "--check" in argv:
        old = [path for maker in MAKERS for path in maker.stale()]
        for path in old:
            print(f"stale: {path.relative_to(ROOT)} (run `make docs`)")
        return 1 if old else 0
    for maker in MAKERS:  # one after the other: both write sections of doc/acp_nvim.txt
        for path, text in maker.generated().items():
            if not path.exists() or path.read_text("utf-8") != text:
                path.write_text(text, "utf-8")
                print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
