"""The agent's diary: one JSON line per event in ``FAULT_DIR/events.jsonl``, shared by every
agent process of a case (each line is one ``write`` on an O_APPEND file, so lines never mix)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

SUMMARY_CHARS = 300


class Events:
    """Appends events tagged with this process's pid."""

    def __init__(self, folder: Path) -> None:
        self._fd = os.open(folder / "events.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.pid = os.getpid()

    def add(self, kind: str, **data: Any) -> None:
        line = json.dumps({"t": time.time(), "pid": self.pid, "kind": kind, **data}, default=str)
        os.write(self._fd, line.encode("utf-8", "backslashreplace") + b"\n")


class NullEvents:
    """A diary that keeps nothing (the fuzzer's agent sends too much to note it all)."""

    pid = os.getpid()

    def add(self, kind: str, **data: Any) -> None:
        pass


def summary(message: dict[str, Any]) -> dict[str, Any]:
    """What the diary keeps of a JSON-RPC message: method, id, and the fields the harness checks."""
    out: dict[str, Any] = {key: message[key] for key in ("id", "method") if key in message}
    raw = message.get("params")
    params: dict[str, Any] = raw if isinstance(raw, dict) else {}
    if message.get("method") == "session/prompt":
        out["text"] = "".join(b.get("text", "") for b in params.get("prompt", []) if isinstance(b, dict))
    elif message.get("method") == "session/request_permission":
        out["title"] = (params.get("toolCall") or {}).get("title")
    if "result" in message:
        out["result"] = json.dumps(message["result"], default=str)[:SUMMARY_CHARS]
    if "error" in message:
        out["error"] = json.dumps(message["error"], default=str)[:SUMMARY_CHARS]
    return out
