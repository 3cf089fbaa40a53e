"""The editor as an MCP server, against real Neovim: every tool over real HTTP with the MCP SDK's client.

The client is the demo agent (``mcp nvim <tool> <json>``, its MCP SDK client, the session's bearer
token), so each call goes agent → HTTP → the plugin's server on the host's loop → Neovim → back.
"""

from __future__ import annotations

import json
import os
import re
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from conftest import ROOT
from helpers import chat, wait_for

pytestmark = pytest.mark.timeout(90)

CHAT = "acp://chat/demo/1"
TINY_LSP = str(Path(__file__).resolve().parent / "tiny_lsp.py")
SETUP = """
local python, capabilities, extra = ...
require('acp_nvim').setup(vim.tbl_deep_extend('force', { agents = { demo = { command = python,
  args = { '-m', 'acp_nvim.demo_agent' },
  env = { PYTHONPATH = vim.env.ACP_NVIM_PYTHONPATH, ACP_DEMO_CAPABILITIES = capabilities } } } }, extra or {}))
"""
SEND_IN_PLACE = """
local text = ...
require('acp_nvim').command({ fargs = vim.split(text, ' '), args = text, range = 0, line1 = 1, line2 = 1 })
"""
SOURCE = """def helper(x):
    return x + 1


class Thing:
    def run(self):
        return helper(2)
"""


def start(nvim, capabilities: str = "mcp-http", extra: dict | None = None) -> None:
    os.environ["ACP_NVIM_PYTHONPATH"] = str(ROOT / "python")
    nvim.exec_lua("vim.env.ACP_NVIM_PYTHONPATH = ...", str(ROOT / "python"))
    nvim.exec_lua(SETUP, sys.executable, capabilities, extra or {"log": {"level": "debug"}})
    nvim.command("Ai")
    wait_for(lambda: nvim.exec_lua("return (require('acp_nvim.state').sessions['demo/1'] or {}).state") == "idle",
             timeout=30, what="the session to start")
    nvim.command("wincmd p")


def tool(nvim, name: str, args: dict | None = None, in_place: bool = False) -> tuple[object, bool]:
    """Call the editor's tool ``name`` through the demo agent; the answer (JSON when it is) and is-error."""
    ended = chat(nvim).count("── turn ended")
    text = f"send mcp nvim {name} {json.dumps(args or {})}"
    if in_place:  # keeps the mode (visual, insert) the user is in
        nvim.exec_lua(SEND_IN_PLACE, text)
    else:
        nvim.command(f"Ai {text}")
    shown = wait_for(lambda: chat(nvim).count("── turn ended") > ended and chat(nvim), timeout=30,
                     what=f"the answer of {name}")
    match = re.findall(r"MCP (result|error) of nvim/\w+:\n```json\n(.*?)\n```", shown, re.S)[-1]
    try:
        return json.loads(match[1]), match[0] == "error"
    except ValueError:
        return match[1], match[0] == "error"


def open_with(nvim, path: Path, text: str) -> int:
    path.write_text(text)
    nvim.command(f"edit {path}")
    return nvim.funcs.bufnr(str(path))


def diagnose(nvim, buf: int, namespace: str, entries: list[tuple[int, int, str, str]]) -> None:
    nvim.exec_lua("""
        local buf, ns, entries = ...
        local list = {}
        for _, e in ipairs(entries) do
          list[#list + 1] = { lnum = e[1], col = e[2], message = e[3], severity = vim.diagnostic.severity[e[4]],
                              source = ns }
        end
        vim.diagnostic.set(vim.api.nvim_create_namespace(ns), buf, list)""", buf, namespace, entries)


def test_diagnostics_of_an_unsaved_buffer_from_any_source(nvim, workspace, tmp_path):
    start(nvim)
    a = open_with(nvim, workspace / "a.py", "x = 1\n")
    nvim.api.buf_set_lines(a, 1, 1, False, ["y = é + undefined  # typed, not saved"])
    diagnose(nvim, a, "fake-lsp", [(1, 9, "undefined name 'undefined'", "ERROR")])
    b = open_with(nvim, workspace / "b.py", "import os\n")
    diagnose(nvim, b, "linter", [(0, 0, "unused import", "WARN")])
    outside = open_with(nvim, tmp_path / "outside.py", "secret = 1\n")
    diagnose(nvim, outside, "linter", [(0, 0, "outside message", "ERROR")])

    every, error = tool(nvim, "diagnostics")
    assert not error
    assert every["diagnostics"] == [
        {"path": str(workspace / "a.py"), "line": 2, "column": 9, "end_line": 2, "end_column": 9,
         "severity": "ERROR", "message": "undefined name 'undefined'", "source": "fake-lsp"},
        {"path": str(workspace / "b.py"), "line": 1, "column": 1, "end_line": 1, "end_column": 1,
         "severity": "WARN", "message": "unused import", "source": "linter"}]
    assert every["outside_workspace"].startswith("1 entries"), "the file outside is left out"
    assert "outside message" not in json.dumps(every)

    one, _ = tool(nvim, "diagnostics", {"path": "a.py", "severity": "ERROR"})
    assert [d["message"] for d in one["diagnostics"]] == ["undefined name 'undefined'"]
    assert nvim.api.buf_get_option(a, "modified"), "the buffer is still unsaved"
    refused, error = tool(nvim, "diagnostics", {"path": str(tmp_path / "outside.py")})
    assert error and "outside the workspace roots" in refused


