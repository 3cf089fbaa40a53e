"""Entry point of the fuzzer's agent; see the package docstring."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from typing import cast

from acp import Agent
from acp.core import AgentSideConnection
from acp.stdio import stdio_streams

from faults.agent.events import NullEvents
from faults.agent.transport import LINE_LIMIT

from .replay import Control, FuzzAgent, FuzzTransport


async def serve(socket_path: str) -> None:
    reader, writer = await stdio_streams(limit=LINE_LIMIT)
    transport = FuzzTransport(reader, writer, NullEvents())
    agent = FuzzAgent()
    conn = AgentSideConnection(cast(Agent, agent), transport, listening=False)
    control = Control(socket_path, agent, transport)
    task = asyncio.ensure_future(control.run())
    with contextlib.suppress(Exception):
        await conn.listen()
    task.cancel()


def main() -> int:
    asyncio.run(serve(os.environ["FUZZ_SOCKET"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
