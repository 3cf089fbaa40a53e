"""What a rewind does, worked out from the checkpoints alone (no disk, no editor).

A rewind to before turn N sets back every file a live turn from N on touched: each to its
content before the first of those turns that touched it. What the last of them left (its
content after that turn) is what the file should hold now: when it holds something else, the
user (or another program) changed it since, and the rewind shows it three-way instead of
writing over it blindly. Turns a rewind already took back are no longer on the files, so
they are skipped; a rewind to one of them is refused (``:Ai rewind undo`` brings them back).
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import CheckpointError
from .model import Checkpoint, Ref


@dataclass(frozen=True, slots=True)
class Step:
    """One file of a rewind: make it ``want``; ``expect`` is what it should hold now (None: not known)."""

    path: str
    want: Ref
    expect: Ref | None
    turn: int
    """The turn whose content-before ``want`` is (or the turn of an undo record)."""


def choose(checkpoints: list[Checkpoint], wanted: int | None, key: str) -> Checkpoint:
    """The checkpoint ``:Ai rewind [turn]`` names (no number: the last live turn); a CheckpointError
    in words for the user when it names none a rewind can go back to."""
    if not checkpoints:
        raise CheckpointError(f"{key}: no turn has run in this session yet: nothing to rewind")
    live = [c for c in checkpoints if c.live]
    if wanted is None:
        if not live:
            raise CheckpointError(f"{key}: every turn was taken back already (:Ai rewind undo brings them back)")
        found = live[-1]
    else:
        match = [c for c in checkpoints if c.turn == wanted]
        if not match:
            raise CheckpointError(f"{key}: there is no turn {wanted}: this session ran turns "
                                  f"{checkpoints[0].turn}–{checkpoints[-1].turn} (:Ai checkpoints lists them)")
        found = match[0]
        if not found.live:
            raise CheckpointError(f"{key}: turn {wanted} was taken back by the rewind to before turn "
                                  f"{found.undone_by}; :Ai rewind undo brings it back")
    if found.pruned:
        raise CheckpointError(f"{key}: the checkpoint of turn {found.turn} was pruned from the store "
                              "(checkpoints.max_bytes): its files cannot be set back; nothing was changed")
    return found


def plan(checkpoints: list[Checkpoint], turn: int) -> list[Step]:
    """The steps of a rewind to before ``turn``: one per file the live turns from ``turn`` on touched."""
    later = [c for c in checkpoints if c.live and c.turn >= turn]
    steps: dict[str, Step] = {}
    for checkpoint in later:
        for entry in checkpoint.files.values():
            first = steps.get(entry.path)
            if first is None:
                steps[entry.path] = Step(entry.path, entry.before, entry.after, checkpoint.turn)
            else:
                steps[entry.path] = Step(entry.path, first.want, entry.after, first.turn)
    return list(steps.values())


def later_turns(checkpoints: list[Checkpoint], turn: int) -> list[Checkpoint]:
    """The live turns a rewind to before ``turn`` takes back (``turn`` and after)."""
    return [c for c in checkpoints if c.live and c.turn >= turn]


def fork_point(checkpoints: list[Checkpoint], turn: int) -> str | None:
    """The ``messageId`` a fork keeps everything up to, for a conversation back before ``turn``:
    the end of the agent's answer in the last live turn before it (None: none, or no id known)."""
    earlier = [c for c in checkpoints if c.live and c.turn < turn]
    return earlier[-1].last_message_id if earlier else None
