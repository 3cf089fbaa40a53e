"""The plugin's whole outgoing traffic (client → agent: requests, responses to the agent's requests,
notifications) of real sessions with the demo agent, checked against the published ACP v1 JSON
Schema (``tests/schema``): each message against the definition of its method, matched by method (and,
for a response, by the id of the agent's request it answers), and no key the schema does not declare
outside ``_meta`` (extensions live under ``_meta`` or in ``_``-methods).

The agent runs behind ``wire_tap.py``, which records every line of every process the plugin starts
(sessions, and processes started only to list or delete sessions): what is checked is the bytes on
the pipe, not what the plugin's log makes of them."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from acp_nvim.demo_agent.session import MODEL_VALUES
from conftest import ROOT
from helpers import NOTIFY, PENDING_LUA, SELECT, allow, answer_keys, chat, session_state, wait_for

pytestmark = pytest.mark.timeout(240)

SCHEMAS = ROOT / "tests" / "schema"
SCHEMA_VERSION = "2.4.0"
"""``@agentclientprotocol/sdk`` version the vendored schemas come from (tests/schema/README.md)."""
TAP = Path(__file__).with_name("wire_tap.py")
SETUP = """
local python, tap, outdir, env = ...
require('acp_nvim').setup({ default_agent = 'tapped', agents = { tapped = {
  command = python, args = { tap, outdir, '--', python, '-m', 'acp_nvim.demo_agent' }, env = env } } })
"""


class Schema:
    """One vendored schema: its definitions by (side, method) and validators for them."""

    def __init__(self, path: Path) -> None:
        self.document = json.loads(path.read_text(encoding="utf-8"))
        self.defs: dict[str, Any] = self.document["$defs"]
        self.by_method: dict[tuple[str, str, str], str] = {}
        for name, definition in self.defs.items():
            if "x-method" in definition:
                kind = "Response" if name.endswith("Response") else \
                    "Notification" if name.endswith("Notification") else "Request"
                self.by_method[(definition.get("x-side", ""), definition["x-method"], kind)] = name
        self._validators: dict[str, Draft202012Validator] = {}

    def validator(self, name: str) -> Draft202012Validator:
        if name not in self._validators:
            self._validators[name] = Draft202012Validator({"$defs": self.defs, "$ref": f"#/$defs/{name}"})
        return self._validators[name]

    def resolve(self, schema: dict) -> dict:
        while "$ref" in schema:
            schema = self.defs[schema["$ref"].rsplit("/", 1)[1]]
        return schema

    def fits(self, instance: Any, schema: dict) -> bool:
        return Draft202012Validator({"$defs": self.defs, **schema}).is_valid(instance)

    def declared(self, instance: Any, schema: dict) -> tuple[dict[str, dict], bool]:
        """The properties ``schema`` declares for ``instance`` (its own, its ``allOf``'s, and those of the
        ``anyOf``/``oneOf`` branch that fits), and whether it leaves the object open."""
        schema = self.resolve(schema)
        properties = dict(schema.get("properties", {}))
        open_ = schema.get("additionalProperties") not in (None, False) or (
            "properties" not in schema and not any(k in schema for k in ("allOf", "anyOf", "oneOf")))
        parts = list(schema.get("allOf", []))
        branches = schema.get("anyOf") or schema.get("oneOf") or []
        fitting = [branch for branch in branches if self.fits(instance, branch)]
        parts += fitting[:1]
        for part in parts:
            more, more_open = self.declared(instance, part)
            properties.update(more)
            open_ = open_ and more_open if "properties" in schema else open_ or more_open
        return properties, open_

    def undeclared(self, instance: Any, schema: dict, path: str) -> list[str]:
        """Keys of ``instance`` that ``schema`` does not declare, outside ``_meta`` (the schema leaves
        objects open, so a validator alone would let an extension at the top level through)."""
        found: list[str] = []
        if isinstance(instance, dict):
            properties, open_ = self.declared(instance, schema)
            for key, value in instance.items():
                if key == "_meta":
                    continue
                if key in properties:
                    found += self.undeclared(value, properties[key], f"{path}.{key}")
                elif not open_:
                    found.append(f"{path}.{key}")
        elif isinstance(instance, list):
            items = self.resolve(schema).get("items")
            if isinstance(items, dict):
                for index, item in enumerate(instance):
                    found += self.undeclared(item, items, f"{path}[{index}]")
            else:
                for part in self._parts(instance, schema):
                    found += self.undeclared(instance, part, path)
        return found

    def _parts(self, instance: Any, schema: dict) -> list[dict]:
        schema = self.resolve(schema)
        branches = schema.get("anyOf") or schema.get("oneOf") or []
        return list(schema.get("allOf", [])) + [b for b in branches if self.fits(instance, b)][:1]


STABLE = Schema(SCHEMAS / "acp-v1.schema.json")
UNSTABLE = Schema(SCHEMAS / "acp-v1.unstable.schema.json")


def checked(side: str, method: str, kind: str, instance: Any, where: str) -> tuple[list[str], str]:
    """``instance`` (params or result) against ``method``'s definition in the stable schema, else in the
    unstable one (a method, or a field, that only it has): the problems, and which schema took it."""
    stable = STABLE.by_method.get((side, method, kind))
    unstable = UNSTABLE.by_method.get((side, method, kind))
    if stable is None and unstable is None:
        return [f"{where}: {method} is no {kind.lower()} of the ACP v1 schema"], ""
    problems = check(STABLE, stable, instance, where) if stable else ["not in the stable schema"]
    if problems and unstable is not None and not check(UNSTABLE, unstable, instance, where):
        return [], " (unstable)"
    return problems, ""


def check(schema: Schema, name: str, instance: Any, where: str, *, closed: bool = True) -> list[str]:
    """``instance`` against definition ``name``; ``closed``: and no undeclared key outside ``_meta`` (not
    for the envelopes, whose params are any of every method's: the method's own definition says it)."""
    problems = [f"{where}: {error.message} at {list(error.absolute_path)}"
                for error in schema.validator(name).iter_errors(instance)]
    if closed:
        problems += [f"{where}: {key} is not in {name} (extensions go under _meta)"
                     for key in schema.undeclared(instance, {"$ref": f"#/$defs/{name}"}, "")]
    return problems


def records(outdir: Path) -> dict[str, list[tuple[str, dict]]]:
    """Each tapped process's JSON-RPC lines, in order, as (direction, message)."""
    found: dict[str, list[tuple[str, dict]]] = {}
    for path in sorted(outdir.glob("*.jsonl")):
        lines = []
        for raw in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(raw)
            try:
                message = json.loads(entry["line"])
            except ValueError:
                assert entry["dir"] == "in", f"the plugin wrote a line that is not JSON: {entry['line']!r}"
                continue  # an agent's noise on stdout
            lines.append((entry["dir"], message))
        found[path.name] = lines
    return found


