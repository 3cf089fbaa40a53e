"""One Neovim with the plugin and the replaying agent, fed batches of payloads.

``Rig.run(batch)`` sends a batch to the agent, answers whatever the plugin asks the user meanwhile
(every permission prompt with its first option, every review rejected, every three-way view kept
as the user's), waits for the agent's report and the sync title, and returns the findings: a dead
host, new tracebacks in the host log, errors shown, unanswered or twice-answered requests, a chat
that stopped updating. After a finding the rig is spent: the next batch gets a fresh Neovim.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import socket
import time
from pathlib import Path
from typing import Any

from faults.diary import alive
from faults.driver import Editor, Environment, wait_until
from helpers import WAIT_FLOOR

from .findings import Finding, from_log, from_messages, harmless
from .payloads import OUT, RID, WS, Payload

ANSWER_TIMEOUT = WAIT_FLOOR
"""Seconds the agent waits at most for the client's answers to a batch's requests. They take
milliseconds on an idle machine and seconds on a loaded one; the wait ends with the last answer, so
only a batch whose request is never answered (a finding) waits this long."""
REPORT_SLACK = 5.0
"""Seconds beyond the answers' wait for the agent's report to arrive."""
ANSWER_ALL_LUA = """
local answered = 0
local permission = require('acp_nvim.question.permission')
for _, entry in ipairs(permission.pending()) do
  local first = entry.q.options[1]
  permission.choose(entry.id, first and first.id or nil)
  answered = answered + 1
end
local review = require('acp_nvim.review')
for _, item in ipairs(review.list()) do
  review.decide_all(item.id, 'rejected')
  answered = answered + 1
end
local threeway = require('acp_nvim.threeway')
for _, id in ipairs(threeway.ids()) do
  threeway.finish(id, 'mine')
  answered = answered + 1
