"""What goes wrong with checkpoints, in words for the user (nothing is changed when one is raised)."""

from __future__ import annotations

from ..errors import AcpNvimError


class CheckpointError(AcpNvimError):
    """A rewind cannot be done as asked (an unknown turn, a running turn, checkpoints off)."""


class CheckpointGone(CheckpointError):
    """A content the checkpoint needs is no longer in the store (pruned, or removed by hand)."""


class CheckpointCorrupt(CheckpointError):
    """A stored content or manifest is not what was written (its hash or its shape is wrong)."""
