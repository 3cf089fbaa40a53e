"""A scripted agent that answers ``initialize`` with the protocol version given as its argument
(an agent that speaks only a version acp.nvim does not)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from acp import run_agent, stdio_streams
from acp.schema import AgentCapabilities, Implementation, InitializeResponse

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: run as a script
from scripted_agent import ScriptedAgent

VERSION = int(sys.argv[1])


class VersionAgent(ScriptedAgent):
    name = "version"

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=VERSION, agent_capabilities=AgentCapabilities(),
                                  agent_info=Implementation(name=self.name, version="0"))


async def serve() -> None:
    reader, writer = await stdio_streams()
    await run_agent(VersionAgent(), writer, reader)


if __name__ == "__main__":
    asyncio.run(serve())
