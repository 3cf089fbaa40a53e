"""End-to-end tests of the bundled demo agent, spawned as a real subprocess."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.client.connection import ClientSideConnection
from acp.helpers import embedded_text_resource, resource_block
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AllowedOutcome,
    AvailableCommandsUpdate,
    ClientCapabilities,
    CurrentModeUpdate,
    DeniedOutcome,
    FileEditToolCallContent,
    FileSystemCapabilities,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    SessionInfoUpdate,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UsageUpdate,
    UserMessageChunk,
    WriteTextFileResponse,
)

from acp_nvim.demo_agent import SCENARIOS
from acp_nvim.demo_agent.chat import default_reply
from acp_nvim.demo_agent.edits import demo_edit, edit_mark, new_file_text
from helpers import WAIT_FLOOR, async_wait_for

PYTHON_DIR = Path(__file__).resolve().parents[2] / "python"
LIMIT = 50 * 1024 * 1024
SAMPLE = "".join(f"line {n}\n" for n in range(1, 11))

pytestmark = pytest.mark.timeout(30)


@dataclass
class RecordingClient:
    """ACP client double: records updates, serves fs from a dict, answers permissions by kind."""

    files: dict[str, str] = field(default_factory=dict)
    permission_kind: str | None = "allow_once"
    updates: list[Any] = field(default_factory=list)
    writes: list[tuple[str, str]] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    permissions: list[tuple[ToolCallUpdate, list[PermissionOption]]] = field(default_factory=list)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permissions.append((tool_call, options))
        if self.permission_kind == "hang":
            await asyncio.Event().wait()
        if self.permission_kind is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        option = next(o for o in options if o.kind == self.permission_kind)
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=option.option_id)
        )

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        if path not in self.files:
            raise RequestError.resource_not_found(path)
        return ReadTextFileResponse(content=self.files[path])

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        self.writes.append((path, content))
        self.files[path] = content
        return WriteTextFileResponse()

    def of(self, kind: type) -> list[Any]:
        return [u for u in self.updates if isinstance(u, kind)]

    def message_text(self) -> str:
        return "".join(u.content.text for u in self.of(AgentMessageChunk))


@dataclass
class Demo:
    conn: ClientSideConnection
    process: asyncio.subprocess.Process
    session_id: str
    client: RecordingClient

    async def prompt(self, text: str, *extra: Any) -> Any:
        return await self.conn.prompt(session_id=self.session_id, prompt=[text_block(text), *extra])


@asynccontextmanager
async def demo_agent(client: RecordingClient, cwd: Path, *, fs: bool = True) -> AsyncIterator[Demo]:
    """Spawn ``python -m acp_nvim.demo_agent``, initialize and open one session."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PYTHON_DIR), os.environ.get("PYTHONPATH", "")])}
    # The SDK gives the agent 2 s to exit after its stdin closes, then terminates it, and fails with
    # ProcessLookupError when the exit comes in between: on a loaded machine it did. The agent ends
    # on EOF; the test waits for that as long as the test's own deadline.
    transport = {"limit": LIMIT, "shutdown_timeout": WAIT_FLOOR}
    async with spawn_agent_process(
        client, sys.executable, "-m", "acp_nvim.demo_agent", env=env, transport_kwargs=transport
    ) as (conn, process):
        caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs))
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps)
        assert init.agent_info is not None and init.agent_info.name == "acp-nvim-demo"
        session = await conn.new_session(cwd=str(cwd), mcp_servers=[])
        yield Demo(conn, process, session.session_id, client)


async def test_initialize_new_session_and_commands(tmp_path: Path) -> None:
    client = RecordingClient()
    async with demo_agent(client, tmp_path) as demo:
        init = await demo.conn.initialize(protocol_version=PROTOCOL_VERSION)
        caps = init.agent_capabilities
        assert caps is not None and caps.load_session
        assert caps.prompt_capabilities is not None and caps.prompt_capabilities.embedded_context
        assert init.auth_methods == []
        session = await demo.conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        assert session.session_id == "demo-2"
        assert session.modes is not None and session.modes.current_mode_id == "ask"
        assert [m.id for m in session.modes.available_modes] == ["ask", "code"]
        assert session.config_options is not None
        assert session.config_options[0].current_value == "demo-small"
        await async_wait_for(lambda: len(client.of(AvailableCommandsUpdate)) >= 2)
        names = [c.name for c in client.of(AvailableCommandsUpdate)[0].available_commands]
        assert names == list(SCENARIOS)