def validate(outdir: Path) -> tuple[list[str], Counter[str]]:
    """Every outgoing message checked; the problems, and how many messages of each kind were checked."""
    problems: list[str] = []
    seen: Counter[str] = Counter()
    for process, lines in records(outdir).items():
        asked: dict[Any, str] = {}
        for direction, message in lines:
            if direction == "in" and "method" in message and "id" in message:
                asked[json.dumps(message["id"])] = message["method"]
        for direction, message in lines:
            if direction != "out":
                continue
            where = f"{process} {json.dumps(message)[:200]}"
            if message.get("jsonrpc") != "2.0":
                problems.append(f"{where}: jsonrpc is not '2.0'")
            method = message.get("method")
            if method is not None and str(method).startswith("_"):
                seen[f"→ {method} (extension)"] += 1
                continue
            if method is not None:
                kind = "Request" if "id" in message else "Notification"
                side = "protocol" if method == "$/cancel_request" else "agent"
                envelope = "ClientRequest" if kind == "Request" else "ClientNotification"
                problems += check(STABLE, envelope, message, where, closed=False) if side == "agent" else []
                found, label = checked(side, method, kind, message.get("params", {}), where)
                problems += found
                seen[f"→ {method}{label}"] += 1
                continue
            answered = asked.get(json.dumps(message.get("id")))
            if answered is None:
                problems.append(f"{where}: a response to no request of the agent")
                continue
            if "error" in message:
                problems += check(STABLE, "Error", message["error"], where)
                seen[f"→ error for {answered}"] += 1
                continue
            problems += check(STABLE, "ClientResponse", message, where, closed=False)
            found, label = checked("client", answered, "Response", message.get("result"), where)
            problems += found
            seen[f"→ result for {answered}{label}"] += 1
    return problems, seen


