"""The session as its lifecycle parts (``opening.py``, ``health.py``) see it: the parts it composes."""

from __future__ import annotations

from typing import Protocol

from ..config import TimeoutSettings
from ..connection.link import AgentLink
from ..connection.mode_policy import Target
from ..connection.reconnect import Reconnector
from ..conversation.failed_turns import FailedTurns
from ..conversation.queue import PromptQueue
from ..conversation.steering import Steering
from ..conversation.updates import UpdateRouter
from ..log.ring import LogRing
from ..mcp.session_mcp import SessionMcp
from ..questions import Questions
from ..terminal.service import TerminalService
from .lifecycle import Lifecycle
from .signals import Signals


class Owner(Target, Protocol):
    """A session's parts, handed to the parts that keep its lifecycle."""

    @property
    def agent_name(self) -> str: ...

    @property
    def restart_key(self) -> str: ...

    @property
    def steering(self) -> Steering: ...

    @property
    def failed_turns(self) -> FailedTurns: ...

    @property
    def questions(self) -> Questions: ...

    @property
    def timeouts(self) -> TimeoutSettings: ...

    @property
    def log(self) -> LogRing: ...

    @property
    def mcp(self) -> SessionMcp: ...

    @property
    def link(self) -> AgentLink: ...

    @property
    def queue(self) -> PromptQueue: ...

    @property
    def stream(self) -> UpdateRouter: ...

    @property
    def lifecycle(self) -> Lifecycle: ...

    @property
    def signals(self) -> Signals: ...

    @property
    def reconnector(self) -> Reconnector: ...

    @property
    def terminals(self) -> TerminalService: ...