async def test_default_scenario_streams_markdown(tmp_path: Path) -> None:
    client = RecordingClient()
    async with demo_agent(client, tmp_path) as demo:
        response = await demo.prompt("Hello there, demo agent!")
        assert response.stop_reason == "end_turn"
        assert response.usage is not None and response.usage.total_tokens > 0
        thoughts = client.of(AgentThoughtChunk)
        assert [t.content.text for t in thoughts] == ["Thinking about: Hello there, demo agent!"]
        chunks = client.of(AgentMessageChunk)
        assert len(chunks) > 10 and all(len(c.content.text) <= 8 for c in chunks)
        assert client.message_text() == default_reply("Hello there, demo agent!")
        assert client.updates.index(thoughts[0]) < client.updates.index(chunks[0])


async def test_plan_transitions(tmp_path: Path) -> None:
    client = RecordingClient()
    async with demo_agent(client, tmp_path) as demo:
        assert (await demo.prompt("PLAN")).stop_reason == "end_turn"
        plans = [[e.status for e in p.entries] for p in client.of(AgentPlanUpdate)]
        assert plans[0] == ["pending"] * 3
        assert plans[-1] == ["completed"] * 3
        assert ["in_progress", "pending", "pending"] in plans
        assert ["completed", "completed", "in_progress"] in plans
        assert len(plans) == 7


async def test_read_via_client_fs(tmp_path: Path) -> None:
    path = str(tmp_path / "a.txt")
    client = RecordingClient(files={path: "from the buffer\n"})
    async with demo_agent(client, tmp_path) as demo:
        assert (await demo.prompt(f"read {path}")).stop_reason == "end_turn"
        assert client.reads == [path]
        start = client.of(ToolCallStart)[0]
        assert (start.kind, start.status, start.title) == ("read", "pending", f"Read {path}")
        assert [loc.path for loc in start.locations or []] == [path]
        statuses = [u.status for u in client.of(ToolCallProgress)]
        assert statuses == ["in_progress", "completed"]
        assert "from the buffer" in client.message_text()
        client.updates.clear()
        assert (await demo.prompt(f"read {tmp_path}/missing.txt")).stop_reason == "end_turn"
        assert client.of(ToolCallProgress)[-1].status == "failed"
        assert "Could not read" in client.message_text()


async def test_edit_allowed_writes_through_client(tmp_path: Path) -> None:
    path = str(tmp_path / "f.py")
    client = RecordingClient(files={path: SAMPLE})
    async with demo_agent(client, tmp_path) as demo:
        assert (await demo.prompt(f"edit {path}")).stop_reason == "end_turn"
        expected = SAMPLE.replace("line 1\n", "line 1 # edited by demo\n", 1) + "# added by the demo agent\n"
        assert demo_edit(SAMPLE, path) == expected
        assert client.writes == [(path, expected)]
        start = client.of(ToolCallStart)[0]
        assert (start.kind, start.status, start.title) == ("edit", "pending", f"Edit {path}")
        diff = start.content[0] if start.content else None
        assert isinstance(diff, FileEditToolCallContent)
        assert (diff.old_text, diff.new_text) == (SAMPLE, expected)
        assert client.of(ToolCallProgress)[-1].status == "completed"
        assert client.message_text().endswith(f"Edited {path}")
        _, options = client.permissions[0]
        assert [(o.option_id, o.kind) for o in options] == [
            ("demo-yes", "allow_once"),
            ("demo-always", "allow_always"),
            ("demo-no", "reject_once"),
            ("demo-never", "reject_always"),
        ]


@pytest.mark.parametrize(("name", "first", "last"), [
    ("hello.py", "line 1 # edited by demo", "# added by the demo agent"),
    ("init.lua", "line 1 -- edited by demo", "-- added by the demo agent"),
    ("app.ts", "line 1 // edited by demo", "// added by the demo agent"),
    ("main.c", "line 1 // edited by demo", "// added by the demo agent"),
    ("Makefile", "line 1 # edited by demo", "# added by the demo agent"),
    ("notes.unknownext", "line 1 edited by demo", "added by the demo agent"),
    ("README", "line 1 edited by demo", "added by the demo agent"),
])
async def test_edits_are_in_the_files_language(tmp_path: Path, name: str, first: str, last: str) -> None:
    """The demo's marks are comments of the file's language (hello.py still runs); unknown types get plain words."""
    path = str(tmp_path / name)
    client = RecordingClient(files={path: SAMPLE})
    async with demo_agent(client, tmp_path) as demo:
        assert (await demo.prompt(f"edit {path}")).stop_reason == "end_turn"
        lines = client.writes[0][1].splitlines()
        assert (lines[0], lines[-1]) == (first, last)


