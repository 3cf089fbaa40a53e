"""What feeds the log: the wire transport, stderr, stdout noise and lifecycle, with the real demo agent."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

from acp_nvim.core.agent.wire import NoiseReporter, WireTransport
from acp_nvim.core.session.session import Prompt
from acp_nvim.demo_agent.misbehave import GARBAGE_LINE
from helpers import async_wait_for, core

pytestmark = pytest.mark.timeout(30)


class RecordingTap:
    def __init__(self) -> None:
        self.seen: list[tuple[str, object]] = []

    def message(self, direction, message, raw):
        self.seen.append((direction, raw if isinstance(raw, str) else str(raw, "utf-8")))

    def streamed(self, raw):
        self.seen.append(("in", raw.decode()))

    def noise(self, line):
        self.seen.append(("noise", line))


async def test_transport_keeps_non_json_lines_and_carries_on():
    reader = asyncio.StreamReader(limit=64)
    long_message = json.dumps({"jsonrpc": "2.0", "method": "x", "params": {"pad": "y" * 200}})
    for line in [b'{"jsonrpc":"2.0","id":1,"result":{}}', b"Open https://example.invalid to log in",
                 b"42", b"\xff\xfe not utf-8", b"", long_message.encode()]:
        reader.feed_data(line + b"\n")
    reader.feed_eof()
    tap = RecordingTap()
    transport = WireTransport(reader, None, tap)  # type: ignore[arg-type]
    assert await transport.receive() == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert (await transport.receive())["params"]["pad"] == "y" * 200
    assert await transport.receive() is None
    kinds = [kind for kind, _ in tap.seen]
    assert kinds == ["in", "noise", "noise", "noise", "in"]
    assert tap.seen[1][1] == "Open https://example.invalid to log in"


def test_noise_reporter_shows_the_first_few_lines_whatever_they_say():
    shown: list[str] = []
    report = NoiseReporter(shown.append, limit=2)
    for line in ["", "progress 10%", "Visit https://x.invalid/login", "Error: no credentials"]:
        report(line)
    assert shown == ["the agent printed: progress 10%",
                     "the agent printed: Visit https://x.invalid/login (further such lines only in :Ai log)"]


async def run_turn(tmp_path, text, level="trace", editor=None):
    editor, _, session = await core.started(tmp_path, {"log": {"level": level}}, editor=editor)
    session.submit(Prompt(text))
    await async_wait_for(lambda: session.state in ("idle", "failed") and any(
        op["op"] == "new" and op["kind"] in ("turn_end", "error") for op in editor.ops),
        timeout=15, what="the turn's end")
    return editor, session


async def test_garbage_on_stdout_is_logged_shown_and_not_fatal(tmp_path):
    editor, session = await run_turn(tmp_path, "garbage")
    try:
        noise = [e for e in session.log.entries() if e.kind == "stdout"]
        assert [e.raw for e in noise] == [GARBAGE_LINE]
        assert any(GARBAGE_LINE in message and level == "warn" for message, level in editor.notes)
        assert session.state == "idle" and session.process.alive
        assert any(e.kind == "response" and e.method == "session/prompt" for e in session.log.entries())
    finally:
        await session.close()


async def test_stderr_lines_interleave_with_wire_messages(tmp_path):
    _, session = await run_turn(tmp_path, "stderr 5")
    try:
        entries = session.log.entries()
        stderr = [e for e in entries if e.kind == "stderr"]
        assert [e.summary for e in stderr] == [f"demo agent: chatter line {n}" for n in range(5)]
        prompt = next(e for e in entries if e.kind == "request" and e.method == "session/prompt")
        assert prompt.seq < stderr[0].seq and [e.time for e in entries] == sorted(e.time for e in entries)
        assert all(e.direction == "in" and e.level == "info" for e in stderr)
    finally:
        await session.close()


async def test_lifecycle_entries_spawn_initialize_exit(tmp_path):
    _, session = await run_turn(tmp_path, "crash")
    try:
        await async_wait_for(lambda: any("exited" in e.summary for e in session.log.entries()))
        lifecycle = [e.summary for e in session.log.entries() if e.kind == "lifecycle"]
        assert lifecycle[0].startswith(f"spawned pid {session.process.process.pid}: ")
        assert "-m acp_nvim.demo_agent" in lifecycle[0]
        assert lifecycle[1].startswith("initialized acp-nvim-demo 0.1.0 (protocol 1; loadSession;")
        assert "auth: none" in lifecycle[1]
        init = next(e for e in session.log.entries() if e.summary.startswith("initialized"))
        assert json.loads(init.raw)["agentCapabilities"]["loadSession"] is True
        assert "agent exited with code 3" in lifecycle
    finally:
        await session.close()


async def test_default_level_skips_streaming_chunks(tmp_path):
    _, session = await run_turn(tmp_path, "flood 50", level="debug")
    try:
        assert not any("agent_message_chunk" in e.summary for e in session.log.entries())
        assert any(e.method == "session/prompt" for e in session.log.entries())
    finally:
        await session.close()


async def test_a_huge_stderr_line_keeps_a_short_entry_line(tmp_path):
    script = tmp_path / "agent.py"
    script.write_text("import sys, runpy\n"
                      "sys.stderr.write('x' * 5000 + '\\n'); sys.stderr.flush()\n"
                      "sys.argv = ['acp_nvim.demo_agent']\n"
                      "runpy.run_module('acp_nvim.demo_agent', run_name='__main__')\n")
    from acp_nvim.core.config import PACKAGE_ROOT

    agents = {"demo": {"command": sys.executable, "args": [str(script)], "env": {"PYTHONPATH": str(PACKAGE_ROOT)}}}
    _, _, session = await core.started(tmp_path, {"agents": agents})
    try:
        await async_wait_for(lambda: any(e.kind == "stderr" for e in session.log.entries()))
        entry = next(e for e in session.log.entries() if e.kind == "stderr")
        assert len(entry.summary) == 500 and entry.raw == "x" * 5000
    finally:
        await session.close()


def test_encode_line_is_the_same_json_with_or_without_orjson(monkeypatch):
    import json

    from acp_nvim.core.agent import wire

    message = {"jsonrpc": "2.0", "id": 7, "result": {"content": "naïve\nline\t\"quoted\" ✓\n" * 3}}
    fast = wire.encode_line(message)
    monkeypatch.setattr(wire, "orjson", None)
    plain = wire.encode_line(message)
    assert fast.endswith(b"\n") and plain.endswith(b"\n")
    assert json.loads(fast) == json.loads(plain) == message
    assert b"\n" not in plain[:-1], "one message, one line"
    big = {"jsonrpc": "2.0", "id": 1, "result": {"n": 2**70}}  # beyond orjson's integers: falls back
    assert json.loads(wire.encode_line(big)) == big
