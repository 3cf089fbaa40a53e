"""The checkpoints of a reopened session: the turns it ran before, in this Neovim or another.

A turn's manifest is named by its writer (the recorder of one session object) and by the ACP
session it ran in (``store.turn_manifest_name``). Reopening ACP session ``S`` (``:Ai resume``)
takes every turn that ran in ``S``, and each of their writers' turns up to the last of them (the
turns before a rewind moved the conversation into ``S``, and the ones it took back, as they were
left; a rewind that moved the conversation into a new session wrote a link, turn 0, that names
the turns before it). A writer that had itself reopened a session names the writers it took over in
``continues``: their turns come too, up to where it took them over. The turns keep their numbers;
the reopened session numbers its new ones after them.

``of_session`` blocks on the disk: the async callers run it through ``asyncio.to_thread``; ``place``
matches the turns taken over to the prompts the chat shows.
"""

from __future__ import annotations

import re

from .errors import CheckpointError
from .model import DONE, RUNNING, Checkpoint
from .store import CheckpointStore, tag

_TURN = re.compile(r"\d{20}-(?P<writer>[0-9a-f]{12})-turn-\d+-(?P<session>[0-9a-f]{12})\.json")


def of_session(store: CheckpointStore, session_id: str) -> list[Checkpoint]:
    """The checkpoints of ACP session ``session_id`` and of the turns before it, oldest first (one per
    turn number: a turn two Neovims both ran keeps the newer)."""
    names: dict[str, list[str]] = {}
    """Turn manifests by their writer's tag."""
    in_session: list[str] = []
    wanted = tag(session_id)
    for name in store.manifest_names():
        match = _TURN.fullmatch(name)
        if match is not None:
            names.setdefault(match["writer"], []).append(name)
            if match["session"] == wanted:
                in_session.append(name)
    read: dict[str, Checkpoint | None] = {}
    bounds: dict[str, int] = {}
    """How far each writer's turns belong to the session (its tag: the last turn number)."""
    for name in in_session:
        checkpoint = _read(store, name, read)
        if checkpoint is not None and checkpoint.session_id == session_id and checkpoint.writer:
            _widen(bounds, tag(checkpoint.writer), checkpoint.turn)
            for writer, turn in checkpoint.continues.items():
                _widen(bounds, tag(writer), turn)
    seen: set[str] = set()
    while len(seen) < len(bounds):
        writer = next(w for w in bounds if w not in seen)
        seen.add(writer)
        for name in names.get(writer, []):
            checkpoint = _read(store, name, read)
            if checkpoint is None or checkpoint.turn > bounds[writer]:
                continue
            for earlier, turn in checkpoint.continues.items():
                if turn > bounds.get(tag(earlier), 0):
                    bounds[tag(earlier)] = turn
                    seen.discard(tag(earlier))
    by_turn: dict[int, Checkpoint] = {}
    for checkpoint in read.values():
        if checkpoint is None or checkpoint.turn == 0 or checkpoint.turn > bounds.get(tag(checkpoint.writer), 0):
            continue
        known = by_turn.get(checkpoint.turn)
        if known is None or known.started < checkpoint.started:
            by_turn[checkpoint.turn] = checkpoint
    found = [by_turn[turn] for turn in sorted(by_turn)]
    for checkpoint in found:
        if checkpoint.state == RUNNING:  # its Neovim ended during the turn: what was kept is what there is
            checkpoint.state = DONE
            checkpoint.notes.append("its Neovim ended before the turn did: the files after it may not be known")
    return found


def place(turns: list[Checkpoint], prompts: list[tuple[int, str]], end: int) -> None:
    """Match each turn taken over to the block of its prompt in the chat (``prompts``: the id and text
    of each ``## You`` block, in order: the earlier conversation drawn from the history, or the
    agent's replay), in order; a turn whose prompt is not there goes before the next one that is, or
    at ``end`` (the chat's next block)."""
    ordered = sorted(turns, key=lambda c: c.turn)
    at = 0
    for checkpoint in ordered:
        line = checkpoint.prompt.strip().split("\n", 1)[0]
        checkpoint.first_block = 0
        for index in range(at, len(prompts)):
            if prompts[index][1].split("\n", 1)[-1].strip().startswith(line):
                checkpoint.first_block = checkpoint.last_block = prompts[index][0]
                at = index + 1
                break
    after = end
    for checkpoint in reversed(ordered):
        if checkpoint.first_block == 0:
            checkpoint.first_block = checkpoint.last_block = after
        after = checkpoint.first_block


def _widen(bounds: dict[str, int], writer: str, turn: int) -> None:
    bounds[writer] = max(bounds.get(writer, 0), turn)


def _read(store: CheckpointStore, name: str, read: dict[str, Checkpoint | None]) -> Checkpoint | None:
    if name not in read:
        try:
            read[name] = Checkpoint.from_json(store.read_manifest(name), name)
        except CheckpointError:
            read[name] = None  # pruned meanwhile, or not readable: that turn is not listed
    return read[name]
