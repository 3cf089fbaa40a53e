"""Reading the local history's record files as tests do (the store's format, without the store)."""

from __future__ import annotations

import json
from pathlib import Path


def record_data(path: Path) -> dict:
    """A record file as one dict: its header's fields and ``entries`` (format 2 is JSON Lines: a
    header line, then one ``[kind, text]`` line per entry; format 1 is one object)."""
    head, *rest = path.read_text(encoding="utf-8").splitlines()
    data = json.loads(head)
    if data.get("format") != 1:
        data["entries"] = [json.loads(line) for line in rest if line.strip()]
    return data
