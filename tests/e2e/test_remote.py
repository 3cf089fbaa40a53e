"""Remote agents: the core reaches the demo agent over WebSocket, and reconnects after a drop."""

from __future__ import annotations

import signal

import pytest

from acp_nvim.core.config import parse_settings
from acp_nvim.core.errors import AgentStartError
from acp_nvim.core.session.session import Prompt
from helpers import async_wait_for, core
from helpers.core import chat_text
from ws_server import demo_ws_server

pytestmark = pytest.mark.timeout(60)


async def remote_session(tmp_path, url, headers=None):
    agent = {"url": url, **({"headers": headers} if headers else {})}
    return (await core.started(tmp_path, {"agents": {"far": agent}}, agent="far"))[2]


@pytest.mark.parametrize(("flags", "how"), [((), "reloaded"), (("--resume",), "resumed")])
async def test_a_dropped_connection_reconnects_and_resumes_the_session(tmp_path, flags, how):
    with demo_ws_server(*flags) as (url, server):
        session = await remote_session(tmp_path, url, {"Authorization": "Bearer sekrit-token-123"})
        try:
            session.submit(Prompt("hello over the wire"))
            await async_wait_for(lambda: "You said: hello over the wire" in chat_text(session)
                                 and session.state == "idle")
            first_id = session.session_id
            server.send_signal(signal.SIGUSR1)  # the network drops every connection
            await async_wait_for(lambda: f"reconnected ({how})" in chat_text(session), timeout=30,
                                 what="the reconnect")
            await async_wait_for(lambda: session.state == "idle")
            assert session.session_id == first_id
            session.submit(Prompt("still there?"))
            await async_wait_for(lambda: "You said: still there?" in chat_text(session))
            log = "\n".join(entry.summary for entry in session.log.entries())
            assert "connected to ws://" in log and "connection closed" in log
            assert "sekrit-token-123" not in "\n".join(session.log.export({}))
        finally:
            await session.close()


async def test_an_unreachable_agent_fails_with_a_clear_reason(tmp_path):
    with pytest.raises(AgentStartError, match=r"cannot reach agent 'far' at ws://127.0.0.1:9/"):
        await remote_session(tmp_path, "ws://127.0.0.1:9/")


async def test_a_prompt_queued_while_the_connection_is_down_is_sent_after_the_reconnect(tmp_path):
    with demo_ws_server() as (url, server):
        session = await remote_session(tmp_path, url)
        try:
            session.submit(Prompt("slow 300"))
            await async_wait_for(lambda: "tick 3" in chat_text(session))
            server.send_signal(signal.SIGUSR1)  # drops mid-turn
            session.submit(Prompt("after the drop"))
            await async_wait_for(lambda: "You said: after the drop" in chat_text(session), timeout=30)
            assert "reconnected (reloaded)" in chat_text(session)
            assert "a running turn was cut short" in chat_text(session)
            await async_wait_for(lambda: session.state == "idle" and not session.queue)
        finally:
            await session.close()


@pytest.mark.parametrize(("url", "insecure", "refused"), [
    ("ws://agents.example.com/acp", False, True),
    ("ws://10.0.0.7:9000", False, True),
    ("ws://[fe80::1]:9", False, True),
    ("ws://127.0.0.1.example.com", False, True),
    ("ws://agents.example.com/acp", True, False),
    ("ws://127.0.0.1:9/", False, False),
    ("ws://127.8.9.10", False, False),
    ("ws://[::1]:9", False, False),
    ("ws://localhost:9", False, False),
    ("wss://agents.example.com/acp", False, False),
])
def test_clear_text_ws_off_this_machine_needs_insecure(url, insecure, refused):
    from acp_nvim.core.agent.remote import clear_text_warning
    from acp_nvim.core.errors import ConfigError

    agents = {"far": {"url": url, **({"insecure": True} if insecure else {})}}
    if refused:
        with pytest.raises(ConfigError, match="clear text; use wss://, or set insecure = true"):
            parse_settings({"agents": agents})
        return
    spec = parse_settings({"agents": agents}).agents["far"]
    assert (clear_text_warning(spec) is not None) is insecure
