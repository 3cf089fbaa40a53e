"""Entry point: ``python -m acp_nvim.demo_agent`` speaks ACP over stdio."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from typing import cast

from acp import Agent, run_agent, stdio_streams

from . import logins
from .agent import DemoAgent
from .scenarios import help_text
from .turn import RawWriter

STDIO_BUFFER_LIMIT_BYTES = 50 * 1024 * 1024
STARTUP_DELAY_ENV = "ACP_DEMO_STARTUP_DELAY"
"""Seconds the agent takes to start before it reads its input (a slow agent start, for the benchmark)."""
END_GRACE = 0.2
"""Seconds the requests read before the input ended may still take to be answered."""


def finish_before_the_end(reader: asyncio.StreamReader) -> asyncio.StreamReader:
    """``reader`` (the agent's input), made to let the requests already read run before it reports its
    end: a client that writes ``session/close`` and then closes the input gets its session closed."""
    read = reader.readuntil

    async def readuntil(separator: bytes = b"\n") -> bytes:
        try:
            return await read(separator)
        except asyncio.IncompleteReadError:
            await asyncio.sleep(END_GRACE)
            raise

    reader.readuntil = readuntil  # type: ignore[method-assign,assignment]
    return reader


def build_parser() -> argparse.ArgumentParser:
    """Argument parser whose --help lists every scenario."""
    parser = argparse.ArgumentParser(
        prog="python -m acp_nvim.demo_agent",
        description="Offline, deterministic ACP demo agent. The first word of a prompt picks the scenario.",
        epilog="scenarios:\n" + help_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--ws", metavar="HOST:PORT", help="serve over WebSocket instead of stdio (port 0: any)")
    parser.add_argument("--resume", action="store_true", help="offer session/resume (with --ws)")
    parser.add_argument("--login", action="store_true", help="the terminal login of ACP_DEMO_REQUIRE_AUTH=all")
    return parser


def _raw_writer(writer: asyncio.StreamWriter) -> RawWriter:
    """Write whole lines to the same stdout stream the SDK uses, preserving framing."""

    async def write(data: bytes) -> None:
        writer.write(data)
        await writer.drain()

    return write


async def serve() -> None:
    """Run the demo agent on stdin/stdout until the client disconnects."""
    reader, writer = await stdio_streams(limit=STDIO_BUFFER_LIMIT_BYTES)
    agent = DemoAgent(raw_write=_raw_writer(writer))
    await run_agent(cast(Agent, agent), writer, finish_before_the_end(reader),
                    stdio_buffer_limit_bytes=STDIO_BUFFER_LIMIT_BYTES,
                    use_unstable_protocol=True)  # session/resume, fork and close (saved.py)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments (``--help`` exits early) and serve ACP over stdio."""
    options = build_parser().parse_args(argv)
    if options.login:
        return logins.terminal_login()
    time.sleep(float(os.environ.get(STARTUP_DELAY_ENV) or 0))  # a slow start: nothing is read meanwhile
    try:
        if options.ws:
            from .ws import serve_ws

            asyncio.run(serve_ws(options.ws, options.resume))
        else:
            asyncio.run(serve())
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
