"""``terminals`` in ``setup()``: output bounds of the commands agents run through the editor."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MIB = 1024 * 1024


class TerminalSettings(BaseModel):
    """Output kept per terminal when the agent names no ``outputByteLimit``, and the most it may ask."""

    model_config = ConfigDict(extra="forbid")

    output_limit: int = Field(default=1 * MIB, ge=1, json_schema_extra={"unit": "bytes"},
                              description="Output kept per terminal when the agent names no limit.")
    max_output_limit: int = Field(default=16 * MIB, ge=1, json_schema_extra={"unit": "bytes"},
                                  description="The most an agent's outputByteLimit may ask for.")
    preview_lines: int = Field(default=12, ge=0, description=(
        "Last lines of a running terminal's output shown live in the chat under its tool call."))
    kill_grace: float = Field(default=3.0, gt=0, json_schema_extra={"unit": "seconds"}, description=(
        "How long a session's ending waits for its killed terminals to exit."))

    def limit(self, asked: int | None) -> int:
        """The byte limit of a terminal: the agent's, bounded by ``max_output_limit``."""
        return min(asked if asked is not None else self.output_limit, self.max_output_limit)
