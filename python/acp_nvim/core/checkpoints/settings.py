"""``checkpoints`` in ``setup()``: how much of each turn's files is kept, and where a scan stops."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MIB = 1024 * 1024


class CheckpointSettings(BaseModel):
    """What a checkpoint keeps; ``checkpoints = false`` keeps none (and :Ai rewind is off)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(default=True, json_schema_extra={"internal": True})
    """False when setup() says ``checkpoints = false``."""
    max_bytes: int = Field(default=200 * MIB, ge=4096, json_schema_extra={"unit": "bytes"}, description=(
        "Checkpoint storage per working directory (compressed, each content once); the oldest "
        "checkpoints are pruned first."))
    max_file_bytes: int = Field(default=8 * MIB, ge=1, json_schema_extra={"unit": "bytes"}, description=(
        "A file larger than this is noted in its checkpoint, not kept: a rewind says it cannot restore it."))
    scan_max_files: int = Field(default=5000, ge=0, description=(
        "Files of the workspace roots stat'ed around a command the agent runs, to see what it changed "
        "(0: no scan; only files the agent names or writes through the editor are kept)."))