def test_diagnostics_of_a_file_not_open_that_a_source_reported_on(nvim, workspace, tmp_path):
    start(nvim)
    (workspace / "far.py").write_text("import sys\n")
    (tmp_path / "away.py").write_text("x\n")
    for path, message in ((workspace / "far.py", "unused import sys"), (tmp_path / "away.py", "outside")):
        nvim.exec_lua("""
            local path, message = ...
            local buf = vim.fn.bufadd(path)  -- as an LSP server's workspace diagnostics do: not loaded
            vim.diagnostic.set(vim.api.nvim_create_namespace('workspace-lsp'), buf,
              { { lnum = 0, col = 7, message = message, severity = vim.diagnostic.severity.WARN } })""",
            str(path), message)
    every, error = tool(nvim, "diagnostics")
    assert not error and [(d["path"], d["line"], d["column"], d["message"]) for d in every["diagnostics"]] == [
        (str(workspace / "far.py"), 1, 8, "unused import sys")]
    assert every["outside_workspace"].startswith("1 entries")
    one, error = tool(nvim, "diagnostics", {"path": "far.py"})
    assert not error and [d["message"] for d in one["diagnostics"]] == ["unused import sys"] and "note" not in one
    assert not nvim.api.buf_is_loaded(nvim.funcs.bufnr(str(workspace / "far.py"))), "nothing was loaded"


def test_open_buffers_with_modified_flag_and_cursor(nvim, workspace):
    start(nvim)
    a = open_with(nvim, workspace / "a.py", "one\ntwo\nthree\n")
    nvim.api.win_set_cursor(0, [3, 2])
    nvim.api.buf_set_lines(a, 0, 1, False, ["ONE"])
    open_with(nvim, workspace / "b.py", "b\n")
    buffers, error = tool(nvim, "open_buffers")
    assert not error
    by_path = {b["path"]: b for b in buffers["buffers"]}
    assert set(by_path) == {str(workspace / "a.py"), str(workspace / "b.py")}, "chat and log buffers are not files"
    assert by_path[str(workspace / "a.py")]["modified"] is True
    assert by_path[str(workspace / "b.py")]["modified"] is False
    assert (by_path[str(workspace / "a.py")]["line"], by_path[str(workspace / "a.py")]["column"]) == (3, 3)


def test_selection_current_and_last(nvim, workspace):
    start(nvim)
    open_with(nvim, workspace / "a.py", SOURCE)
    nvim.command("normal! 5GVj\x1b")  # a linewise selection, ended
    last, _ = tool(nvim, "selection")
    assert last["selection"] == {"path": str(workspace / "a.py"), "start_line": 5, "end_line": 6,
                                 "mode": "line", "start_column": 1, "end_column": 18,
                                 "text": "class Thing:\n    def run(self):", "current": False}
    nvim.command("normal! 1G5|")
    nvim.input("vee")  # a characterwise selection, still being made
    wait_for(lambda: nvim.api.get_mode()["mode"] == "v", timeout=5, what="visual mode")
    now, _ = tool(nvim, "selection", in_place=True)
    assert nvim.api.get_mode()["mode"] == "v", "the agent's question leaves the user in visual mode"
    assert now["selection"]["text"] == "helper(" and now["selection"]["current"] is True
    assert (now["selection"]["start_column"], now["selection"]["end_column"]) == (5, 11)


def test_selection_from_the_marks_of_the_current_buffer(nvim, workspace):
    start(nvim)
    buf = open_with(nvim, workspace / "a.py", SOURCE)
    nothing, _ = tool(nvim, "selection")
    assert nothing["selection"] is None and "not selected anything" in nothing["note"]
    nvim.api.buf_set_mark(buf, "<", 2, 4, {})  # marks set without a visual mode (by a plugin, or a session)
    nvim.api.buf_set_mark(buf, ">", 2, 9, {})
    found, _ = tool(nvim, "selection")
    assert found["selection"]["text"] == "return" and found["selection"]["start_line"] == 2


