"""What the fuzzer counts as a failure, how findings are named, and the ones known today.

A finding is a crash of the Python host, a traceback in the host's log, an error shown to the user
(``internal error``, an exception name, a Lua error), a request never answered (or answered twice),
or a chat that stopped updating. Its ``signature`` is its text with the variable parts (numbers,
paths, quoted strings) taken out, so that one bug is one finding however often it is hit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ERROR_SHOWN = re.compile(r"(?i)internal error|error executing|E5108|\b\w+(Error|Exception)\b:|\bfailed: \w+:")
FRAME = re.compile(r'File "([^"]+)", line \d+, in (\w+)')
LOG_RECORD = re.compile(r"^\d{4}-\d\d-\d\d [\d:,]+ \[(?P<level>\w+) @ (?P<where>[^\]]+)\] \d+ - (?P<message>.*)$")


@dataclass(frozen=True)
class Finding:
    kind: str
    signature: str
    detail: str

    def known(self) -> Known | None:
        """The known bug behind this finding (``KNOWN``), or None for a new one."""
        return next((known for known in KNOWN if re.search(known.pattern, self.signature)), None)


@dataclass(frozen=True)
class Known:
    """A bug the fuzzer finds today: its signature pattern, why, and the strict-xfail test that pins it."""

    pattern: str
    reason: str
    test: str
    harmless: bool = False
    """The Neovim is fine afterwards (no need for a fresh one)."""


KNOWN: list[Known] = [
]
CAUSES = ("host crash", "traceback", "shown")
"""Kinds that are a cause; "answers" and "stuck" findings can be consequences of one."""


def classify(findings: list[Finding]) -> list[tuple[Finding, str | None]]:
    """Each finding with the reason it is known (None: new). An unanswered request or a stuck chat in a
    batch that also hit a known harmful cause is put down to that cause."""
    reasons = [known.reason if (known := finding.known()) else None for finding in findings]
    causes = [known for finding in findings if finding.kind in CAUSES and (known := finding.known())]
    harmful = [known for known in causes if not known.harmless]  # a harmless one cannot have stopped the chat
    cause = harmful[0].reason if harmful else None
    return [(finding, reason or (f"follows from: {cause}" if cause and finding.kind not in CAUSES else None))
            for finding, reason in zip(findings, reasons, strict=True)]


def harmless(findings: list[Finding]) -> bool:
    """Whether Neovim can take the next batch after these findings (only harmless known ones)."""
    return all((known := finding.known()) is not None and known.harmless for finding in findings)


def new(findings: list[Finding]) -> list[Finding]:
    """The findings no known bug explains."""
    return [finding for finding, reason in classify(findings) if reason is None]


def normalize(text: str) -> str:
    """``text`` without the parts that vary between two hits of the same bug."""
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "<str>", text)
    text = re.sub(r"(/[\w.@ -]+)+", "<path>", text)
    text = re.sub(r"\b0x[0-9a-f]+\b|\b\d+(\.\d+)?\b", "<n>", text)
    return re.sub(r"\s+", " ", text).strip()[:240]


def from_log(text: str) -> list[Finding]:
    """Each ERROR record of the host's log (with its traceback's last line) as a finding."""
    found: list[Finding] = []
    record: list[str] = []
    for line in [*text.splitlines(), "2000-01-01 00:00:00,000 [END @ x] 0 - end"]:
        match = LOG_RECORD.match(line)
        if match and record:
            found += _log_finding(record)
            record = []
        if match or record:
            record.append(line)
    return found


def _log_finding(record: list[str]) -> list[Finding]:
    head = LOG_RECORD.match(record[0])
    if head is None or head["level"] not in ("ERROR", "CRITICAL"):
        return []
    text = "\n".join(record)
    frames = FRAME.findall(text)
    frame = f"{Path(frames[-1][0]).name}:{frames[-1][1]}" if frames else "?"
    last = next((line for line in reversed(record[1:]) if line and not line.startswith(" ")), "")
    if "ValidationError" in text:
        last = "pydantic ValidationError"  # its lines name the field, which varies with every payload
    signature = normalize(f"{head['where'].split(':')[0]}: {head['message'].split(' method=')[0]} | "
                          f"in {frame} | {last}")
    return [Finding("traceback", signature, "\n".join(record)[-3000:])]


def from_messages(lines: list[str]) -> list[Finding]:
    """Errors the user was shown (notifications, :messages)."""
    return [Finding("shown", normalize(line), line[:2000]) for line in lines if ERROR_SHOWN.search(line)]
