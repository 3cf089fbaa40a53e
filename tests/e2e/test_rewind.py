"""Checkpoints and rewind in real Neovim with the demo agent: three turns that change files three
ways (through fs, on disk by the agent, by a command in a terminal), :Ai rewind 2 with an unsaved
edit kept, :Ai rewind undo byte for byte, the next prompt in a new session without the turns taken
back, a past prompt edited and sent again, :Ai checkpoints, and bad input."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from acp_nvim.core.checkpoints.store import HEADER, CheckpointStore
from helpers import (
    PENDING_LUA,
    WaitTimeout,
    allow,
    buffer_text,
    chat,
    notes,
    notify_stub,
    virt_lines,
    wait_for,
    wait_idle,
)

pytestmark = pytest.mark.timeout(120)

LIST = "acp://checkpoints/demo/1"
ORIGINAL = "".join(f"line {n}\n" for n in range(1, 21))


def start(nvim, **setup: object) -> None:
    nvim.exec_lua(notify_stub("notes"))
    nvim.exec_lua("require('acp_nvim').setup(...)", {"permissions": {"policy": "ask"}, **setup})
    nvim.command("Ai")
    wait_idle(nvim)
    nvim.command("wincmd p")


def turn(nvim, prompt: str, *, asks: bool = True) -> str:
    """Send ``prompt``, allow what it asks, wait for its end; the chat then."""
    done = chat(nvim).count("── turn ended")
    nvim.command(f"Ai send {prompt}")
    if asks:
        allow(nvim)
    try:
        wait_for(lambda: chat(nvim).count("── turn ended") > done, timeout=30, what=f"the end of {prompt!r}")
    except WaitTimeout as exc:  # what the chat and the pending questions show says why
        pending = nvim.exec_lua(PENDING_LUA)
        raise WaitTimeout(f"{exc}\n--- pending: {pending}\n--- chat:\n{chat(nvim)[-3000:]}") from None
    wait_idle(nvim)
    return chat(nvim)


def note_with(nvim, text: str) -> str:
    return wait_for(lambda: next((n for n in notes(nvim) if text in n), None), timeout=30, what=f"a note {text!r}")


def store_folder(nvim) -> Path:
    """The checkpoint store of Neovim's working directory (the state folder is shared by the tests)."""
    return CheckpointStore(nvim.exec_lua("return vim.fn.stdpath('state')"), nvim.funcs.getcwd()).folder


def three_turns(nvim, workspace: Path) -> dict[str, Path]:
    files = {name: workspace / f"{name}.txt" for name in ("fs", "disk", "cmd")}
    for path in files.values():
        path.write_text(ORIGINAL)
    turn(nvim, f"edit {files['fs']}")  # 1: through fs/write_text_file
    turn(nvim, f"edit-disk {files['disk']}")  # 2: the agent writes the disk itself
    turn(nvim, f"terminal sed -i s/line/LINE/ {files['cmd']} && printf made > made.txt")  # 3: a command
    assert files["cmd"].read_text() == ORIGINAL.replace("line", "LINE") and (workspace / "made.txt").exists()
    files["made"] = workspace / "made.txt"
    return files


