"""A tiny real ACP agent with configurable modes, for the mode-policy and redaction tests.

Its environment says who it is and what it offers:
  ACP_TEST_AGENT_NAME   the agentInfo.name of its initialize response (default "mode-probe")
  ACP_TEST_MODES        comma-separated mode ids it offers (none: no modes)
  ACP_TEST_MODE         the mode it starts in (default: the first)
  ACP_TEST_ASKING       comma-separated modes in which it asks before writing (default: none)
  ACP_TEST_MODE_OPTION  "1": the modes are offered only as a config option (category "mode");
                        "both": as modes and as that option, and session/set_mode fails (a client
                        that supports config options uses them exclusively)
  ACP_TEST_REFUSE_MODE  "1": switching modes fails with a JSON-RPC error
  ACP_TEST_STICKY_MODE  a mode set_config_option answers with, whatever was asked (the agent
                        switches itself back in its answer)
The prompt is one JSON object:
  {"op": "say", "chunks": [...]}                 stream exactly these agent message chunks
  {"op": "leak", "env": NAME, "size": n}         stream "The key is <$NAME> and ghp_… done." in n-char chunks
  {"op": "write", "path": ..., "text": ...}      an edit tool call that writes the disk itself
                                                 (after a permission request in an asking mode;
                                                 "title" overrides its "Write <name>" title)
  {"op": "ask", "title": ..., "command": ...}    an execute permission request with this title and
                                                 command (the prompt's title and detail)
  {"op": "switch", "mode": ..., "via": ...}      the agent switches itself to this mode and says so with
                                                 a current_mode_update ("via": "update", the default) or
                                                 a config_option_update ("via": "option")
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, run_agent, stdio_streams
from acp.helpers import start_tool_call, tool_diff_content, update_agent_message_text, update_tool_call
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    TextContentBlock,
    ToolCallLocation,
    ToolCallUpdate,
)

MODES = [m for m in os.environ.get("ACP_TEST_MODES", "").split(",") if m]
ASKING = {m for m in os.environ.get("ACP_TEST_ASKING", "").split(",") if m}
AS_OPTION = os.environ.get("ACP_TEST_MODE_OPTION") == "1"
BOTH = os.environ.get("ACP_TEST_MODE_OPTION") == "both"
REFUSE = os.environ.get("ACP_TEST_REFUSE_MODE") == "1"
STICKY = os.environ.get("ACP_TEST_STICKY_MODE", "")
OPTIONS = [PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
           PermissionOption(option_id="no", name="Reject", kind="reject_once")]


class ModeAgent:
    def __init__(self) -> None:
        self.client: Any = None
        self.mode = os.environ.get("ACP_TEST_MODE") or (MODES[0] if MODES else "")
        self.calls = 0

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        name = os.environ.get("ACP_TEST_AGENT_NAME", "mode-probe")
        return InitializeResponse(protocol_version=PROTOCOL_VERSION, agent_capabilities=AgentCapabilities(),
                                  agent_info=Implementation(name=name, version="0"))

    async def new_session(self, cwd: str, mcp_servers: list[Any], **kwargs: Any) -> NewSessionResponse:
        if not MODES:
            return NewSessionResponse(session_id="mode-1")
        if AS_OPTION:
            return NewSessionResponse(session_id="mode-1", config_options=[self._option()])
        modes = SessionModeState(current_mode_id=self.mode,
                                 available_modes=[SessionMode(id=m, name=m.title()) for m in MODES])
        return NewSessionResponse(session_id="mode-1", modes=modes, config_options=[self._option()] if BOTH else None)

    def _option(self) -> SessionConfigOptionSelect:
        return SessionConfigOptionSelect(id="mode", name="Mode", category="mode", type="select",
                                         current_value=self.mode,
                                         options=[SessionConfigSelectOption(value=m, name=m.title()) for m in MODES])

    async def set_session_mode(self, mode_id: str, session_id: str, **kwargs: Any) -> SetSessionModeResponse:
        if REFUSE:
            raise RequestError.invalid_params({"reason": "modes are locked"})
        if BOTH:
            raise RequestError.invalid_params({"reason": "set the mode config option"})
        self.mode = mode_id
        return SetSessionModeResponse()

    async def set_config_option(self, config_id: str, session_id: str, value: Any,
                                **kwargs: Any) -> SetSessionConfigOptionResponse:
        if REFUSE:
            raise RequestError.invalid_params({"reason": "modes are locked"})
        self.mode = STICKY or str(value)
        return SetSessionConfigOptionResponse(config_options=[self._option()])

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        text = "".join(b.text for b in prompt if isinstance(b, TextContentBlock))
        request = json.loads(text[text.index("{"):])
        if request["op"] == "say":
            for chunk in request["chunks"]:
                await self.client.session_update(session_id=session_id, update=update_agent_message_text(chunk))
        elif request["op"] == "leak":
            text = f"The key is {os.environ[request['env']]} and the token is ghp_{'a1' * 18} done.\n"
            size = int(request["size"])
            for start in range(0, len(text), size):
                await self.client.session_update(session_id=session_id,
                                                 update=update_agent_message_text(text[start:start + size]))
        elif request["op"] == "write":
            await self._write(session_id, Path(request["path"]), request["text"], request.get("title"))
        elif request["op"] == "ask":
            await self._ask(session_id, request["title"], request["command"])
        elif request["op"] == "switch":
            self.mode = request["mode"]
            update = (ConfigOptionUpdate(session_update="config_option_update", config_options=[self._option()])
                      if request.get("via") == "option" else
                      CurrentModeUpdate(session_update="current_mode_update", current_mode_id=self.mode))
            await self.client.session_update(session_id=session_id, update=update)
        return PromptResponse(stop_reason="end_turn")

    async def _ask(self, session_id: str, title: str, command: str) -> None:
        self.calls += 1
        call_id = f"run-{self.calls}"
        await self.client.session_update(session_id=session_id, update=start_tool_call(
            call_id, title, kind="execute", status="pending", raw_input={"command": command}))
        await self.client.request_permission(session_id=session_id, options=OPTIONS, tool_call=ToolCallUpdate(
            tool_call_id=call_id, title=title, kind="execute", raw_input={"command": command}))
        await self.client.session_update(session_id=session_id, update=update_tool_call(call_id, status="completed"))

    async def _write(self, session_id: str, path: Path, text: str, title: str | None = None) -> None:
        self.calls += 1
        call_id = f"write-{self.calls}"
        title = title or f"Write {path.name}"
        old = path.read_text() if path.exists() else None
        content = [tool_diff_content(str(path), text, old)]
        locations = [ToolCallLocation(path=str(path))]
        await self.client.session_update(session_id=session_id, update=start_tool_call(
            call_id, title, kind="edit", status="pending", content=content, locations=locations))
        if self.mode in ASKING:
            response = await self.client.request_permission(session_id=session_id, options=OPTIONS, tool_call=(
                ToolCallUpdate(tool_call_id=call_id, title=title, kind="edit", content=content,
                               locations=locations)))
            outcome = response.outcome
            if not isinstance(outcome, AllowedOutcome) or outcome.option_id != "yes":
                await self.client.session_update(session_id=session_id,
                                                 update=update_tool_call(call_id, status="failed"))
                return
        path.write_text(text)
        await self.client.session_update(session_id=session_id, update=update_tool_call(call_id, status="completed"))


async def serve() -> None:
    reader, writer = await stdio_streams()
    await run_agent(ModeAgent(), writer, reader)


if __name__ == "__main__":
    asyncio.run(serve())
    sys.exit(0)