def test_open_file_keeps_the_users_focus_and_mode(nvim, workspace):
    start(nvim)
    open_with(nvim, workspace / "a.py", "a\n")
    (workspace / "b.py").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    nvim.api.set_current_win(nvim.funcs.bufwinid(CHAT))
    nvim.input("<C-w>jA")  # typing in the prompt window, under the chat window
    wait_for(lambda: nvim.api.get_mode()["mode"] == "i", timeout=5, what="insert mode")
    prompt_win = nvim.funcs.bufwinid("acp://prompt/demo/1")
    assert nvim.api.get_current_win().handle == prompt_win
    shown, error = tool(nvim, "open_file", {"path": "b.py", "line": 40}, in_place=True)
    assert not error and shown == {"shown": str(workspace / "b.py"), "line": 40}
    assert nvim.api.get_current_win().handle == prompt_win and nvim.api.get_mode()["mode"] == "i"
    win = nvim.funcs.bufwinid(str(workspace / "b.py"))
    assert win != -1 and nvim.api.win_get_cursor(win) == [40, 0]
    refused, error = tool(nvim, "open_file", {"path": "/etc/passwd"}, in_place=True)
    assert error and "outside the workspace" in refused


def start_tiny_lsp(nvim, workspace: Path) -> None:
    nvim.exec_lua("""
        local python, script, root = ...
        vim.lsp.config('tiny', { cmd = { python, script }, filetypes = { 'python' }, root_dir = root })
        vim.lsp.enable('tiny')""", sys.executable, TINY_LSP, str(workspace))


def test_lsp_symbols_definition_and_references(nvim, workspace):
    start(nvim)
    start_tiny_lsp(nvim, workspace)
    a = open_with(nvim, workspace / "a.py", SOURCE)
    wait_for(lambda: nvim.exec_lua("return #vim.lsp.get_clients({ bufnr = ... })", a) == 1, timeout=15,
             what="the tiny LSP server to attach")
    path = str(workspace / "a.py")
    symbols, error = tool(nvim, "symbols", {"path": "a.py"})
    assert not error
    assert [(s["name"], s["kind"], s["line"]) for s in symbols["symbols"]] == [
        ("helper", "Function", 1), ("Thing", "Class", 5), ("run", "Function", 6)]
    found, _ = tool(nvim, "definition", {"path": "a.py", "line": 7, "symbol": "helper"})
    assert found["locations"] == [{"path": path, "line": 1, "column": 5, "text": "def helper(x):"}]
    by_column, _ = tool(nvim, "definition", {"path": "a.py", "line": 7, "column": 17})
    assert by_column["locations"][0]["line"] == 1
    refs, _ = tool(nvim, "references", {"path": "a.py", "line": 1, "symbol": "helper"})
    assert [(r["line"], r["column"]) for r in refs["locations"]] == [(1, 5), (7, 16)]
    workspace_wide, _ = tool(nvim, "symbols", {"query": "Thi"})
    assert [s["name"] for s in workspace_wide["symbols"]] == ["Thing"]
    missing, error = tool(nvim, "definition", {"path": "a.py", "line": 7, "symbol": "nowhere"})
    assert error and '"nowhere" is not on line 7' in missing


def test_lsp_on_a_file_not_open_yet(nvim, workspace):
    start(nvim)
    start_tiny_lsp(nvim, workspace)
    (workspace / "c.py").write_text(SOURCE)
    found, error = tool(nvim, "definition", {"path": "c.py", "line": 7, "symbol": "helper"})
    assert not error and found["locations"][0]["line"] == 1
    assert nvim.funcs.bufnr(str(workspace / "c.py")) == -1, "the buffer loaded for the query is gone again"


def test_a_huge_file_is_not_loaded_for_a_query(nvim, workspace):
    start(nvim)
    huge = workspace / "huge.py"
    with huge.open("wb") as f:  # sparse: 17 MiB that cost no disk
        f.truncate(17 * 1024 * 1024)
    answer, error = tool(nvim, "definition", {"path": "huge.py", "line": 1, "column": 1})
    assert error and "too large to load for a query" in answer
    assert nvim.funcs.bufnr(str(huge)) == -1


def test_no_lsp_client_attached(nvim, workspace):
    start(nvim)
    open_with(nvim, workspace / "notes.txt", "plain text\n")
    answer, error = tool(nvim, "symbols", {"path": "notes.txt"})
    assert error and answer.startswith(f"no LSP client attached to {workspace / 'notes.txt'}")
    (workspace / "other.txt").write_text("not open\n")
    answer, error = tool(nvim, "references", {"path": "other.txt", "line": 1, "column": 1})
    assert error and "no LSP client attached" in answer
    assert nvim.funcs.bufnr(str(workspace / "other.txt")) == -1
    none, error = tool(nvim, "symbols", {"query": "x"})
    assert error and "no LSP client that supports workspace symbols" in none