def test_rewind_two_of_three_turns_keeps_unsaved_edits_and_undoes_byte_for_byte(nvim, workspace):
    start(nvim)
    files = three_turns(nvim, workspace)
    after_three = {name: path.read_bytes() for name, path in files.items()}
    before_two = files["fs"].read_bytes()  # turn 1's result: a rewind to before turn 2 keeps it
    nvim.command(f"edit {files['disk']}")
    nvim.command("normal! Gotyped by me, not saved")
    assert nvim.current.buffer.options["modified"]

    nvim.command("Ai rewind 2")
    note_with(nvim, "rewound to before turn 2")
    assert files["disk"].read_text() == ORIGINAL and files["cmd"].read_text() == ORIGINAL
    assert not files["made"].exists() and files["fs"].read_bytes() == before_two
    buf = nvim.funcs.bufnr(str(files["disk"]))
    assert nvim.api.buf_get_lines(buf, -2, -1, False) == ["typed by me, not saved"]  # kept, unsaved
    view = wait_for(lambda: nvim.exec_lua("return require('acp_nvim.threeway').ids()[1]"), what="the three-way view")
    nvim.exec_lua("require('acp_nvim.threeway').finish(..., 'mine')", view)
    text = chat(nvim)
    assert "── rewound to before turn 2 ── turns 2–3 folded above" in text
    assert "your next prompt carries the conversation before turn 2 as context" in text
    wait_idle(nvim)

    folds = nvim.exec_lua("""
        local win = vim.fn.bufwinid('acp://chat/demo/1')
        return vim.api.nvim_win_call(win, function()
          local out = {}
          for l = 1, vim.fn.line('$') do
            if vim.fn.foldclosed(l) == l then out[#out + 1] = vim.fn.getline(l) end
          end
          return out
        end)""")
    assert folds == ["## You"]  # one closed fold, from turn 2's prompt to the end of turn 3

    echoed = turn(nvim, "echo after the rewind", asks=False).rsplit("## You\necho after the rewind", 1)[1]
    assert f"edit {files['fs']}" in echoed  # turn 1 is in the carried conversation
    assert "edit-disk" not in echoed and "sed -i" not in echoed  # turns 2 and 3 are not

    nvim.command("Ai rewind undo")
    note_with(nvim, "undid the rewind to before turn 2")
    for name in ("cmd", "made", "disk"):
        assert files[name].read_bytes() == after_three[name], name
    assert nvim.api.buf_get_lines(buf, -2, -1, False) == ["typed by me, not saved"]
    assert "the conversation stays where the rewind left it" in chat(nvim)

    folder = store_folder(nvim)
    private = [p for p in folder.rglob("*") if p.is_file()]
    assert private and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in private)


def test_a_past_prompt_edited_and_sent_again(nvim, workspace):
    start(nvim)
    turn(nvim, "echo first prompt", asks=False)
    turn(nvim, "echo second prompt", asks=False)
    nvim.command("Ai open")
    wait_for(lambda: nvim.current.buffer.name == "acp://chat/demo/1", what="the chat window")
    lines = nvim.current.buffer[:]
    row = max(i for i, line in enumerate(lines) if line == "## You")  # turn 2's prompt heading (0-based)
    nvim.api.win_set_cursor(0, [row + 2, 0])
    nvim.input("\\e")  # <LocalLeader>e on the prompt's text, not its heading: nothing to edit
    nvim.input("e")  # e is Vim's motion in the chat
    wait_for(lambda: nvim.api.win_get_cursor(0) == [row + 2, len("echo") - 1], what="e to move to the word's end")
    prompt_buf = nvim.buffers[nvim.funcs.bufnr("acp://prompt/demo/1")]
    assert prompt_buf[:] == [""]
    nvim.api.win_set_cursor(0, [row + 1, 0])
    nvim.input("\\e")
    prompt = wait_for(lambda: "echo second prompt" in prompt_buf[-1] and prompt_buf[-1],
                      what="the prompt of turn 2 in the prompt")
    assert prompt == "echo second prompt"
    assert nvim.current.buffer.name == "acp://prompt/demo/1", "the cursor goes to the prompt to edit it"
    assert any("↺ the prompt of turn 2, to edit" in line for line in virt_lines(nvim))
    prompt_buf[-1] = "echo second prompt, edited"
    nvim.input("<C-s>")
    wait_for(lambda: chat(nvim).count("── turn ended") == 3, timeout=30, what="the edited prompt's turn")
    wait_idle(nvim)
    text = chat(nvim)
    assert "── rewound to before turn 2 ──" in text
    answer = text.rsplit("## You\necho second prompt, edited", 1)[1]
    assert '"echo second prompt, edited"' in answer  # what the agent got
    assert "echo first prompt" in answer and "echo second prompt\\n" not in answer


def test_an_undo_right_after_the_rewind_takes_the_conversation_back(nvim, workspace):
    start(nvim)
    turn(nvim, "echo one", asks=False)
    turn(nvim, "echo two", asks=False)
    nvim.command("Ai rewind 2")
    note_with(nvim, "rewound to before turn 2")
    wait_idle(nvim)
    nvim.command("Ai rewind undo")
    note_with(nvim, "undid the rewind to before turn 2")
    assert "the conversation is back on session demo-1: the agent remembers turn 2 again" in chat(nvim)
    closed = nvim.exec_lua("""
        local win = vim.fn.bufwinid('acp://chat/demo/1')
        return vim.api.nvim_win_call(win, function()
          for l = 1, vim.fn.line('$') do
            if vim.fn.foldclosed(l) ~= -1 then return true end
          end
          return false
        end)""")
    assert closed is False  # the turns unfolded
    echoed = turn(nvim, "echo three", asks=False).rsplit("## You\necho three", 1)[1]
    assert "rewound" not in echoed and "echo one" not in echoed  # the earlier session: nothing carried
    nvim.command("Ai checkpoints")
    rows = wait_for(lambda: len(found := buffer_text(nvim, LIST).splitlines()[3:]) == 3 and found, what="3 rows")
    assert not any("taken back" in row for row in rows)