def requests_answered(outdir: Path, method: str) -> int:
    """How many ``method`` requests of the plugin the agent has answered (any process)."""
    count = 0
    for lines in records(outdir).values():
        ids = {json.dumps(m["id"]) for d, m in lines if d == "out" and m.get("method") == method and "id" in m}
        count += sum(1 for d, m in lines if d == "in" and "method" not in m and json.dumps(m.get("id")) in ids)
    return count


def finish(nvim, key: str, turns: int) -> None:
    """Wait for ``turns`` ended turns in ``key``'s chat, allowing every permission asked meanwhile
    (an edit's review is accepted, a command is allowed)."""
    def probe() -> bool:
        if nvim.exec_lua(PENDING_LUA):
            allow(nvim)
            return False
        return chat(nvim, key).count("turn ended") >= turns
    wait_for(probe, what=f"{turns} turn(s) of {key} to end", nvim=nvim)


def closed_session(outdir: Path) -> str:
    """The id of the session the plugin closed (``session/close``)."""
    return next(m["params"]["sessionId"] for lines in records(outdir).values() for d, m in lines
                if d == "out" and m.get("method") == "session/close")


def start(nvim, tmp_path: Path, **env: str) -> Path:
    """The demo agent behind the tap, with ``env``; the folder of the recordings."""
    outdir = tmp_path / "wire"
    nvim.exec_lua(NOTIFY + SELECT)
    nvim.exec_lua(SETUP, sys.executable, str(TAP), str(outdir), {"PYTHONPATH": str(ROOT / "python"), **env})
    return outdir


def assert_valid(outdir: Path, *expected: str) -> Counter[str]:
    problems, seen = validate(outdir)
    assert not problems, "\n".join(problems[:40])
    missing = [name for name in expected if not any(key.startswith(name) for key in seen)]
    assert not missing, f"not exercised: {missing}; checked: {dict(seen)}"
    return seen


def test_the_outgoing_traffic_of_the_demo_agents_scenarios_is_valid_acp_v1(nvim, tmp_path, workspace):
    outdir = start(nvim, tmp_path, ACP_DEMO_SESSIONS_DIR=str(tmp_path / "agent-sessions"),
                   ACP_DEMO_CAPABILITIES="logout,delete")
    key = "tapped/1"
    ended = 0

    def turn(text: str) -> None:
        nonlocal ended
        nvim.command(f"Ai send {text}")
        ended += 1
        finish(nvim, key, ended)

    turn("hello")
    turn("plan")
    path = workspace / "sample.txt"
    path.write_text("".join(f"line {i}\n" for i in range(1, 9)))
    turn(f"read {path}")
    turn(f"edit {path}")
    assert "edited by demo" in path.read_text()
    turn("terminal printf 'from the terminal\\n'")
    assert "from the terminal" in chat(nvim, key)
    turn("terminal --kill sleep 30")
    nvim.command("Ai send ask")
    wait_for(lambda: nvim.exec_lua("return require('acp_nvim.question').list()"), what="the question", nvim=nvim)
    answer_keys(nvim, "q")
    ended += 1
    finish(nvim, key, ended)
    nvim.command("Ai send slow 400")
    wait_for(lambda: session_state(nvim, key).get("state") not in (None, "idle"), what="the slow turn", nvim=nvim)
    nvim.command("Ai cancel")
    ended += 1
    finish(nvim, key, ended)
    nvim.command("Ai mode code")
    wait_for(lambda: requests_answered(outdir, "session/set_mode") >= 1, what="set_mode answered", nvim=nvim)
    nvim.command(f"Ai model {list(MODEL_VALUES)[-1]}")
    wait_for(lambda: requests_answered(outdir, "session/set_config_option") >= 1, what="set_config_option answered",
             nvim=nvim)
    nvim.command("Ai fork")
    wait_for(lambda: requests_answered(outdir, "session/fork") >= 1, what="the fork", nvim=nvim)
    nvim.command("Ai close")  # the fork, now the current session
    wait_for(lambda: requests_answered(outdir, "session/close") >= 1, what="session/close answered", nvim=nvim)
    nvim.command(f"Ai resume {closed_session(outdir)}")
    wait_for(lambda: requests_answered(outdir, "session/resume") + requests_answered(outdir, "session/load") >= 1,
             what="the resume", nvim=nvim)
    nvim.command("Ai logout")
    wait_for(lambda: requests_answered(outdir, "logout") >= 1, what="logout answered", nvim=nvim)
    nvim.command("Ai close")
    wait_for(lambda: requests_answered(outdir, "session/close") >= 2, what="the resumed session closed", nvim=nvim)
    nvim.command(f"Ai delete {closed_session(outdir)}")
    wait_for(lambda: requests_answered(outdir, "session/delete") >= 1, what="session/delete answered", nvim=nvim)
    assert_valid(outdir, "→ logout", "→ session/delete", "→ initialize", "→ session/new", "→ session/prompt",
                 "→ session/cancel",
                 "→ session/set_mode", "→ session/set_config_option", "→ session/fork", "→ session/close",
                 "→ session/resume", "→ result for session/request_permission", "→ result for fs/read_text_file",
                 "→ result for fs/write_text_file", "→ result for terminal/create", "→ result for terminal/output",
                 "→ result for terminal/wait_for_exit", "→ result for terminal/release", "→ result for terminal/kill",
                 "→ result for elicitation/create")


