"""The agent object the SDK routes client messages to: each one is handed to the player."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .player import Player

Handler = Callable[..., Awaitable[Any]]


def _request(method: str) -> Handler:
    # not "**params": the SDK takes a handler with a "params" parameter for the legacy API
    async def handler(self: ReplayAgent, **fields: Any) -> Any:
        return await self.player.arrive(method, notification=False)

    handler.__doc__ = f"``{method}``: answered with the recorded response."
    return handler


def _notification(method: str) -> Handler:
    async def handler(self: ReplayAgent, **fields: Any) -> None:
        await self.player.arrive(method, notification=True)

    handler.__doc__ = f"``{method}``: matched with the recorded notification."
    return handler


class ReplayAgent:
    """An ``acp.Agent`` whose answers all come from a recording."""

    def __init__(self, player: Player) -> None:
        self.player = player

    def on_connect(self, conn: Any) -> None:
        self.player.attach(conn)

    initialize = _request("initialize")
    authenticate = _request("authenticate")
    new_session = _request("session/new")
    load_session = _request("session/load")
    list_sessions = _request("session/list")
    resume_session = _request("session/resume")
    fork_session = _request("session/fork")
    close_session = _request("session/close")
    set_session_mode = _request("session/set_mode")
    set_config_option = _request("session/set_config_option")
    prompt = _request("session/prompt")
    cancel = _notification("session/cancel")

    async def ext_method(self, method: str, params: dict[str, Any]) -> Any:
        return await self.player.arrive(f"_{method}", notification=False)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        await self.player.arrive(f"_{method}", notification=True)
