"""Entry point: ``python -m faults.agent`` speaks ACP (badly, on request) over stdio."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import sys
from typing import cast

from acp import Agent
from acp.core import AgentSideConnection
from acp.stdio import stdio_streams

from .agent import FaultAgent
from .config import Config
from .events import Events
from .transport import LINE_LIMIT, TapTransport

STUBBORN_CHILD = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(3600)"


def spawn_child(config: Config) -> subprocess.Popen[bytes]:
    """A helper process, as real agents have (a launcher's real agent, an MCP server).

    A well-behaved one ends with its parent (``cat`` on a pipe only the agent holds);
    a stubborn one ignores SIGTERM and outlives it.
    """
    argv = [sys.executable, "-c", STUBBORN_CHILD] if config.stubborn else ["cat"]
    stdin = subprocess.DEVNULL if config.stubborn else subprocess.PIPE
    return subprocess.Popen(argv, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def serve(config: Config, events: Events) -> None:
    reader, writer = await stdio_streams(limit=LINE_LIMIT)
    transport = TapTransport(reader, writer, events)
    agent = FaultAgent(config, events, transport)
    conn = AgentSideConnection(cast(Agent, agent), transport, listening=False, use_unstable_protocol=True)
    with contextlib.suppress(Exception):
        await conn.listen()
    if config.stubborn:
        events.add("ignoring_eof")
        await asyncio.Event().wait()


def main() -> int:
    config = Config.from_env()
    events = Events(config.dir)
    if config.stubborn:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = spawn_child(config)
    events.add("start", child=child.pid, stubborn=config.stubborn)
    try:
        asyncio.run(serve(config, events))
    finally:
        if not config.stubborn:
            child.kill()
    events.add("exit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