def test_authenticate_and_load_are_valid_acp_v1(nvim, tmp_path):
    """An agent that asks for a login (its own method) and offers ``session/load`` but not resume:
    ``:Ai resume`` of a session it had loads it in a new process (which no longer knows it: the
    demo agent keeps sessions in memory without ``ACP_DEMO_SESSIONS_DIR``, so the load fails)."""
    outdir = start(nvim, tmp_path, ACP_DEMO_REQUIRE_AUTH="1")
    nvim.exec_lua("_G.choose = { 'Demo login' }")
    nvim.command("Ai send hello")
    finish(nvim, "tapped/1", 1)
    session_id = next(m["result"]["sessionId"] for lines in records(outdir).values() for d, m in lines
                      if d == "in" and isinstance(m.get("result"), dict) and "sessionId" in m["result"])
    nvim.command("Ai close")
    wait_for(lambda: "session closed" in chat(nvim, "tapped/1"), what="the session closed", nvim=nvim)
    nvim.command(f"Ai resume {session_id}")
    wait_for(lambda: requests_answered(outdir, "session/load") >= 1, what="session/load answered", nvim=nvim)
    assert_valid(outdir, "→ authenticate", "→ session/load")


def test_the_check_sees_a_broken_message_and_an_extension_outside_meta(tmp_path):
    """The checker itself: what the plugin must never send is found (no Neovim needed)."""
    lines = [
        ("out", {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                 "params": {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True, "x": 1}},
                            "_meta": {"fine": True}}}),
        ("out", {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {"prompt": []}}),
        ("out", {"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
                 "params": {"sessionId": "s", "prompt": [{"type": "text", "text": "a", "colour": "red"}]}}),
        ("out", {"jsonrpc": "2.0", "id": 3, "method": "session/teleport", "params": {}}),
        ("in", {"jsonrpc": "2.0", "id": 7, "method": "session/request_permission", "params": {}}),
        ("out", {"jsonrpc": "2.0", "id": 7, "result": {"outcome": {"outcome": "maybe"}}}),
        ("out", {"jsonrpc": "2.0", "id": 8, "result": {}}),
        ("out", {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s", "_meta": {"ok": 1}}}),
    ]
    (tmp_path / "1.jsonl").write_text("".join(json.dumps({"dir": d, "line": json.dumps(m)}) + "\n"
                                              for d, m in lines))
    problems, seen = validate(tmp_path)
    text = "\n".join(problems)
    assert ".clientCapabilities.fs.x is not in InitializeRequest" in text
    assert "'sessionId' is a required property" in text
    assert ".prompt[0].colour is not in PromptRequest" in text
    assert "session/teleport is no request of the ACP v1 schema" in text
    assert "RequestPermissionResponse" in text or "'maybe'" in text
    assert "a response to no request of the agent" in text
    assert not [p for p in problems if "session/cancel" in p and "_meta" in p], text
    assert seen["→ session/cancel"] == 1