end
return answered
"""
DRAIN_LUA = """
local notes = _G.__fault_notes or {}
_G.__fault_notes = {}
local messages = vim.api.nvim_exec2('messages', { output = true }).output
vim.cmd('messages clear')
return { notes, messages }
"""


class Rig:
    """A Neovim whose session's agent replays batches; ``spent`` once a batch found something."""

    _numbers = itertools.count(1)
    _ids = itertools.count(1)

    def __init__(self, env: Environment) -> None:
        self.dir = env.case_dir(f"fuzz-{next(self._numbers)}")
        self.spent = False
        self.batches = 0
        path = str(self.dir / "control.sock")
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(path)
        self._server.listen(1)
        self.ed = Editor(env, self.dir, {"args": ["-m", "fuzz.agent"], "env": {"FUZZ_SOCKET": path}})
        self._outside = self.dir / "outside"
        self._outside.mkdir()
        (self.ed.workspace / "notes.txt").write_text("line one\nline two\n")
        self._log_offset = 0
        self._control, self._reader = self._start()
        self.host = self._host_pid()

    def _start(self) -> tuple[socket.socket, Any]:
        self.ed.command("Ai")
        if not self.ed.wait_state(("idle",), WAIT_FLOOR):
            raise RuntimeError(f"the fuzz session did not start: {self.ed.messages()[-500:]}")
        self._server.settimeout(WAIT_FLOOR)
        control, _ = self._server.accept()
        control.settimeout(None)
        reader = control.makefile("rb")
        self.ed.type_prompt("fuzz")
        control.settimeout(WAIT_FLOOR)
        ready = json.loads(reader.readline())
        assert "ready" in ready, ready
        return control, reader

    def _host_pid(self) -> int | None:
        for entry in Path("/proc").iterdir():
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = (entry / "stat").read_text()
                if int(stat.rsplit(")", 1)[1].split()[1]) == self.ed.proc.pid and \
                        b"python" in (entry / "cmdline").read_bytes():
                    return int(entry.name)
        return None

    # -- one batch ----------------------------------------------------------------------

    def run(self, batch: list[Payload], timeout: float = ANSWER_TIMEOUT, first: bool = False) -> list[Finding]:
        """Replay ``batch``; the findings (an empty list when all is well). Requests may take ``timeout``
        seconds to be answered; with ``first`` the first traceback ends the wait (one finding is enough)."""
        self.batches += 1
        lines, ids = self._fill(batch)
        sync = f"fuzz-sync-{self.batches}"
        message = {"batch": self.batches, "lines": lines, "ids": ids, "sync": sync, "timeout": timeout}
        self.spent = True  # until the batch is judged: a batch cut short by an error must not meet the next one
        self._control.settimeout(WAIT_FLOOR)  # a busy agent reads a large batch slowly
        self._control.sendall(json.dumps(message).encode() + b"\n")
        early: list[Finding] = []
        report = self._await_report(timeout, early if first else None)
        if early:
            return early
        findings = self._health(report, ids, batch, sync, timeout)
        self.spent = not harmless(findings)
        return findings

    def _fill(self, batch: list[Payload]) -> tuple[list[str], list[str]]:
        lines, ids = [], []
        for payload in batch:
            line = payload.line.replace(WS.encode(), str(self.ed.workspace).encode())
            line = line.replace(OUT.encode(), str(self._outside).encode())
            if payload.request:
                request_id = f"fz-{next(self._ids)}"
                line = line.replace(RID.encode(), request_id.encode())
                ids.append(request_id)
            lines.append(base64.b64encode(line).decode())
        return lines, ids

    def _await_report(self, timeout: float, early: list[Finding] | None) -> dict[str, Any] | None:
        """The agent's report, answering the user's side of every request meanwhile. With ``early``, a
        traceback in the host log ends the wait (it goes into ``early``)."""
        self._control.settimeout(0.05)
        buffer = b""
        deadline = time.monotonic() + timeout + REPORT_SLACK
        while time.monotonic() < deadline:
            with contextlib.suppress(TimeoutError):
                chunk = self._control.recv(1 << 16)
                if not chunk:
                    return None
                buffer += chunk
                if buffer.endswith(b"\n"):
                    return dict(json.loads(buffer))
            if not self._host_alive():
                return None
            if early is not None:
                early += self._log_findings()
                if early:
                    return None
            with contextlib.suppress(Exception):
                self.ed.lua(ANSWER_ALL_LUA)
        return None

    # -- health -------------------------------------------------------------------------

    def _host_alive(self) -> bool:
        return self.host is not None and alive(self.host) and self.ed.alive

    def _health(self, report: dict[str, Any] | None, ids: list[str], batch: list[Payload],
                sync: str, timeout: float) -> list[Finding]:
        if not self._host_alive():
            return [Finding("host crash", "the Python host (or Neovim) died", self._log_tail())]
        findings = self._log_findings()
        if report is None:
            findings.append(Finding("stuck", "the agent never reported back (its turn or pipe is stuck)", ""))
            return findings
        findings += self._answers(report, ids, batch)
        if not wait_until(lambda: self.ed.session().get("title") == sync, timeout):
            findings.append(Finding("stuck", "the chat stopped updating (the sync title never arrived)",
                                    str(self.ed.session().get("title"))))
        notes, messages = self.ed.lua(DRAIN_LUA)
        findings += from_messages([*notes, *messages.split("\n")])
        return findings

    def _answers(self, report: dict[str, Any], ids: list[str], batch: list[Payload]) -> list[Finding]:
        requests = [p for p in batch if p.request]
        answers = report.get("answers", {})
        findings = []
        for request_id, payload in zip(ids, requests, strict=True):
            count = answers.get(request_id, 0)
            if count != 1:
                what = "unanswered" if count == 0 else f"answered {count} times"
                findings.append(Finding("answers", f"{what}: {payload.kind}", payload.show()))
        return findings

    def _log_findings(self) -> list[Finding]:
        text = self._log_tail()
        return from_log(text)

    def _log_tail(self) -> str:
        logs = list(self.dir.glob("pylog_py3_*"))
        if not logs:
            return ""
        with logs[0].open("rb") as handle:
            handle.seek(self._log_offset)
            data = handle.read()
            self._log_offset = handle.tell()
        return data.decode("utf-8", "replace")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._control.close()
            self._server.close()
        self.ed.kill()


class Fuzzer:
    """Rigs on demand: a fresh one after each finding, so that one bug cannot pollute the next example."""

    def __init__(self) -> None:
        self.env = Environment()
        self._rig: Rig | None = None
        self.cases = 0

    def run(self, batch: list[Payload], fresh: bool = False, timeout: float = ANSWER_TIMEOUT,
            first: bool = False) -> list[Finding]:
        """Replay ``batch`` (on a Neovim of its own with ``fresh``: no earlier batch can set the stage);
        ``timeout`` and ``first`` as in ``Rig.run``."""
        if fresh or self._rig is None or self._rig.spent:
            self._retire()
            self._rig = Rig(self.env)
        self.cases += len(batch)
        return self._rig.run(batch, timeout, first)

    def _retire(self) -> None:
        if self._rig is not None:
            self._rig.close()
            self._rig = None

    def close(self) -> None:
        self._retire()
        self.env.cleanup()
