"""Export → replay round trips in the core: the replay agent reproduces the demo agent's transcript."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from acp import RequestError

from acp_nvim.core.config import PACKAGE_ROOT
from acp_nvim.core.session.session import Prompt
from acp_nvim.replay.script import ScriptError, load
from helpers import async_wait_for, core

pytestmark = pytest.mark.timeout(60)


def replay_agent(path: Path) -> dict:
    return {"command": sys.executable, "args": ["-m", "acp_nvim.replay", str(path)],
            "env": {"PYTHONPATH": str(PACKAGE_ROOT)}}


async def run_session(tmp_path, prompts, agent=None, agents=None, editor=None):
    raw = {"agents": agents or {}, "log": {"level": "trace"}}
    editor, _, session = await core.started(tmp_path, raw, editor=editor, agent=agent)
    for count, text in enumerate(prompts, 1):
        session.submit(Prompt(text))
        await async_wait_for(lambda n=count: sum(b.kind == "turn_end" for b in session.transcript.blocks) >= n,
                             timeout=20, what=f"the end of turn {count}")
    return editor, session


def transcript(session) -> list[tuple[str, str]]:
    return [(block.kind, block.text()) for block in session.transcript.blocks]


async def record(tmp_path, prompts):
    """Run ``prompts`` against the demo agent at level trace and export its log."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    editor, original = await run_session(workspace, prompts)
    export = tmp_path / "session.jsonl"
    export.write_text("\n".join(original.log.export({"session": original.key})) + "\n")
    await original.close()
    return editor, original, export


async def replay(tmp_path, prompts, export):
    # under the same agent name, so the transcript's agent headings match
    return await run_session(tmp_path / "ws", prompts, agents={"demo": replay_agent(export)})


async def record_and_replay(tmp_path, prompts):
    editor, original, export = await record(tmp_path, prompts)
    replay_editor, replayed = await replay(tmp_path, prompts, export)
    await replayed.close()
    return (editor, original), (replay_editor, replayed), export


async def test_round_trip_reproduces_the_transcript(tmp_path):
    prompts = ["hello replay", "plan", "shell ls -la", "usage", "title Replayed", "stderr 3", "garbage"]
    (editor, original), (replay_editor, replayed), _ = await record_and_replay(tmp_path, prompts)
    assert transcript(replayed) == transcript(original)
    assert [q.title for q in replay_editor.questions] == [q.title for q in editor.questions]
    assert replayed.view.title == original.view.title == "Replayed"
    assert replayed.view.usage == original.view.usage


async def test_replay_plays_stderr_and_stdout_lines(tmp_path):
    _, (replay_editor, replayed), _ = await record_and_replay(tmp_path, ["stderr 2", "garbage"])
    kinds = [(e.kind, e.summary) for e in replayed.log.entries() if e.kind in ("stderr", "stdout")]
    assert ("stderr", "demo agent: chatter line 1") in kinds
    assert any(kind == "stdout" and "example.invalid/oauth" in summary for kind, summary in kinds)
    assert any("example.invalid/oauth" in message for message, _ in replay_editor.notes)


async def test_replayed_wire_traffic_matches_the_recording(tmp_path):
    prompts = ["hello", "plan"]
    (_, original), (_, replayed), _ = await record_and_replay(tmp_path, prompts)

    def wire(session, direction):
        return [(e.kind, e.method) for e in session.log.entries()
                if e.direction == direction and e.kind in ("request", "response", "notification")]

    # each direction in its order; across the two the order is a race in the recording too (the
    # agent's commands update after session/new may cross our session/prompt on the wire)
    for direction in ("out", "in"):
        assert wire(replayed, direction) == wire(original, direction), direction


async def test_a_client_request_missing_from_the_recording_gets_an_error(tmp_path):
    _, _, export = await record(tmp_path, ["hello"])
    _, replayed = await replay(tmp_path, ["hello"], export)
    try:
        with pytest.raises(RequestError, match="Internal error"):
            await replayed.process.conn.set_session_mode(session_id=replayed.session_id, mode_id="code")
        assert replayed.process.alive
    finally:
        await replayed.close()


def test_script_errors_and_cli(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "acp.nvim log"}\nnot json\n')
    with pytest.raises(ScriptError, match=r"bad.jsonl:2: not JSON"):
        load(bad)
    with pytest.raises(ScriptError, match="cannot read"):
        load(tmp_path / "missing.jsonl")
    run = subprocess.run([sys.executable, "-m", "acp_nvim.replay", str(bad)], capture_output=True, text=True,
                         env={"PYTHONPATH": str(PACKAGE_ROOT)}, timeout=30)
    assert run.returncode == 2 and "not JSON" in run.stderr
    helped = subprocess.run([sys.executable, "-m", "acp_nvim.replay", "--help"], capture_output=True, text=True,
                            env={"PYTHONPATH": str(PACKAGE_ROOT)}, timeout=30)
    assert helped.returncode == 0 and ":Ai log export" in helped.stdout


def test_script_keeps_wire_stderr_and_stdout_only(tmp_path):
    path = tmp_path / "log.jsonl"
    records = [
        {"format": "acp.nvim log", "version": 1},
        {"kind": "lifecycle", "direction": "", "summary": "spawned pid 1", "text": None, "time": 1.0},
        {"kind": "request", "direction": "out", "method": "initialize", "id": 0, "time": 1.1,
         "message": {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}},
        {"kind": "stderr", "direction": "in", "summary": "booting", "text": None, "time": 1.2},
        {"kind": "stdout", "direction": "in", "summary": "stdout (not JSON-RPC): x", "text": "x", "time": 1.3},
    ]
    path.write_text("\n".join(json.dumps(r) for r in records))
    steps = load(path)
    assert [(s.direction, s.kind, s.method, s.text) for s in steps] == [
        ("out", "request", "initialize", None), ("in", "stderr", None, "booting"), ("in", "stdout", None, "x")]
