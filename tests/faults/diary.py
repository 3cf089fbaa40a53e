"""The harness's view of the agent: its diary (``events.jsonl``) and its processes.

Every agent process of a case appends to the same diary: its pid and child at start,
each message it read (``in``) and sent (``out``), and what its scenario did. The harness
reads it to learn the pids to watch, which prompts really reached an agent, and how
each permission request was answered.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


class Diary:
    """Reads ``events.jsonl`` incrementally."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "events.jsonl"
        self._offset = 0
        self._partial = b""
        self.events: list[dict[str, Any]] = []

    def refresh(self) -> list[dict[str, Any]]:
        """Every event so far (new ones read from the file)."""
        if not self.path.exists():
            return self.events
        with self.path.open("rb") as handle:
            handle.seek(self._offset)
            data = self._partial + handle.read()
            self._offset = handle.tell()
        *lines, self._partial = data.split(b"\n")
        self.events.extend(json.loads(line) for line in lines if line.strip())
        return self.events

    def select(self, kind: str, **match: Any) -> list[dict[str, Any]]:
        return [e for e in self.refresh() if e["kind"] == kind and all(e.get(k) == v for k, v in match.items())]

    def wait(self, kind: str, timeout: float, where: Callable[[dict[str, Any]], bool] = lambda e: True,
             count: int = 1) -> list[dict[str, Any]]:
        """Wait until ``count`` events of ``kind`` matching ``where`` exist; those found (maybe fewer)."""
        deadline = time.monotonic() + timeout
        while True:
            found = [e for e in self.refresh() if e["kind"] == kind and where(e)]
            if len(found) >= count or time.monotonic() >= deadline:
                return found
            time.sleep(0.02)

    def starts(self) -> list[dict[str, Any]]:
        return self.select("start")

    def pids(self, since: float = 0.0) -> set[int]:
        """Agent processes (and their children) started after ``since`` (a time.time())."""
        found: set[int] = set()
        for event in self.starts():
            if event["t"] >= since:
                found.update((event["pid"], event["child"]))
        return found

    def prompts(self) -> list[str]:
        """The text of every ``session/prompt`` an agent process read."""
        return [e.get("text", "") for e in self.select("in", method="session/prompt")]

    def requests_sent(self, method: str) -> list[dict[str, Any]]:
        return [e for e in self.select("out", method=method) if "id" in e]

    def responses_to(self, request_id: Any, pid: int) -> list[dict[str, Any]]:
        """The client's responses to request ``request_id`` of process ``pid``."""
        return [e for e in self.refresh() if e["kind"] == "in" and e["pid"] == pid and e.get("id") == request_id
                and "method" not in e]


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2:].split()[0] != "Z"


def survivors(pids: set[int], timeout: float) -> set[int]:
    """The processes of ``pids`` still alive after waiting up to ``timeout`` for them to end."""
    deadline = time.monotonic() + timeout
    while True:
        left = {pid for pid in pids if alive(pid)}
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.05)


def kill(pids: set[int]) -> None:
    """SIGKILL what the plugin left behind (the harness cleans up after counting)."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
