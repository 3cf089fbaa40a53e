"""The turns a reopened session finds in the checkpoint store (``core/checkpoints/history.py``)."""

from __future__ import annotations

from acp_nvim.core.checkpoints.history import of_session, place
from acp_nvim.core.checkpoints.model import DONE, RUNNING, UNDONE, Checkpoint
from acp_nvim.core.checkpoints.store import CheckpointStore, turn_manifest_name


def save(store: CheckpointStore, writer: str, turn: int, session: str, *, state: str = DONE,
         continues: dict[str, int] | None = None, started: float = 0.0) -> None:
    name = turn_manifest_name(writer, turn, session, now_ns=int(started * 1e9) + turn)
    checkpoint = Checkpoint(turn, f"prompt {turn}", started or float(turn), turn * 10, session, state=state,
                            name=name, writer=writer, continues=continues or {})
    store.write_manifest(name, checkpoint.to_json("demo/1"))


def turns(store: CheckpointStore, session: str) -> list[tuple[int, str]]:
    return [(c.turn, c.prompt) for c in of_session(store, session)]


def test_a_session_finds_its_turns_and_not_another_sessions(tmp_path):
    store = CheckpointStore(str(tmp_path), "/work")
    save(store, "w1", 1, "X")
    save(store, "w1", 2, "X")
    save(store, "w2", 1, "Z")
    assert turns(store, "X") == [(1, "prompt 1"), (2, "prompt 2")]
    assert turns(store, "Z") == [(1, "prompt 1")]
    assert turns(store, "unknown") == []


def test_a_rewind_into_a_new_session_and_a_later_reopening_keep_the_turns_before(tmp_path):
    store = CheckpointStore(str(tmp_path), "/work")
    save(store, "w1", 1, "X")
    save(store, "w1", 2, "X")
    save(store, "w2", 3, "X", state=UNDONE, continues={"w1": 2})  # reopened in another Neovim
    save(store, "w2", 0, "Y", continues={"w1": 2, "w2": 3})  # a rewind moved it into session Y
    save(store, "w3", 4, "Y", continues={"w1": 2, "w2": 3})  # reopened once more
    assert [t for t, _ in turns(store, "Y")] == [1, 2, 3, 4]
    assert [c.state for c in of_session(store, "Y")][2] == UNDONE
    assert [t for t, _ in turns(store, "X")] == [1, 2, 3]


def test_a_turn_cut_by_its_neovim_ending_is_listed_done_and_says_so(tmp_path):
    store = CheckpointStore(str(tmp_path), "/work")
    save(store, "w1", 1, "X", state=RUNNING)
    (found,) = of_session(store, "X")
    assert found.state == DONE and "ended before the turn did" in found.notes[0]


def test_an_unreadable_manifest_is_left_out(tmp_path):
    store = CheckpointStore(str(tmp_path), "/work")
    save(store, "w1", 1, "X")
    save(store, "w1", 2, "X")
    broken = next(n for n in store.manifest_names() if "-turn-2-" in n)
    store.write_manifest(broken, "{not json")
    assert [t for t, _ in turns(store, "X")] == [1]


def test_turns_taken_over_are_placed_at_their_prompts_in_order():
    turns = [Checkpoint(n, prompt, 0.0, 0) for n, prompt in ((1, "echo a"), (2, "edit x"), (3, "lost"), (4, "echo a"))]
    prompts = [(10, "## You\necho a"), (20, "## You\nedit x\n— attached: y"), (40, "## You\necho a")]
    place(turns, prompts, 99)
    assert [c.first_block for c in turns] == [10, 20, 40, 40]  # turn 3's prompt is not shown: before turn 4's
    place(turns[3:], [], 99)
    assert turns[3].first_block == 99  # nothing shown: after the chat
