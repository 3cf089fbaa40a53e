"""A session's mode and config options, set on the agent (``session/set_mode``,
``session/set_config_option``); the mode policy hears of each mode asked and answered."""

from __future__ import annotations

from collections.abc import Callable

from ..conversation.details import SessionDetails
from .link import AgentLink
from .mode_policy import ModeWatch


class AgentOptions:
    """Sets one session's mode and options; ``changed`` tells the editor."""

    def __init__(self, link: AgentLink, details: SessionDetails, watch: ModeWatch, changed: Callable[[], None]) -> None:
        self._link = link
        self._details = details
        self._watch = watch
        self._changed = changed

    async def set_mode(self, mode_id: str) -> None:
        """Switch to ``mode_id``: through the mode config option where the agent offers one (it wins
        over modes), else ``session/set_mode``."""
        option = self._details.mode_option()
        if option is not None and mode_id in {v.value for v in option.values}:
            await self.set_config_option(option.id, mode_id)
            return
        link = self._link
        self._watch.asked(mode_id)  # before the request: agents report the new mode before they answer
        await link.process.ask("session/set_mode", link.connection.set_session_mode(
            session_id=link.session, mode_id=mode_id))
        self._details.mode = mode_id
        self._changed()

    async def set_config_option(self, config_id: str, value: str | bool) -> None:
        """``session/set_config_option``; the response carries every option's new value (an agent
        that answers with another mode than the one asked switched itself: the mode policy judges it)."""
        link, details = self._link, self._details
        option = details.option("mode")
        if option is not None and option.id == config_id and isinstance(value, str):
            self._watch.asked(value)  # before the request: agents report the new mode before they answer
        response = await link.process.ask("session/set_config_option", link.connection.set_config_option(
            config_id=config_id, session_id=link.session, value=value))
        details.set_options(response.config_options)
        details.mode_from_options()
        self._watch.reported(details.mode)
        self._changed()
