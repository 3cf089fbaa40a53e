"""An agent command wrapped so that every JSON-RPC line it receives and sends is also recorded.

``python wire_tap.py OUTDIR -- COMMAND...`` runs COMMAND with its stdin and stdout piped through this
process, appending each line to ``OUTDIR/<pid>.jsonl`` as ``{"dir": "out"|"in", "line": ...}`` (``out``:
client to agent, the plugin's side). Every process the plugin starts with this command is recorded,
the ones started only to list or delete sessions included. stderr is inherited.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO


def main() -> int:
    outdir, command = Path(sys.argv[1]), sys.argv[sys.argv.index("--") + 1:]
    outdir.mkdir(parents=True, exist_ok=True)
    record = (outdir / f"{os.getpid()}.jsonl").open("a", encoding="utf-8")
    lock = threading.Lock()
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None

    def note(direction: str, line: bytes) -> None:
        with lock:
            record.write(json.dumps({"dir": direction, "line": line.decode("utf-8", "replace")}) + "\n")
            record.flush()

    def copy(source: IO[bytes], target: IO[bytes], direction: str) -> None:
        try:
            for line in iter(source.readline, b""):
                note(direction, line)
                target.write(line)
                target.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass
        finally:
            try:
                target.close()
            except OSError:
                pass

    back = threading.Thread(target=copy, args=(child.stdout, sys.stdout.buffer, "in"), daemon=True)
    back.start()
    copy(sys.stdin.buffer, child.stdin, "out")
    code = child.wait()
    back.join(timeout=5)
    return code


if __name__ == "__main__":
    sys.exit(main())
