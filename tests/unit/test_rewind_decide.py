"""What a rewind does with a file the turn created or a non-text file (G9), decided from the
checkpoint and the disk alone: nothing that holds something else than the turn left is deleted
or overwritten."""

from __future__ import annotations

import hashlib

from acp_nvim.core.checkpoints.model import ABSENT_REF, KEPT, UNKNOWN_REF, Ref
from acp_nvim.core.checkpoints.plan import Step
from acp_nvim.core.checkpoints.restore import SKIPPED, Outcome, Restorer, _Now


def kept(data: bytes) -> Ref:
    return Ref(KEPT, hashlib.sha256(data).hexdigest(), len(data))


def decide(step: Step, want: bytes | None, now: bytes | None) -> Outcome | str:
    restorer = object.__new__(Restorer)  # the decision reads nothing of the session
    return restorer._decide(step, want, _Now(now), dirty=False, loaded=False)


def test_a_created_file_is_deleted_only_while_it_holds_what_the_turn_left():
    left = b"made by the turn\n"
    assert decide(Step("/w/a", ABSENT_REF, kept(left), 1), None, left) == "remove"
    mine = decide(Step("/w/a", ABSENT_REF, kept(left), 1), None, b"made by the turn\nand mine\n")
    assert isinstance(mine, Outcome) and mine.what == SKIPPED and "changed since" in mine.why
    for unknown in (None, UNKNOWN_REF):
        kept_not = decide(Step("/w/a", ABSENT_REF, unknown, 1), None, left)
        assert isinstance(kept_not, Outcome) and kept_not.what == SKIPPED and "cannot be told" in kept_not.why


def test_a_file_that_is_not_text_is_overwritten_only_while_it_holds_what_the_turn_left():
    before, left = b"\xff\xfe\x00before", b"\xff\xfe\x00after"
    assert decide(Step("/w/b", kept(before), kept(left), 1), before, left) == "bytes"
    other = decide(Step("/w/b", kept(before), kept(left), 1), before, b"\xff\xfe\x00another program")
    assert isinstance(other, Outcome) and other.what == SKIPPED and "not overwritten" in other.why