def test_the_server_wants_the_sessions_token(nvim):
    start(nvim)
    nvim.command("Ai send mcp")
    url = wait_for(lambda: re.search(r"- nvim: http (\S+) \(headers: Authorization\)", chat(nvim)), timeout=30,
                   what="the server list").group(1)
    assert url.startswith("http://127.0.0.1:")
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
    for headers in ({}, {"Authorization": "Bearer not-the-token"}):
        request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json", **headers})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 401


def test_every_call_is_in_the_session_log(nvim, workspace):
    start(nvim)
    open_with(nvim, workspace / "a.py", "x\n")
    tool(nvim, "open_buffers")
    export = workspace / "log.jsonl"
    nvim.command(f"Ai log export {export}")
    wait_for(lambda: export.exists() and export.read_text().endswith("\n"), timeout=10, what="the export")
    entries = [json.loads(line) for line in export.read_text().splitlines()]
    calls = [e for e in entries if e.get("kind") == "mcp"]
    assert len(calls) == 1 and calls[0]["summary"].startswith("tool nvim/open_buffers()")
    assert json.loads(calls[0]["text"])["tool"] == "nvim/open_buffers"
    token_header = [e for e in entries if e.get("method") == "session/new" and e.get("direction") == "out"]
    assert re.search(r'"Bearer \[redacted[^\]]*\]"', json.dumps(token_header[0]["message"]))


def test_editor_mcp_false_offers_nothing(nvim):
    start(nvim, extra={"editor_mcp": False})
    nvim.command("Ai send mcp")
    wait_for(lambda: "(no MCP servers)" in chat(nvim), timeout=30, what="the empty server list")


def test_agents_without_http_get_no_editor_server(nvim):
    start(nvim, capabilities="")
    nvim.command("Ai send mcp")
    wait_for(lambda: "(no MCP servers)" in chat(nvim), timeout=30, what="the empty server list")


SERVICE_TOKEN = "tok-9f8e7d6c5b4a3210"
HEADER_TOKEN = "hdr-1a2b3c4d5e6f7890"
CONFIGURED = {
    "log": {"level": "debug"},
    "mcp_servers": {
        "tools": {"command": "some-mcp-server", "args": ["stdio"], "env": {"SERVICE_TOKEN": SERVICE_TOKEN}},
        "docs": {"type": "http", "url": "https://mcp.example.com/mcp",
                 "headers": {"Authorization": f"Bearer {HEADER_TOKEN}"}},
        "gone": {"command": "gone-mcp-server"},
    },
    "agents": {"demo": {"mcp_servers": {"gone": False}}},
}


def exported_log(nvim, workspace: Path) -> str:
    export = workspace / "log.jsonl"
    nvim.command(f"Ai log export {export}")
    wait_for(lambda: export.exists() and export.read_text().endswith("\n"), timeout=10, what="the export")
    return export.read_text()


def test_configured_servers_reach_the_agent_with_secrets_kept_out_of_the_log(nvim, workspace):
    start(nvim, capabilities="mcp-http", extra=CONFIGURED)
    nvim.command("Ai send mcp")
    listed = wait_for(lambda: re.search(r"MCP servers:\n((?:- .*\n)+)", chat(nvim)), timeout=30,
                      what="the server list").group(1)
    names = [line.split(":")[0] for line in listed.splitlines()]
    assert names == ["- docs", "- tools", "- nvim"], "by name, the agent's `false` removed gone; the editor last"
    assert "(env: SERVICE_TOKEN)" in listed and "(headers: Authorization)" in listed
    log = exported_log(nvim, workspace)
    new = [json.loads(line) for line in log.splitlines() if '"session/new"' in line]
    assert '"SERVICE_TOKEN"' in json.dumps(new), "the env names stay readable"
    assert SERVICE_TOKEN not in log and HEADER_TOKEN not in log, "env and header values are redacted"
    assert "not passed to the agent" not in chat(nvim)


def test_a_server_the_agent_cannot_take_is_told_in_the_chat_and_the_log(nvim, workspace):
    start(nvim, capabilities="", extra=CONFIGURED)
    told = "MCP server 'docs' not passed to the agent: the agent does not take http MCP servers"
    wait_for(lambda: told in chat(nvim), timeout=30, what="the refusal in the chat")
    assert chat(nvim).count(told) == 1
    nvim.command("Ai send mcp")
    listed = wait_for(lambda: re.search(r"MCP servers:\n((?:- .*\n)+)", chat(nvim)), timeout=30,
                      what="the server list").group(1)
    assert [line.split(":")[0] for line in listed.splitlines()] == ["- tools"]
    log = exported_log(nvim, workspace)
    assert told in log, "the log says it too"
    assert SERVICE_TOKEN not in log and HEADER_TOKEN not in log
