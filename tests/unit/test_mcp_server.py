"""The editor's MCP server over real HTTP with the MCP SDK's client, answering from a fake editor state.

(The same tools against real Neovim: tests/e2e/test_editor_mcp.py.)
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
import pytest
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from acp_nvim.core.files.opener import file_id_of
from acp_nvim.core.files.paths import PathPolicy
from acp_nvim.core.log.ring import LogRing
from acp_nvim.core.mcp.editor_state import Json, LspQuery
from acp_nvim.core.mcp.http_server import EditorMcpServer
from acp_nvim.core.mcp.tools import TOOLS, EditorTools, Grant

pytestmark = pytest.mark.timeout(30)


class FakeState:
    """Canned editor state; records what the tools asked."""

    def __init__(self, root: Path, outside: Path) -> None:
        self.root, self.outside = root, outside
        self.asked: list[object] = []
        self.lsp_answer: Json = {"items": []}

    async def diagnostics(self, path: str | None) -> Json:
        self.asked.append(("diagnostics", path))
        entries = [
            {"path": str(self.root / "a.py"), "line": 2, "column": 1, "severity": "ERROR", "message": "bad"},
            {"path": str(self.root / "a.py"), "line": 3, "column": 1, "severity": "HINT", "message": "meh"},
            {"path": str(self.outside / "x.py"), "line": 1, "column": 1, "severity": "ERROR", "message": "secret"},
        ]
        if path is not None:
            entries = [e for e in entries if e["path"] == path]
        return {"diagnostics": entries, "loaded": path is None or path.endswith("a.py")}

    async def open_buffers(self) -> list[Json]:
        return [{"modified": True, "path": str(self.root / "a.py"), "line": 2, "column": 1},
                {"path": str(self.outside / "x.py"), "modified": False, "line": 1, "column": 1}]

    async def selection(self) -> Json | None:
        return {"path": str(self.root / "a.py"), "start_line": 1, "end_line": 2, "text": "x = 1\ny = 2"}

    async def lsp(self, query: LspQuery) -> Json:
        self.asked.append(query)
        return self.lsp_answer

    async def open_file(self, path: str, line: int, expect: tuple[int, int]) -> Json:
        self.asked.append(("open_file", path, line))
        return {"shown": path, "line": line}


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    root, outside = tmp_path / "ws", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "a.py").write_text("x = 1\ny = 2\n")
    (outside / "x.py").write_text("secret = 1\n")
    return root.resolve(), outside.resolve()


@asynccontextmanager
async def serving(dirs: tuple[Path, Path]) -> AsyncIterator[tuple[EditorMcpServer, FakeState, Grant]]:
    root, outside = dirs
    state = FakeState(root, outside)
    reports: list[str] = []
    server = EditorMcpServer(EditorTools(state), reports.append)
    grant = Grant("demo/1", str(root), PathPolicy([str(root)]), LogRing(), "token-of-demo-1")
    server.endpoint(grant)
    try:
        yield server, state, grant
    finally:
        await server.close()
        assert reports == []


@asynccontextmanager
async def client(url: str, token: str | None) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as connected:
            yield connected


async def call(server: EditorMcpServer, token: str, tool: str, args: dict | None = None) -> tuple[object, bool]:
    async with client(server.url, token) as mcp:
        result = await mcp.call_tool(tool, args or {})
    text = result.content[0].text
    try:
        return json.loads(text), bool(result.is_error)
    except ValueError:
        return text, bool(result.is_error)


async def test_requests_without_the_sessions_token_get_401(dirs):
    async with serving(dirs) as (server, _, grant):
        async with httpx2.AsyncClient() as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            assert (await http.post(server.url, json=body)).status_code == 401
            wrong = {"Authorization": "Bearer token-of-someone-else"}
            answer = await http.post(server.url, json=body, headers=wrong)
            assert answer.status_code == 401 and answer.headers["www-authenticate"].startswith("Bearer")
            basic = {"Authorization": f"Basic {grant.token}"}
            assert (await http.post(server.url, json=body, headers=basic)).status_code == 401
            other_path = server.url.replace("/mcp", "/other")
            auth = {"Authorization": f"Bearer {grant.token}"}
            assert (await http.post(other_path, json=body, headers=auth)).status_code == 404


async def test_the_server_listens_on_loopback_at_a_random_port(dirs):
    async with serving(dirs) as (server, _, _):
        assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/mcp")
        assert int(server.url.split(":")[2].split("/")[0]) > 0


async def test_tools_are_listed_with_their_schemas(dirs):
    async with serving(dirs) as (server, _, grant), client(server.url, grant.token) as mcp:
        tools = {tool.name: tool for tool in (await mcp.list_tools()).tools}
    assert list(tools) == [spec.name for spec in TOOLS]
    assert tools["definition"].input_schema["required"] == ["path", "line"]
    assert tools["diagnostics"].annotations.read_only_hint is True
    assert tools["open_file"].annotations.read_only_hint is False


async def test_answers_are_compact_json(dirs):
    async with serving(dirs) as (server, _, grant), client(server.url, grant.token) as mcp:
        text = (await mcp.call_tool("open_buffers", {})).content[0].text
    assert "\n" not in text and ", " not in text and json.loads(text)["buffers"], "the model's agent counts tokens"


async def test_diagnostics_keep_to_the_workspace(dirs):
    root, outside = dirs
    async with serving(dirs) as (server, state, grant):
        every, error = await call(server, grant.token, "diagnostics")
        assert not error and [d["message"] for d in every["diagnostics"]] == ["bad", "meh"]
        assert every["outside_workspace"].startswith("1 entries")
        only_errors, _ = await call(server, grant.token, "diagnostics", {"severity": "ERROR"})
        assert [d["message"] for d in only_errors["diagnostics"]] == ["bad"]
        one, _ = await call(server, grant.token, "diagnostics", {"path": "a.py"})
        assert state.asked[-1] == ("diagnostics", str(root / "a.py")) and "note" not in one
        closed, _ = await call(server, grant.token, "diagnostics", {"path": "b.py"})
        assert closed["diagnostics"] == [] and "not open in Neovim" in closed["note"]
        refused, error = await call(server, grant.token, "diagnostics", {"path": str(outside / "x.py")})
        assert error and "outside the workspace roots" in refused
        escape, error = await call(server, grant.token, "diagnostics", {"path": "../outside/x.py"})
        assert error and "outside the workspace roots" in escape


async def test_a_symlink_out_of_the_workspace_is_refused(dirs):
    root, outside = dirs
    (root / "link.py").symlink_to(outside / "x.py")
    async with serving(dirs) as (server, _, grant):
        refused, error = await call(server, grant.token, "diagnostics", {"path": "link.py"})
        assert error and "outside the workspace roots" in refused


async def test_buffers_and_selection(dirs):
    root, _ = dirs
    async with serving(dirs) as (server, _, grant):
        buffers, _ = await call(server, grant.token, "open_buffers")
        assert [b["path"] for b in buffers["buffers"]] == [str(root / "a.py")]
        assert list(buffers["buffers"][0])[:2] == ["path", "line"]
        selection, _ = await call(server, grant.token, "selection")
        assert selection["selection"]["text"] == "x = 1\ny = 2"


async def test_lsp_tools_pass_the_position_and_confine_the_answer(dirs):
    root, outside = dirs
    async with serving(dirs) as (server, state, grant):
        state.lsp_answer = {"items": [{"path": str(root / "a.py"), "line": 1, "column": 1},
                                      {"path": str(outside / "x.py"), "line": 1, "column": 1}]}
        found, error = await call(server, grant.token, "definition", {"path": "a.py", "line": 2, "symbol": "y"})
        assert not error and found["locations"] == [{"path": str(root / "a.py"), "line": 1, "column": 1}]
        a_py = file_id_of(os.stat(root / "a.py"))  # Neovim loads a.py only while it is still this file
        assert state.asked[-1] == LspQuery("definition", str(root / "a.py"), line=2, symbol="y", expect=a_py)
        await call(server, grant.token, "references", {"path": "a.py", "line": 1, "column": 3})
        assert state.asked[-1] == LspQuery("references", str(root / "a.py"), line=1, column=3, expect=a_py)
        await call(server, grant.token, "symbols", {"query": "Thing"})
        assert state.asked[-1] == LspQuery("symbols", None, query="Thing")
        missing, error = await call(server, grant.token, "definition", {"path": "a.py", "line": 2})
        assert error and "column or the symbol" in missing
        bad_line, error = await call(server, grant.token, "definition", {"path": "a.py", "line": 0, "column": 1})
        assert error and "line" in str(bad_line)
        nothing, error = await call(server, grant.token, "symbols", {})
        assert error and "path" in nothing
        state.lsp_answer = {"error": "no LSP client attached to a.py"}
        none, error = await call(server, grant.token, "symbols", {"path": "a.py"})
        assert error and none == "no LSP client attached to a.py"


async def test_open_file_only_shows_regular_files_inside(dirs):
    root, outside = dirs
    os.mkfifo(root / "pipe")
    async with serving(dirs) as (server, state, grant):
        shown, error = await call(server, grant.token, "open_file", {"path": "a.py", "line": 2})
        assert not error and shown == {"shown": str(root / "a.py"), "line": 2}
        for path, reason in ((str(outside / "x.py"), "outside the workspace"), ("pipe", "not a regular file"),
                             ("gone.py", "no such file"), (".", "directory")):
            answer, error = await call(server, grant.token, "open_file", {"path": path})
            assert error and reason in answer, (path, answer)
        assert [a for a in state.asked if a[0] == "open_file"] == [("open_file", str(root / "a.py"), 2)]


async def test_lsp_tools_never_load_a_fifo_or_a_directory(dirs):
    root, _ = dirs
    os.mkfifo(root / "pipe")
    async with serving(dirs) as (server, state, grant):
        for tool, args in (("definition", {"line": 1, "column": 1}), ("references", {"line": 1, "symbol": "x"}),
                           ("symbols", {})):
            for path, reason in (("pipe", "not a regular file"), (".", "directory")):
                answer, error = await call(server, grant.token, tool, {"path": path, **args})
                assert error and reason in answer, (tool, path, answer)
        assert state.asked == [], "nothing reached the editor"


async def test_a_buffer_that_is_not_the_file_at_its_path_is_left_out(dirs):
    root, outside = dirs
    (root / "new.py").unlink(missing_ok=True)
    a_py, secret = file_id_of(os.stat(root / "a.py")), file_id_of(os.stat(outside / "x.py"))
    async with serving(dirs) as (server, state, grant):
        entries = [{"path": str(root / "a.py"), "line": 1, "column": 1, "text": "x = 1", "file_id": list(a_py)},
                   {"path": str(root / "b.py"), "line": 1, "column": 1, "text": "OUTSIDE", "file_id": list(secret)},
                   {"path": str(root / "a.py"), "line": 2, "column": 1, "text": "OUTSIDE", "file_id": None},
                   {"path": str(root / "new.py"), "line": 1, "column": 1, "text": "typed", "file_id": [0, 0]},
                   {"path": str(root / "gone.py"), "line": 1, "column": 1, "text": "OUTSIDE"}]
        state.lsp_answer = {"items": entries}
        found, error = await call(server, grant.token, "references", {"path": "a.py", "line": 1, "column": 1})
        assert not error and [e["text"] for e in found["locations"]] == ["x = 1", "typed"]
        assert "file_id" not in json.dumps(found) and "OUTSIDE" not in json.dumps(found)
        assert found["not_the_file"].startswith("3 entries left out")

        async def stale_selection() -> Json:
            return {"path": str(root / "a.py"), "text": "OUTSIDE", "file_id": list(secret)}
        state.selection = stale_selection  # type: ignore[method-assign]
        selection, error = await call(server, grant.token, "selection")
        assert not error and selection["selection"] is None and "not the file" in selection["note"]


async def test_every_call_is_in_the_sessions_log(dirs):
    async with serving(dirs) as (server, _, grant):
        await call(server, grant.token, "diagnostics", {"path": "a.py"})
        await call(server, grant.token, "open_file", {"path": "/etc/passwd"})
    entries = [e for e in grant.log.entries() if e.kind == "mcp"]
    assert [e.level for e in entries] == ["info", "warn"]
    assert "tool nvim/diagnostics(path='a.py')" in entries[0].summary
    assert json.loads(entries[0].raw)["arguments"] == {"path": "a.py"}
    assert "outside the workspace" in json.loads(entries[1].raw)["error"]


async def test_a_revoked_token_opens_nothing(dirs):
    async with serving(dirs) as (server, _, grant):
        async with client(server.url, grant.token) as mcp:
            assert not (await mcp.call_tool("open_buffers", {})).is_error
        server.revoke(grant.token)
        assert await server.call(f"Bearer {grant.token}", "open_buffers", {}) == (
            "the session of this token has ended", True)
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {grant.token}"}) as http:
            answer = await http.post(server.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            assert answer.status_code == 401


async def test_two_sessions_see_their_own_workspace(dirs, tmp_path):
    root, outside = dirs
    async with serving(dirs) as (server, _, grant):
        other = Grant("demo/2", str(outside), PathPolicy([str(outside)]), LogRing(), "token-of-demo-2")
        assert server.endpoint(other) == server.url
        mine, _ = await call(server, grant.token, "open_buffers")
        theirs, _ = await call(server, other.token, "open_buffers")
    assert [b["path"] for b in mine["buffers"]] == [str(root / "a.py")]
    assert [b["path"] for b in theirs["buffers"]] == [str(outside / "x.py")]
    assert [e.kind for e in other.log.entries()] == ["mcp"]
