"""Errors the core raises for the editor layer to show to the user."""


class AcpNvimError(Exception):
    """Base class: the message is written for the user, without a traceback."""


class ConfigError(AcpNvimError):
    """The user's configuration is invalid."""


class AgentStartError(AcpNvimError):
    """An agent could not be spawned or did not complete ``initialize``."""


class AgentMissingError(AgentStartError):
    """The agent's command is not installed: restarting cannot help, installing it does."""

    def __init__(self, message: str, install: str) -> None:
        super().__init__(message)
        self.install = install
        """"install it: {line}", or '' when no install line is known."""


class SessionClosedError(AcpNvimError):
    """The agent behind a session is gone."""


class AgentTimeoutError(AcpNvimError):
    """An agent did not answer a request within its timeout."""


class AgentExitedError(AcpNvimError):
    """An agent process exited while a request waited for its answer."""
