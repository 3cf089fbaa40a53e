"""Buffer I/O in a real headless Neovim: the text of a buffer equals what `:write` puts on disk,
writes are minimal edits (one undo step, cursor and marks kept), reloads never prompt. The agent's
write goes as FileService does it: `apply` puts the text in, the opener writes the file, `finish`
marks the buffer saved (never `:write!`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import RequestError

from acp_nvim.core.files.opener import Opener
from acp_nvim.core.files.text_slice import slice_lines

pytestmark = pytest.mark.timeout(30)

B = "require('acp_nvim.host.buffers')"

SHAPES = {
    "plain": b"alpha\nbeta\ngamma\n",
    "no-final-newline": b"alpha\nbeta",
    "crlf": b"alpha\r\nbeta\r\ngamma\r\n",
    "crlf-no-final-newline": b"alpha\r\nbeta",
    "empty": b"",
    "one-newline": b"\n",
    "blank-lines": b"\n\nx\n\n",
    "bom": b"\xef\xbb\xbfbom\n",
    "unicode": "caf\u00e9 \u2028 \u00fc\n\x0cform feed\n".encode(),
    "lone-cr": b"a\rb\nc\n",
}

LINE_LIMIT = [(None, None), (1, None), (2, None), (3, 1), (2, 1), (1, 0), (0, 2), (None, 1), (None, 5),
              (4, None), (9, 2), (5, 5)]


def edit(nvim, path) -> int:
    nvim.exec_lua(f"return {B} ~= nil")  # the plugin loads the module when its host starts (NvimEditor)
    nvim.command(f"edit {path}")
    return nvim.current.buffer.number


def read(nvim, path):
    return nvim.exec_lua(f"return {B}.read(...)", str(path))


def agent_write(nvim, path: Path, content: str, tick=None, with_before=False) -> dict:
    """What FileService._put does for a loaded buffer: stamp, apply, write through the opener, finish."""
    opener = Opener([path.parent.resolve()])
    stamp = opener.stamp(path)
    result = nvim.exec_lua(f"return {B}.apply(...)", str(path), content, tick, with_before,
                           list(stamp) if stamp else None)
    if result["status"] != "applied":
        return result
    try:
        written = opener.replace(path, content.encode(), stamp).stamp
    except RequestError as exc:
        result["error"], written = str(exc), None
    result["finish"] = nvim.exec_lua(f"return {B}.finish(...)", str(path), result["tick"],
                                     list(written) if written else None)
    return result


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_buffer_text_of_an_unchanged_buffer_is_the_file(nvim, workspace, shape):
    path = workspace / f"{shape}.txt"
    path.write_bytes(SHAPES[shape])
    edit(nvim, path)
    state = read(nvim, path)
    assert state["text"].encode() == SHAPES[shape]
    assert state["modified"] is False
    nvim.command("setlocal nofixeol")
    nvim.command("write! " + str(workspace / "copy.txt"))
    assert (workspace / "copy.txt").read_bytes() == SHAPES[shape]


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_line_limit_from_buffer_matches_disk(nvim, workspace, shape):
    path = workspace / f"{shape}.txt"
    path.write_bytes(SHAPES[shape])
    edit(nvim, path)
    text = read(nvim, path)["text"]
    disk = SHAPES[shape].decode()
    for line, limit in LINE_LIMIT:
        assert slice_lines(text, line, limit) == slice_lines(disk, line, limit), (line, limit)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_apply_writes_exact_content(nvim, workspace, shape):
    path = workspace / "target.txt"
    path.write_bytes(b"old first\nold second\n")
    edit(nvim, path)
    content = SHAPES[shape].decode()
    result = agent_write(nvim, path, content, with_before=True)
    assert (result["status"], result["finish"]) == ("applied", "saved")
    assert result["text"] == "old first\nold second\n"
    assert path.read_bytes() == SHAPES[shape]
    assert read(nvim, path)["text"] == content
    assert nvim.current.buffer.options["modified"] is False


def test_apply_is_one_undo_step_and_keeps_cursor_and_marks(nvim, workspace):
    path = workspace / "long.txt"
    original = "".join(f"line {n}\n" for n in range(1, 41))
    path.write_text(original)
    edit(nvim, path)
    nvim.command("normal! 20Gwma")  # cursor and mark a on line 20, column 5
    nvim.command("normal! 20G5|")
    nvim.command("normal! 0iuser \x1b")  # a user change first, that must stay its own undo step
    nvim.command("write")
    user_text = read(nvim, path)["text"]
    new = user_text.replace("line 1\n", "line 1 edited\n", 1).replace("line 40\n", "line 40\nappended\n")
    new = new.replace("line 5\n", "")  # a deletion above the cursor
    result = agent_write(nvim, path, new)
    assert (result["status"], result["finish"]) == ("applied", "saved")
    assert path.read_text() == new and not nvim.current.buffer.options["modified"]
    assert nvim.current.window.cursor[0] == 19, "the cursor follows its line"
    assert nvim.current.buffer[18].startswith("user line 20")
    assert nvim.funcs.line("'a") == 19, "mark a follows its line"
    nvim.command("normal! u")
    assert read(nvim, path)["text"] == user_text, "one u takes the whole agent edit back"
    nvim.command("normal! u")
    assert read(nvim, path)["text"] == original


def test_apply_refuses_unseen_unsaved_changes(nvim, workspace):
    path = workspace / "dirty.txt"
    path.write_text("disk\n")
    edit(nvim, path)
    nvim.command("normal! Ayours\x1b")
    state = read(nvim, path)
    assert state["modified"] is True
    stale = agent_write(nvim, path, "agent\n", state["tick"] - 1)
    assert stale["status"] == "conflict" and stale["text"] == "diskyours\n"
    never_read = agent_write(nvim, path, "agent\n")
    assert never_read["status"] == "conflict"
    assert nvim.current.buffer[:] == ["diskyours"] and path.read_text() == "disk\n"
    seen = agent_write(nvim, path, "diskyours agent\n", state["tick"])
    assert (seen["status"], seen["finish"]) == ("applied", "saved")
    assert path.read_text() == "diskyours agent\n"


def test_apply_to_unloaded_path_reports_not_loaded(nvim, workspace):
    result = nvim.exec_lua(f"return {B}.apply(...)", str(workspace / "nope.txt"), "x", None, False)
    assert result["status"] == "not_loaded"
    assert read(nvim, workspace / "nope.txt") is None


def test_find_matches_a_buffer_opened_through_a_symlink(nvim, workspace):
    real = workspace / "real.txt"
    real.write_text("real\n")
    (workspace / "link.txt").symlink_to(real)
    edit(nvim, workspace / "link.txt")
    nvim.command("normal! Aedit\x1b")
    assert read(nvim, real)["text"] == "realedit\n"


def test_reload_keeps_view_and_never_prompts(nvim, workspace):
    path = workspace / "reload.txt"
    path.write_text("".join(f"line {n}\n" for n in range(1, 101)))
    edit(nvim, path)
    nvim.command("normal! 60Gzt")
    top = nvim.funcs.line("w0")
    agent = path.read_text().replace("line 80\n", "line 80 changed\n")
    path.write_text(agent)
    nvim.exec_lua("vim.uv.fs_utime(..., os.time() + 10, os.time() + 10)", str(path))
    assert nvim.exec_lua(f"return {B}.reload(...)", str(path), agent) == "reloaded"
    assert nvim.current.buffer.options["modified"] is False
    assert nvim.current.window.cursor[0] == 60 and nvim.funcs.line("w0") == top
    nvim.exec_lua("_G.fcs = 0; vim.api.nvim_create_autocmd('FileChangedShell', {callback = function()"
                  " _G.fcs = _G.fcs + 1; vim.v.fcs_choice = '' end})")
    nvim.command("checktime")
    assert nvim.exec_lua("return _G.fcs") == 0, "Neovim does not see a change left to reload"
    nvim.command("normal! u")
    assert "line 80 changed" not in "\n".join(nvim.current.buffer[:])


def test_reload_leaves_a_modified_buffer_alone(nvim, workspace):
    path = workspace / "mod.txt"
    path.write_text("one\n")
    edit(nvim, path)
    nvim.command("normal! Amine\x1b")
    assert nvim.exec_lua(f"return {B}.reload(...)", str(path), "agent\n") == "modified"
    assert nvim.current.buffer[:] == ["onemine"]


def test_loaded_lists_file_buffers_with_state(nvim, workspace):
    (workspace / "a.txt").write_text("a\n")
    edit(nvim, workspace / "a.txt")
    nvim.command("normal! Ax\x1b")
    nvim.command("enew")
    loaded = nvim.exec_lua(f"return {B}.loaded()")
    assert [(p, m) for p, m, _ in loaded] == [(str(workspace / "a.txt"), True)]


def delta_read(nvim, cache, path):
    from acp_nvim.nvim.files.buffer_cache import BufferCache

    assert isinstance(cache, BufferCache)
    for _ in range(2):
        raw = nvim.exec_lua(f"return {B}.read_delta(...)", str(path), *cache.since(str(path)))
        state = cache.apply(str(path), raw)
        if state is not None or raw is None:
            return state, raw
    raise AssertionError("the delta never fit")


def test_read_delta_follows_every_kind_of_change(nvim, workspace):
    import random

    from acp_nvim.nvim.files.buffer_cache import BufferCache

    path = workspace / "delta.txt"
    path.write_text("".join(f"line {n}\n" for n in range(200)))
    edit(nvim, path)
    cache = BufferCache()
    state, raw = delta_read(nvim, cache, path)
    assert raw["first"] == 0 and raw["tail"] == 0 and len(raw["lines"]) == 200
    state, raw = delta_read(nvim, cache, path)
    assert raw["lines"] == [] and state.text == path.read_text(), "nothing changed: nothing travels"
    edits = [
        "normal! 50GAx\x1b", "normal! 10Gdd", "normal! 150Goinserted\x1b", "normal! ggOtop\x1b",
        "normal! Goend\x1b", "normal! 20G5dd", "normal! u", "normal! \x12", "normal! 100GJ",
        "lua vim.api.nvim_buf_set_lines(0, 3, 7, false, {'a', 'b'})", "normal! 30Gyy10p",
        "%s/line 1/LINE 1/", "normal! ggdG", "normal! iall new\x1b", "edit!", "set fileformat=dos",
        "set noeol nofixeol",
    ]
    rng = random.Random(4)
    for step, command in enumerate(edits + [rng.choice(edits[:12]) for _ in range(30)]):
        nvim.command(command)
        if step % 2:
            continue
        state, raw = delta_read(nvim, cache, path)
        assert state.text == read(nvim, path)["text"], (step, command)
        assert state.tick == read(nvim, path)["tick"]
    nvim.command("normal! 60GAsmall\x1b")
    state, raw = delta_read(nvim, cache, path)
    assert len(raw["lines"]) == 1 and state.text == read(nvim, path)["text"]


def test_read_delta_starts_over_for_a_stale_copy(nvim, workspace):
    from acp_nvim.nvim.files.buffer_cache import BufferCache

    path = workspace / "stale.txt"
    path.write_text("a\nb\nc\n")
    edit(nvim, path)
    mine, other = BufferCache(), BufferCache()
    delta_read(nvim, mine, path)
    delta_read(nvim, other, path)  # another reader took the delta: mine is a version behind
    nvim.command("normal! 2GAx\x1b")
    state, raw = delta_read(nvim, mine, path)
    assert raw["first"] == 0 and raw["tail"] == 0 and state.text == "a\nbx\nc\n"
    nvim.command("bwipeout!")
    assert delta_read(nvim, mine, path) == (None, None)


def test_apply_refuses_a_buffer_that_is_not_modifiable(nvim, workspace):
    path = workspace / "locked.txt"
    path.write_text("locked\n")
    edit(nvim, path)
    nvim.command("setlocal nomodifiable")
    result = nvim.exec_lua(f"return {B}.apply(...)", str(path), "x\n", None, False)
    assert result == {"status": "error", "text": "the buffer is not modifiable"}
    assert path.read_text() == "locked\n"


def test_a_failed_write_takes_the_edit_back(nvim, workspace):
    path = workspace / "file.txt"
    path.write_text("kept\n")
    edit(nvim, path)
    stamp = Opener([workspace.resolve()]).stamp(path)
    result = nvim.exec_lua(f"return {B}.apply(...)", str(path), "agent\n", None, False, list(stamp))
    assert result["status"] == "applied" and nvim.current.buffer[:] == ["agent"]
    assert nvim.exec_lua(f"return {B}.finish(...)", str(path), result["tick"], None) == "undone"
    assert nvim.current.buffer[:] == ["kept"] and not nvim.current.buffer.options["modified"]


def test_a_failed_write_keeps_what_the_user_typed_meanwhile(nvim, workspace):
    path = workspace / "file.txt"
    path.write_text("kept\n")
    edit(nvim, path)
    stamp = Opener([workspace.resolve()]).stamp(path)
    result = nvim.exec_lua(f"return {B}.apply(...)", str(path), "agent\n", None, False, list(stamp))
    nvim.command("normal! Atyped\x1b")
    assert nvim.exec_lua(f"return {B}.finish(...)", str(path), result["tick"], None) == "kept"
    assert nvim.current.buffer[:] == ["agenttyped"] and nvim.current.buffer.options["modified"]


def test_typing_between_the_edit_and_the_save_leaves_the_buffer_modified(nvim, workspace):
    path = workspace / "file.txt"
    path.write_text("old\n")
    edit(nvim, path)
    opener = Opener([workspace.resolve()])
    stamp = opener.stamp(path)
    result = nvim.exec_lua(f"return {B}.apply(...)", str(path), "agent\n", None, False, list(stamp))
    nvim.command("normal! Atyped\x1b")
    written = opener.replace(path, b"agent\n", stamp).stamp
    assert nvim.exec_lua(f"return {B}.finish(...)", str(path), result["tick"], list(written)) == "kept"
    assert nvim.current.buffer.options["modified"], "the user's typing is unsaved and must stay marked so"
    assert path.read_text() == "agent\n"


def test_a_disk_change_the_buffer_never_saw_is_refused(nvim, workspace):
    path = workspace / "pulled.txt"
    path.write_text("one\n")
    edit(nvim, path)
    path.write_text("one\nfrom git pull\n")
    result = agent_write(nvim, path, "one\nagent\n")
    assert result["status"] == "disk_changed" and result["text"] == "one\n"
    assert nvim.current.buffer[:] == ["one"] and path.read_text() == "one\nfrom git pull\n"
    nvim.command("edit!")  # the user takes the disk's text: the buffer knows the disk again
    assert agent_write(nvim, path, "one\nfrom git pull\nagent\n")["finish"] == "saved"


def test_the_users_own_write_is_known(nvim, workspace):
    path = workspace / "mine.txt"
    path.write_text("one\n")
    edit(nvim, path)
    nvim.command("normal! Atwo\x1b")
    nvim.command("write")
    assert read(nvim, path)["disk"] == list(Opener([workspace.resolve()]).stamp(path))
    assert agent_write(nvim, path, "onetwo agent\n")["finish"] == "saved"


def test_after_the_agents_write_neovim_sees_no_change_on_disk(nvim, workspace):
    path = workspace / "quiet.txt"
    path.write_text("one\n")
    edit(nvim, path)
    nvim.command("setlocal noautoread")
    assert agent_write(nvim, path, "one\nagent\n")["finish"] == "saved"
    nvim.command("checktime")
    assert nvim.api.get_mode() == {"mode": "n", "blocking": False}
    assert "W11" not in nvim.exec_lua("return vim.api.nvim_exec2('messages', { output = true }).output")
    nvim.command("write")  # no "changed since reading it" question either
    assert path.read_text() == "one\nagent\n" and nvim.api.get_mode()["blocking"] is False


def test_apply_refuses_a_read_only_buffer(nvim, workspace):
    path = workspace / "ro.txt"
    path.write_text("ro\n")
    nvim.command(f"view {path}")
    result = agent_write(nvim, path, "agent\n")
    assert result["status"] == "error" and "read-only" in result["text"]
    assert nvim.current.buffer[:] == ["ro"] and path.read_text() == "ro\n"


def test_drop_deletes_only_a_clean_buffer(nvim, workspace):
    path = workspace / "made.txt"
    path.write_text("made\n")
    edit(nvim, path)
    nvim.command("normal! Aunsaved\x1b")
    assert nvim.exec_lua(f"return {B}.drop(...)", str(path)) is False
    nvim.command("edit!")
    assert nvim.exec_lua(f"return {B}.drop(...)", str(path)) is True
    assert nvim.funcs.bufloaded(str(path)) == 0


def test_a_file_replaced_under_unsaved_edits_is_not_the_buffers_source(nvim, workspace):
    """Neovim noticing the new file (a checktime: on focus, after a shell command) keeps the unsaved
    text, and the buffer stays the view of the file it read: its text is never the new file's."""
    path = workspace / "notes.txt"
    path.write_text("original\n")
    buf = edit(nvim, path)
    read_from = nvim.exec_lua(f"return {B}.source(...)", buf)
    nvim.command("normal! Aunsaved\x1b")
    path.rename(workspace / "notes.old")
    path.write_text("another file at the name\n")
    nvim.command("silent! checktime")
    assert nvim.current.buffer[:] == ["originalunsaved"]
    assert nvim.exec_lua(f"return {B}.source(...)", buf) == read_from
    nvim.command("edit!")  # the user takes the new file: it is the source now
    assert nvim.exec_lua(f"return {B}.source(...)", buf) != read_from
