"""Reading an exported session log (``:Ai log export``) into the steps a replay plays."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WIRE_KINDS = ("request", "response", "notification")


class ScriptError(Exception):
    """The file is not an acp.nvim log export."""


@dataclass(frozen=True, slots=True)
class Step:
    """One recorded event: ``direction`` "out" is the client's (awaited), "in" the agent's (played)."""

    direction: str
    kind: str  # request | response | notification | stderr | stdout
    time: float
    method: str | None = None
    msg_id: Any = None
    message: dict[str, Any] | None = None
    text: str | None = None


def load(path: str | Path) -> list[Step]:
    """The steps of an export, in recorded order; lines of other kinds (lifecycle, errors) are skipped."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ScriptError(f"cannot read {path}: {exc.strerror or exc}") from None
    steps = []
    for number, line in enumerate(lines, 1):
        if line.strip():
            step = _step(_record(path, number, line))
            if step is not None:
                steps.append(step)
    return steps


def _record(path: str | Path, number: int, line: str) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except ValueError as exc:
        raise ScriptError(f"{path}:{number}: not JSON ({exc})") from None
    if not isinstance(record, dict):
        raise ScriptError(f"{path}:{number}: expected a JSON object")
    return record


def _step(record: dict[str, Any]) -> Step | None:
    kind, direction = record.get("kind"), record.get("direction")
    when = float(record.get("time") or 0.0)
    if kind in WIRE_KINDS and direction in ("in", "out") and isinstance(record.get("message"), dict):
        message = record["message"]
        return Step(direction, kind, when, message.get("method") or record.get("method"), message.get("id"),
                    message)
    if kind in ("stderr", "stdout") and direction == "in":
        text = record.get("text") if record.get("text") is not None else record.get("summary")
        return Step("in", kind, when, text=str(text or ""))
    return None
