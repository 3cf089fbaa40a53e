"""A rewind never deletes or overwrites a file that holds something else than the turn left (G9).

Real Neovim, the demo agent over the real wire: a turn creates a file (through ``fs/write_text_file``
and by a command), the user edits and saves it, and ``:Ai rewind`` must leave the user's text where
it is and name the file; a file that is not text, changed by another program since the turn, has
no three-way view and must not be overwritten either.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acp_nvim.core.checkpoints.store import CheckpointStore
from helpers import allow, chat, notes, notify_stub, wait_for, wait_idle

pytestmark = pytest.mark.timeout(180)


def start(nvim) -> None:
    nvim.exec_lua(notify_stub("notes"))
    nvim.exec_lua("require('acp_nvim').setup(...)", {"permissions": {"policy": "ask"}})
    nvim.command("Ai")
    wait_idle(nvim)
    nvim.command("wincmd p")


def turn(nvim, prompt: str) -> None:
    done = chat(nvim).count("── turn ended")
    nvim.command(f"Ai send {prompt}")
    allow(nvim)
    wait_for(lambda: chat(nvim).count("── turn ended") > done, what=f"the end of {prompt!r}", nvim=nvim)
    wait_idle(nvim)


def kept_as_left(nvim, number: int, files: int) -> None:
    """Turn ``number``'s checkpoint holds its ``files`` files as the turn left them. They are read
    after the turn's end, in the background: a change made before that is part of the turn."""
    store = CheckpointStore(nvim.exec_lua("return vim.fn.stdpath('state')"), nvim.funcs.getcwd())

    def kept() -> bool:
        manifests = [json.loads(store.read_manifest(name)) for name in store.manifest_names()]
        return any(m["turn"] == number and len(m["files"]) == files and all(f["after"] for f in m["files"])
                   for m in manifests)
    wait_for(kept, what=f"turn {number}'s files kept as the turn left them", nvim=nvim)


def note_with(nvim, text: str) -> str:
    return wait_for(lambda: next((n for n in notes(nvim) if text in n), None), what=f"a note {text!r}", nvim=nvim)


def chat_with(nvim, text: str) -> str:
    def probe() -> str | None:
        shown = chat(nvim)
        return shown if text in shown else None
    return wait_for(probe, what=f"the chat saying {text!r}", nvim=nvim)


def test_a_created_file_the_user_saved_since_is_never_deleted(nvim, workspace: Path):
    start(nvim)
    made = workspace / "notes.md"
    turn(nvim, f"new-file {made}")  # turn 1 creates it through fs/write_text_file
    assert made.exists()
    kept_as_left(nvim, 1, files=1)
    nvim.command(f"edit {made}")
    nvim.command("normal! Gomy own notes, saved")
    nvim.command("write")
    saved = made.read_bytes()
    assert b"my own notes, saved" in saved
    nvim.command("wincmd p")

    nvim.command("Ai rewind 1")
    note = note_with(nvim, "rewound to before turn 1")
    assert "not set back" in note, note
    assert made.read_bytes() == saved, "the rewind deleted what the user saved"
    text = chat_with(nvim, "not deleted")
    line = next(line for line in text.splitlines() if "not deleted" in line)
    assert "notes.md" in line and "changed since" in line, line


def test_a_file_that_is_not_text_changed_since_is_never_overwritten(nvim, workspace: Path):
    start(nvim)
    blob = workspace / "data.bin"
    blob.write_bytes(b"\xff\xfe\x00before")
    made = workspace / "made.txt"
    turn(nvim, f"terminal printf turn >> {blob} && printf made > {made}")  # turn 1: a command changes both
    assert blob.read_bytes() == b"\xff\xfe\x00beforeturn" and made.read_bytes() == b"made"
    kept_as_left(nvim, 1, files=2)
    blob.write_bytes(b"\xff\xfe\x00another program wrote this")  # not the editor: no buffer holds it
    made.write_text("the user's text\n")

    nvim.command("Ai rewind 1")
    note_with(nvim, "rewound to before turn 1")
    assert blob.read_bytes() == b"\xff\xfe\x00another program wrote this", "overwritten without a question"
    assert made.read_text() == "the user's text\n", "deleted without a question"
    text = chat_with(nvim, "not overwritten")
    assert any("data.bin" in line and "not overwritten" in line for line in text.splitlines())
