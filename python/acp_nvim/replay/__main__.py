"""``python -m acp_nvim.replay FILE``: speak ACP on stdio, playing back the agent's side of FILE."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from typing import cast

from acp import Agent, run_agent, stdio_streams

from .agent import ReplayAgent
from .player import MAX_DELAY, Player
from .script import ScriptError, load

STDIO_LIMIT = 64 * 1024 * 1024


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m acp_nvim.replay",
        description="An ACP agent that plays back the agent's side of a log exported with "
                    ":Ai log export: recorded responses, notifications, requests, stderr and stdout "
                    "lines, in recorded order, waiting for the client's messages where the recording has them.",
    )
    parser.add_argument("file", help="the JSONL file written by :Ai log export")
    parser.add_argument("--delays", action="store_true",
                        help=f"keep the recorded pauses between agent messages (each at most {MAX_DELAY:g}s)")
    return parser


async def serve(steps: list, delays: bool) -> None:
    """Run the replay on stdin/stdout until the client disconnects."""
    reader, writer = await stdio_streams(limit=STDIO_LIMIT)

    async def raw_write(data: bytes) -> None:
        writer.write(data)
        await writer.drain()

    player = Player(steps, raw_write, delays=delays)
    playing = asyncio.ensure_future(player.run())
    try:
        await run_agent(cast(Agent, ReplayAgent(player)), writer, reader, use_unstable_protocol=True,
                        stdio_buffer_limit_bytes=STDIO_LIMIT, observers=[player.observe])
    finally:
        playing.cancel()
        with contextlib.suppress(BaseException):
            await playing


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        steps = load(args.file)
    except ScriptError as exc:
        print(f"acp_nvim.replay: {exc}", file=sys.stderr)
        return 2
    try:
        asyncio.run(serve(steps, args.delays))
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