def test_checkpoints_off_keep_nothing_and_say_so(nvim, workspace):
    start(nvim, checkpoints=False)
    turn(nvim, "echo hello", asks=False)
    nvim.command("Ai checkpoints")
    note_with(nvim, "checkpoints are off (setup: checkpoints = false)")
    nvim.command("Ai rewind")
    assert sum("checkpoints are off" in n for n in notes(nvim)) >= 1
    wait_for(lambda: sum("checkpoints are off" in n for n in notes(nvim)) == 2, what="the second refusal")
    assert not store_folder(nvim).exists()


def test_the_checkpoints_list_its_keys_and_bad_input(nvim, workspace):
    start(nvim)
    target = workspace / "t.txt"
    target.write_text(ORIGINAL)
    turn(nvim, "echo nothing to change", asks=False)
    turn(nvim, f"edit {target}")
    nvim.command("Ai checkpoints")
    listing = wait_for(lambda: "edit " in buffer_text(nvim, LIST) and buffer_text(nvim, LIST), what="the list")
    rows = listing.splitlines()[3:]
    assert rows[0].startswith("  2 ") and "1 file +2 −1" in rows[0] and rows[1].startswith("  1 ")
    assert "no files" in rows[1]
    target.write_text("changed by me\n")
    nvim.input("R")
    wait_for(lambda: "changed since" in buffer_text(nvim, LIST), what="the row to say the file changed since")
    nvim.api.win_set_cursor(0, [4, 0])
    nvim.input("<CR>")
    diff = wait_for(lambda: buffer_text(nvim, "acp://checkpoint/demo/1/2"), what="the diff of turn 2")
    assert "diff --acp a/t.txt b/t.txt (written through Neovim)" in diff and "+line 1 edited by demo" in diff
    assert nvim.current.window.options["foldmethod"] == "expr"

    nvim.command("Ai rewind 9")
    note_with(nvim, "there is no turn 9: this session ran turns 1–2")
    nvim.command("Ai rewind nine")
    note_with(nvim, "not a turn number")
    nvim.command("Ai rewind undo")
    note_with(nvim, "nothing to undo")

    for pack in (store_folder(nvim) / "packs").iterdir():  # each pack's first content, damaged
        data = bytearray(pack.read_bytes())
        data[HEADER:HEADER + 8] = b"corrupt!"
        pack.write_bytes(bytes(data))
    nvim.command("Ai rewind 2")
    note_with(nvim, "cannot rewind: the checkpoint does not hold every file")
    assert target.read_text() == "changed by me\n"  # nothing was changed
    assert "rewound" not in chat(nvim)

    pack = next((store_folder(nvim) / "packs").iterdir())
    pack.chmod(0o644)
    nvim.command("checkhealth acp_nvim")
    health = "\n".join(nvim.api.buf_get_lines(0, 0, -1, False))
    assert "acp.nvim: checkpoints" in health and "MiB for every working directory" in health
    assert "can be read by others" in health and "chmod -R go-rwx" in health