async def test_edited_python_still_compiles(tmp_path: Path) -> None:
    path = tmp_path / "hello.py"
    source = 'def greet(name):\n    return "hello " + name\n\n\nprint(greet("world"))\n'
    client = RecordingClient(files={str(path): source})
    async with demo_agent(client, tmp_path) as demo:
        await demo.prompt(f"edit {path}")
        compile(client.writes[0][1], str(path), "exec")  # a SyntaxError fails the test


async def test_edit_options_chosen_by_kind(tmp_path: Path) -> None:
    path = str(tmp_path / "f.py")
    client = RecordingClient(files={path: SAMPLE})
    async with demo_agent(client, tmp_path) as demo:
        for kind, written in [("allow_always", True), ("reject_once", False), ("reject_always", False)]:
            client.permission_kind = kind
            client.updates.clear()
            client.writes.clear()
            assert (await demo.prompt(f"edit {path}")).stop_reason == "end_turn"
            assert bool(client.writes) is written
            final = client.of(ToolCallProgress)[-1].status
            assert final == ("completed" if written else "failed")
            if not written:
                assert client.message_text() == "Edit rejected"


async def test_edit_permission_cancelled_ends_turn(tmp_path: Path) -> None:
    path = str(tmp_path / "f.py")
    client = RecordingClient(files={path: SAMPLE}, permission_kind=None)
    async with demo_agent(client, tmp_path) as demo:
        assert (await demo.prompt(f"edit {path}")).stop_reason == "cancelled"
        assert client.writes == []


async def test_cancel_while_permission_pending(tmp_path: Path) -> None:
    path = str(tmp_path / "f.py")
    client = RecordingClient(files={path: SAMPLE}, permission_kind="hang")
    async with demo_agent(client, tmp_path) as demo:
        turn = asyncio.create_task(demo.prompt(f"edit {path}"))
        await async_wait_for(lambda: bool(client.permissions))
        await demo.conn.cancel(session_id=demo.session_id)
        assert (await turn).stop_reason == "cancelled"
        assert client.writes == []


async def test_multi_edit_and_new_file(tmp_path: Path) -> None:
    paths = [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]
    client = RecordingClient(files={paths[0]: "a\n", paths[1]: "b\n"})
    async with demo_agent(client, tmp_path) as demo:
        assert (await demo.prompt(f"multi-edit {paths[0]} {paths[1]}")).stop_reason == "end_turn"
        starts = client.of(ToolCallStart)
        assert len(starts) == 1 and len(client.permissions) == 1
        diffs = starts[0].content or []
        assert [d.path for d in diffs] == paths
        assert [p for p, _ in client.writes] == paths
        client.updates.clear()
        client.writes.clear()
        path = str(tmp_path / "new.txt")
        assert (await demo.prompt(f"new-file {path}")).stop_reason == "end_turn"
        diff = (client.of(ToolCallStart)[0].content or [])[0]
        assert isinstance(diff, FileEditToolCallContent)
        assert diff.old_text is None and diff.new_text == new_file_text(path) == "created by the demo agent\n"
        assert client.writes == [(path, new_file_text(path))]


async def test_edit_disk_writes_disk_itself(tmp_path: Path) -> None:
    target = tmp_path / "disk.txt"
    target.write_text(SAMPLE)
    client = RecordingClient(files={str(target): SAMPLE})
    async with demo_agent(client, tmp_path) as demo:
        assert (await demo.prompt(f"edit-disk {target}")).stop_reason == "end_turn"
        assert client.writes == []
        assert target.read_text() == demo_edit(SAMPLE, str(target))
        target.write_text(SAMPLE)
        client.updates.clear()
        assert (await demo.prompt(f"edit-snippet {target}")).stop_reason == "end_turn"
        diff = (client.of(ToolCallStart)[0].content or [])[0]
        assert (diff.old_text, diff.new_text) == ("line 1", f"line 1{edit_mark(str(target))}")
        assert client.writes == []
        assert target.read_text().splitlines()[0] == "line 1 edited by demo"


