"""Paths as people read them (core/transcript/paths.py): root-relative inside the workspace roots,
``~`` under home, whole elsewhere; the chat block shortens them, the full text keeps them whole."""

from __future__ import annotations

from acp.schema import FileEditToolCallContent, ToolCallLocation, ToolCallStart

from acp_nvim.core.transcript.conversation import Conversation
from acp_nvim.core.transcript.paths import PathView
from acp_nvim.core.transcript.projection import ChatProjection

VIEW = PathView(["/ws/proj", "/ws/proj", "/data/lib"], "/home/ann")


def test_a_path_is_shown_relative_to_its_root_or_with_a_tilde():
    assert VIEW.show("/ws/proj/src/main.py") == "src/main.py"
    assert VIEW.show("/ws/proj") == "."
    assert VIEW.show("/data/lib/x.c") == "lib/x.c", "another root: its name first"
    assert VIEW.show("/home/ann/.bashrc") == "~/.bashrc"
    assert VIEW.show("/etc/passwd") == "/etc/passwd"
    assert VIEW.show("src/x.py") == "src/x.py"
    assert VIEW.show("/ws/projects/y") == "/ws/projects/y", "a folder that only starts like a root"


def test_the_paths_in_a_title_are_shortened_and_nothing_else():
    title = "Read /ws/proj/src/a.py and /home/ann/x, not /ws/projX/y nor a/ws/proj/z"
    assert VIEW.text(title) == "Read src/a.py and ~/x, not /ws/projX/y nor a/ws/proj/z"


def test_the_chat_block_shows_short_paths_and_the_full_text_keeps_them_whole():
    ops: list[object] = []
    transcript = Conversation()
    ChatProjection(transcript, ops.append)
    transcript.paths = VIEW
    state = transcript.tools.tool_call(ToolCallStart(
        session_update="tool_call", tool_call_id="t1", title="Edit /ws/proj/src/a.py", kind="edit",
        status="pending", locations=[ToolCallLocation(path="/ws/proj/src/a.py", line=3)],
        content=[FileEditToolCallContent(type="diff", path="/ws/proj/src/a.py", old_text="a\n", new_text="b\n")]))
    block = state.render()
    assert "Edit src/a.py" in block and "± src/a.py +1 −1" in block and "→ src/a.py:3" in block
    assert "/ws/proj" not in block
    full = state.full_text()
    assert "Edit /ws/proj/src/a.py" in full and "→ /ws/proj/src/a.py:3" in full and "b//ws/proj/src/a.py" in full
    assert state.shown_title() == "Edit src/a.py"
