"""The demo agent's boolean config option, so that clients can test on/off options offline."""

from __future__ import annotations

from acp.schema import SessionConfigOptionBoolean

VERBOSE_ID = "verbose"


def verbose_option(current: bool) -> SessionConfigOptionBoolean:
    """``verbose``: a boolean option; the demo agent only remembers and reports it."""
    return SessionConfigOptionBoolean(
        id=VERBOSE_ID,
        name="Verbose replies",
        description="A boolean option (the demo agent only reports it back)",
        type="boolean",
        current_value=current,
    )
