"""Entry point: ``python -m acp_nvim.demo_agent`` speaks ACP over stdio."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import cast

from acp import Agent, run_agent, stdio_streams

from . import logins
from .agent import DemoAgent
from .scenarios import help_text
from .turn import RawWriter

STDIO_BUFFER_LIMIT_BYTES = 50 * 1024 * 1024


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
    await run_agent(cast(Agent, agent), writer, reader, stdio_buffer_limit_bytes=STDIO_BUFFER_LIMIT_BYTES,
                    use_unstable_protocol=True)  # session/resume, fork and close (saved.py)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments (``--help`` exits early) and serve ACP over stdio."""
    options = build_parser().parse_args(argv)
    if options.login:
        return logins.terminal_login()
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
