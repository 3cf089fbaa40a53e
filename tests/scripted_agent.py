"""The base of the test suite's scripted ACP agents (fs probe, hostile agent): one session, and a
prompt that is one JSON object naming an operation (``op``) and a result file (``out``).

``_<op>(session_id, request)`` runs the operation; its result is written whole to ``out`` (temp file,
then rename: the test polls for the file), and the turn ends with a "<name> <op> done" line.
"""

from __future__ import annotations

import json
import os
from typing import Any

from acp import PROTOCOL_VERSION
from acp.helpers import update_agent_message_text
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    TextContentBlock,
)


class ScriptedAgent:
    """Answers the handshake as ``name`` and runs each prompt's operation."""

    name = "scripted"

    def __init__(self) -> None:
        self.client: Any = None

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=PROTOCOL_VERSION, agent_capabilities=AgentCapabilities(),
                                  agent_info=Implementation(name=self.name, version="0"))

    async def new_session(self, cwd: str, mcp_servers: list[Any], **kwargs: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id=f"{self.name}-1")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        text = "".join(b.text for b in prompt if isinstance(b, TextContentBlock))
        request = json.loads(text[text.index("{"):])
        result = await getattr(self, "_" + request["op"])(session_id, request)
        partial = request["out"] + ".partial"
        with open(partial, "w", encoding="utf-8") as handle:
            json.dump(result, handle)
        os.replace(partial, request["out"])
        await self.client.session_update(session_id=session_id,
                                         update=update_agent_message_text(f"{self.name} {request['op']} done\n"))
        return PromptResponse(stop_reason="end_turn")
