"""acp.nvim withdraws its own requests it stops waiting for (``$/cancel_request``): a real agent
process that answers ``initialize`` and then nothing, and writes every line it reads to a file."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

from acp_nvim.core.agent.process import AgentHooks, AgentProcess
from acp_nvim.core.config import AgentSpec, TimeoutSettings
from acp_nvim.core.connection.past import list_sessions, listing_client
from acp_nvim.core.errors import AgentTimeoutError
from acp_nvim.core.log.ring import LogRing
from helpers import async_wait_for

pytestmark = pytest.mark.timeout(60)

SILENT = r"""
import json, sys
out = open(sys.argv[1], "a")
for line in sys.stdin:
    out.write(line); out.flush()
    message = json.loads(line)
    if message.get("method") == "initialize":
        result = {"protocolVersion": 1, "agentCapabilities": {"sessionCapabilities": {"list": {}}}}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""


def received(path) -> list[dict]:
    return [json.loads(raw) for raw in path.read_text().splitlines()] if path.exists() else []


async def started(tmp_path, handshake: float = 30) -> tuple[AgentProcess, object]:
    seen = tmp_path / "seen.jsonl"
    spec = AgentSpec(command=sys.executable, args=["-c", SILENT, str(seen)])
    process = AgentProcess("silent", spec, listing_client(), LogRing(), str(tmp_path),
                           AgentHooks(timeouts=TimeoutSettings(handshake=handshake, notice=handshake)))
    await process.start()
    return process, seen


async def test_a_request_that_times_out_is_withdrawn(tmp_path):
    process, seen = await started(tmp_path, handshake=1)
    try:
        with pytest.raises(AgentTimeoutError, match="session/list"):
            await list_sessions(process, str(tmp_path))
        await async_wait_for(lambda: any(m.get("method") == "$/cancel_request" for m in received(seen)))
        listed = next(m for m in received(seen) if m.get("method") == "session/list")
        cancel = next(m for m in received(seen) if m.get("method") == "$/cancel_request")
        assert cancel == {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": listed["id"]}}
        assert any("withdrew session/list" in e.summary for e in process.log.entries())
    finally:
        await process.close()


async def test_a_request_given_up_by_its_caller_is_withdrawn(tmp_path):
    process, seen = await started(tmp_path)
    try:
        listing = asyncio.ensure_future(list_sessions(process, str(tmp_path)))
        await async_wait_for(lambda: any(m.get("method") == "session/list" for m in received(seen)))
        listing.cancel()  # the user closed what waited for it
        await async_wait_for(lambda: any(m.get("method") == "$/cancel_request" for m in received(seen)))
        assert listing.cancelled()
    finally:
        await process.close()