def test_pruning_keeps_the_store_within_its_bound(nvim, workspace):
    bound = 40_000  # each turn keeps two contents of about 9 kB (compressed): two turns fit
    start(nvim, checkpoints={"max_bytes": bound})
    target = workspace / "big.txt"
    for n in range(4):
        target.write_text("".join(f"{n} {i} {i * 7919 % 104729:06d}\n" for i in range(1500)))
        turn(nvim, f"edit {target}")
    nvim.command("Ai checkpoints")  # answered once every checkpoint is stored (and the store pruned)
    rows = wait_for(lambda: len(found := buffer_text(nvim, LIST).splitlines()[3:]) == 4 and found,
                    what="the list of the four turns")
    assert ["pruned" in row for row in rows] == [False, False, True, True]  # newest first: the oldest went
    folder = store_folder(nvim)
    assert sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) <= bound
    manifests = sorted(p.name for p in (folder / "manifests").iterdir())
    assert [json.loads((folder / "manifests" / name).read_text())["turn"] for name in manifests] == [3, 4]
    nvim.command("Ai rewind 1")
    note_with(nvim, "the checkpoint of turn 1 was pruned from the store")
    nvim.command("Ai rewind 4")
    note_with(nvim, "rewound to before turn 4")
    assert target.read_text().startswith("3 0 ")


def held_rewind(nvim, workspace: Path) -> tuple[Path, Path, list[bytes]]:
    """Two accepted edits of one file (A → B → C), then a turn that makes the demo agent hold every
    later session/new until the gate file exists: a rewind's conversation part lasts until the
    test opens the gate. The file, the gate and the file's three contents."""
    target, gate = workspace / "abc.txt", workspace / "gate"
    target.write_text(ORIGINAL)
    contents = [target.read_bytes()]
    for _ in range(2):
        turn(nvim, f"edit {target}")
        contents.append(target.read_bytes())
    assert len(set(contents)) == 3
    turn(nvim, f"hold-sessions {gate}", asks=False)
    return target, gate, contents


def rewind_at_once(nvim, target: Path, content: bytes, follow: str, waits: str) -> None:
    """``:Ai rewind 1``; once its files are back (its conversation is held), ``follow`` at once: the
    chat says it waits."""
    nvim.command("Ai rewind 1")
    wait_for(lambda: target.read_bytes() == content, what="the rewind's files back", nvim=nvim)
    nvim.command(follow)
    wait_for(lambda: waits in chat(nvim), what=f"the line {waits!r}", nvim=nvim)
    assert "rewound to before turn 1" not in "\n".join(notes(nvim))  # still running


def test_an_undo_asked_while_the_rewind_runs_waits_for_it_then_runs(nvim, workspace):
    start(nvim)
    target, gate, (a, _, c) = held_rewind(nvim, workspace)
    rewind_at_once(nvim, target, a, "Ai rewind undo", "rewind undo waits for the running rewind")
    gate.touch()
    note_with(nvim, "undid the rewind to before turn 1")
    assert target.read_bytes() == c
    assert "the conversation is back on session demo-1: the agent remembers turns 1–3 again" in chat(nvim)
    assert not any("already running" in n or "error" in n.lower() for n in notes(nvim))
    wait_idle(nvim)

    nvim.command("Ai rewind 1")  # again, from the undone state
    note_with(nvim, "rewound to before turn 1")
    wait_for(lambda: sum("rewound to before turn 1" in n for n in notes(nvim)) == 2, what="the second rewind")
    assert target.read_bytes() == a
    wait_idle(nvim)
    echoed = turn(nvim, "echo after the rewinds", asks=False).rsplit("## You\necho after the rewinds", 1)[1]
    assert '"echo after the rewinds"' in echoed  # what the agent got: the prompt alone
    assert "edit " not in echoed and "hold-sessions" not in echoed  # no turn taken back is carried


def test_rewinds_and_undos_asked_at_once_run_in_order(nvim, workspace):
    start(nvim)
    target, gate, (a, _, _) = held_rewind(nvim, workspace)
    rewind_at_once(nvim, target, a, "Ai rewind undo", "rewind undo waits for the running rewind")
    nvim.command("Ai rewind 1")
    wait_for(lambda: "rewind waits for the running rewind and 1 more asked before it" in chat(nvim),
             what="the second rewind's line", nvim=nvim)
    gate.touch()
    wait_for(lambda: sum("rewound to before turn 1" in n for n in notes(nvim)) == 2, what="both rewinds", nvim=nvim)
    done = [n for n in notes(nvim) if "rewound to" in n or "undid" in n]
    assert [n.split(":")[1].strip() for n in done] == [
        "rewound to before turn 1", "undid the rewind to before turn 1", "rewound to before turn 1"]
    assert target.read_bytes() == a
    text = chat(nvim)
    assert text.index("── undid the rewind") < text.rindex("── rewound to before turn 1 ──")
    assert not any("already running" in n for n in notes(nvim))