async def test_without_fs_capability_uses_disk(tmp_path: Path) -> None:
    target = tmp_path / "nofs.txt"
    target.write_text("on disk\n")
    client = RecordingClient()
    async with demo_agent(client, tmp_path, fs=False) as demo:
        await demo.prompt(f"edit {target}")
        assert client.reads == [] and client.writes == []
        assert target.read_text() == demo_edit("on disk\n", str(target))


async def test_cancel_during_slow_is_prompt(tmp_path: Path) -> None:
    client = RecordingClient()
    async with demo_agent(client, tmp_path) as demo:
        turn = asyncio.create_task(demo.prompt("slow 200"))
        await async_wait_for(lambda: len(client.of(AgentMessageChunk)) >= 2)
        await demo.conn.cancel(session_id=demo.session_id)
        response = await turn
        assert response.stop_reason == "cancelled"
        assert len(client.of(AgentMessageChunk)) < 200, "cancelled before the slow scenario's end"
        assert (await demo.prompt("hi")).stop_reason == "end_turn"


async def test_crash_does_not_hang(tmp_path: Path) -> None:
    client = RecordingClient()
    async with demo_agent(client, tmp_path) as demo:
        with pytest.raises((ConnectionError, RequestError)):
            await asyncio.wait_for(demo.prompt("crash"), 5.0)
        assert await asyncio.wait_for(demo.process.wait(), 5.0) == 3


async def test_garbage_line_does_not_break_turn(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    client = RecordingClient()
    async with demo_agent(client, tmp_path) as demo:
        assert (await demo.prompt("garbage")).stop_reason == "end_turn"
        assert any("Error parsing JSON-RPC message" in r.getMessage() for r in caplog.records)
        assert "non-JSON line" in client.message_text()
        assert (await demo.prompt("hello")).stop_reason == "end_turn"


async def test_echo_returns_blocks(tmp_path: Path) -> None:
    client = RecordingClient()
    resource = resource_block(
        embedded_text_resource("file:///x.py#L2:3", "b\nc\n", mime_type="text/x-python")
    )
    async with demo_agent(client, tmp_path) as demo:
        assert (await demo.prompt("echo this", resource)).stop_reason == "end_turn"
        text = client.message_text()
        body = text.split("\n", 1)[1].rsplit("```", 1)[0]
        blocks = json.loads(body)
        assert blocks[0] == {"type": "text", "text": "echo this"}
        assert blocks[1]["resource"] == {
            "uri": "file:///x.py#L2:3",
            "text": "b\nc\n",
            "mimeType": "text/x-python",
        }


async def test_set_mode_and_config_option(tmp_path: Path) -> None:
    client = RecordingClient()
    async with demo_agent(client, tmp_path) as demo:
        await demo.conn.set_session_mode(session_id=demo.session_id, mode_id="code")
        await async_wait_for(lambda: bool(client.of(CurrentModeUpdate)))
        assert client.of(CurrentModeUpdate)[-1].current_mode_id == "code"
        await demo.prompt("mode")
        assert client.of(CurrentModeUpdate)[-1].current_mode_id == "ask"
        response = await demo.conn.set_config_option(
            config_id="model", session_id=demo.session_id, value="demo-large"
        )
        assert response.config_options[0].current_value == "demo-large"


async def test_misc_updates(tmp_path: Path) -> None:
    client = RecordingClient()
    async with demo_agent(client, tmp_path) as demo:
        await demo.prompt("usage")
        assert client.of(UsageUpdate)[0].size > 0
        await demo.prompt("title My title")
        assert client.of(SessionInfoUpdate)[0].title == "My title"
        await demo.prompt("tool-update-only")
        assert client.of(ToolCallStart) == [] and client.of(ToolCallProgress)[0].status == "completed"
        await demo.prompt("pieces")
        start = client.of(ToolCallStart)[0]
        assert (start.title, start.raw_input) == ("tool", {})
        assert client.of(ToolCallProgress)[-1].status == "completed"
        response = await demo.prompt("flood 2000")
        assert response.stop_reason == "end_turn"
        assert sum(1 for c in client.of(AgentMessageChunk) if c.content.text.startswith("chunk")) == 2000
        assert (await demo.prompt("stderr 5")).stop_reason == "end_turn"
        client.updates.clear()
        assert (await demo.prompt("shell rm -rf /tmp/nothing")).stop_reason == "end_turn"
        start = client.of(ToolCallStart)[0]
        assert (start.kind, start.title, start.raw_input) == (
            "execute",
            "rm -rf /tmp/nothing",
            {"command": "rm -rf /tmp/nothing"},
        )
        assert client.of(ToolCallProgress)[-1].status == "completed"
        assert "(demo) would run: rm -rf /tmp/nothing" in client.message_text()
        client.permission_kind = "reject_always"
        await demo.prompt("shell ls")
        assert client.of(ToolCallProgress)[-1].status == "failed"
        assert demo.process.stderr is not None
        line = await asyncio.wait_for(demo.process.stderr.readline(), 2.0)
        assert line.decode().startswith("demo agent: chatter line 0")


async def test_load_session_replays_history(tmp_path: Path) -> None:
    client = RecordingClient()
    async with demo_agent(client, tmp_path) as demo:
        await demo.prompt("hello")
        client.updates.clear()
        await demo.conn.load_session(cwd=str(tmp_path), session_id=demo.session_id, mcp_servers=[])
        users = client.of(UserMessageChunk)
        assert [u.content.text for u in users] == ["hello"]
        assert client.message_text() == default_reply("hello")
        with pytest.raises(RequestError):
            await demo.conn.load_session(cwd=str(tmp_path), session_id="nope", mcp_servers=[])


async def test_load_streams_fixed_size_chunks_and_tool_calls(tmp_path: Path) -> None:
    client = RecordingClient()
    async with demo_agent(client, tmp_path) as demo:
        assert (await demo.prompt("load 600 24 3")).stop_reason == "end_turn"
        chunks = [c.content.text for c in client.of(AgentMessageChunk)]
        assert len(chunks) == 600 and {len(text.encode()) for text in chunks} == {24}
        assert chunks[0].startswith("c0000000 ") and chunks[3].endswith("\n")
        starts = client.of(ToolCallStart)
        assert [s.tool_call_id for s in starts] == ["load-1", "load-2", "load-3"]
        statuses = [(u.tool_call_id, u.status) for u in client.of(ToolCallProgress)]
        assert statuses[:2] == [("load-1", "in_progress"), ("load-1", "completed")] and len(statuses) == 6
        before_second = client.updates[: client.updates.index(starts[1])]
        assert sum(isinstance(u, AgentMessageChunk) for u in before_second) == 200  # spread evenly


async def test_turns_streams_a_long_conversation_in_one_turn(tmp_path: Path) -> None:
    from acp.schema import UserMessageChunk

    client = RecordingClient()
    async with demo_agent(client, tmp_path) as demo:
        assert (await demo.prompt("turns 30 5")).stop_reason == "end_turn"
        questions = [c.content.text for c in client.of(UserMessageChunk)]
        answers = [c.content.text for c in client.of(AgentMessageChunk)]
        assert questions[0] == "question 0: what comes next?" and len(questions) == len(answers) == 30
        assert answers[29].startswith("answer 29\nturn 29 line 0: ") and answers[29].count("\n") == 6
        assert (await demo.prompt("turns many")).stop_reason == "end_turn"  # a bad count: the default
        assert len(client.of(UserMessageChunk)) == 130


async def test_pace_streams_at_its_rate_and_ends_with_the_time(tmp_path: Path) -> None:
    client = RecordingClient()
    async with demo_agent(client, tmp_path) as demo:
        assert (await demo.prompt("pace 200 1")).stop_reason == "end_turn"
        chunks = [c.content.text for c in client.of(AgentMessageChunk)]
        assert len(chunks) == 201 and {len(text) for text in chunks[:-1]} == {24}
        assert chunks[-1].startswith("\nEND ") and float(chunks[-1].split()[1]) > 0


async def test_load_bad_arguments_fall_back_to_defaults(tmp_path: Path) -> None:
    client = RecordingClient()
    async with demo_agent(client, tmp_path) as demo:
        assert (await demo.prompt("load lots of-bytes -5")).stop_reason == "end_turn"
        chunks = [c.content.text for c in client.of(AgentMessageChunk)]
        assert len(chunks) == 1000 and {len(text) for text in chunks} == {24}
        assert client.of(ToolCallStart) == []
        client.updates.clear()
        assert (await demo.prompt("load 3 1")).stop_reason == "end_turn"
        assert [c.content.text for c in client.of(AgentMessageChunk)] == ["c", "c", "c"]
