"""What the agent sends besides text, opened from the chat with keys typed (:help acp_nvim-media): a
link opens its workspace file (`gf`, `<CR>`), an embedded resource a scratch buffer, an image or audio
is saved 0600 in a 0700 folder and opened with `gx` (vim.ui.open replaced by a recorder), an image shows
inline through an image plugin's stand-in; bad input is one line each and writes nothing."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from acp_nvim.demo_agent.media import png, wav
from helpers import buffer_text, wait_for
from helpers.lua import NOTIFY, notes

pytestmark = pytest.mark.timeout(120)

CHAT = "acp://chat/demo/1"
RECORD_OPEN = """_G.opened = {}
vim.ui.open = function(target) table.insert(_G.opened, target); return {}, nil end
"""


def run(nvim, prompt: str, setup: str = "{}") -> str:
    nvim.exec_lua(NOTIFY + RECORD_OPEN + f"require('acp_nvim').setup({setup})")
    nvim.command(f"Ai send {prompt}")
    return wait_for(lambda: "── turn ended" in (t := buffer_text(nvim, CHAT)) and t,
                    what=f"the {prompt.split()[0]} turn", nvim=nvim)


def chat_buf(nvim) -> int:
    """The chat's buffer, found by its whole name (``bufnr()`` takes a pattern, which other acp:// names match)."""
    return nvim.exec_lua("""for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_get_name(b) == ... then return b end end""", CHAT)


def chat_lines(nvim) -> list[str]:
    return nvim.api.buf_get_lines(chat_buf(nvim), 0, -1, False)


def on_line(nvim, needle: str, last: bool = False) -> None:
    """The cursor in the chat window, on the first (``last``: the last) line containing ``needle``."""
    nvim.api.set_current_win(nvim.funcs.win_getid(nvim.funcs.bufwinnr(chat_buf(nvim))))
    rows = [i for i, line in enumerate(chat_lines(nvim)) if needle in line]
    nvim.api.win_set_cursor(0, [(rows[-1] if last else rows[0]) + 1, 0])


def current_name(nvim) -> str:
    return nvim.api.buf_get_name(0)


def media_files(nvim) -> dict[str, int]:
    folder = Path(nvim.funcs.stdpath("state"), "acp_nvim", "media")
    return {str(p): p.stat().st_mode for p in folder.iterdir()} if folder.exists() else {}


def test_links_and_resources_open_with_gf_and_enter(nvim, workspace: Path):
    (workspace / "spec.txt").write_text("the spec\n")
    text = run(nvim, "media spec.txt")
    assert "▣ link spec.txt (" in text and "/workspace/spec.txt) · text/plain · gf opens" in text
    assert "▣ resource plan.md (file:///notes/plan.md) · text/markdown · " in text
    assert "[resource_link" not in text and "[image" not in text, "no placeholder left"

    on_line(nvim, "▣ link spec.txt")
    nvim.input("gf")
    wait_for(lambda: current_name(nvim) == str(workspace / "spec.txt"), what="gf to open spec.txt", nvim=nvim)
    assert nvim.current.buffer[:] == ["the spec"]

    on_line(nvim, "▣ resource plan.md")
    nvim.input("<CR>")
    wait_for(lambda: current_name(nvim).startswith("acp://resource/demo/1/"), what="<CR> to open the resource",
             nvim=nvim)
    assert current_name(nvim).endswith("/plan.md")
    assert nvim.current.buffer[0] == "# Notes"
    assert nvim.eval("&buftype") == "nofile" and nvim.eval("&filetype") == "markdown"

    # the tool call's link opens the same way
    nvim.command("enew")
    on_line(nvim, "  ▣ link spec.txt", last=True)
    nvim.input("gf")
    wait_for(lambda: current_name(nvim) == str(workspace / "spec.txt"), what="gf on the tool call's link",
             nvim=nvim)


def test_images_and_audio_are_saved_private_and_open_with_gx(nvim, workspace: Path):
    before = media_files(nvim)
    text = run(nvim, "media")
    image, tool_image = f"▣ image · image/png · {len(png())} B", f"▣ image · image/png · {len(png(3, 3))} B"
    assert f"{image} · gx opens" in text and f"  {tool_image} · gx opens" in text
    assert f"▣ audio · audio/wav · {len(wav())} B · gx opens" in text

    for needle in (image, "▣ audio · audio/wav"):
        on_line(nvim, needle)
        nvim.input("gx")
    opened = wait_for(lambda: len(o := nvim.exec_lua("return _G.opened")) == 2 and o, what="two vim.ui.open calls",
                      nvim=nvim)
    folder = Path(nvim.funcs.stdpath("state"), "acp_nvim", "media")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for target, ext in zip(opened, (".png", ".wav"), strict=True):
        path = Path(target)
        assert path.parent == folder and path.suffix == ext
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert Path(opened[0]).read_bytes().startswith(b"\x89PNG")
    assert set(media_files(nvim)) - set(before) == set(opened)

    # the tool call's image too
    on_line(nvim, tool_image)
    nvim.input("gx")
    wait_for(lambda: len(nvim.exec_lua("return _G.opened")) == 3, what="the tool call's image to open", nvim=nvim)

    # gf on an image says what opens it; gx elsewhere is Vim's own (no acp.nvim call)
    on_line(nvim, image)
    nvim.input("gf")
    wait_for(lambda: any("gx opens the image" in n for n in notes(nvim)), what="gf on an image to say gx",
             nvim=nvim)


def test_bad_media_is_one_line_each_and_nothing_is_written(nvim, workspace: Path):
    before = media_files(nvim)
    outside = workspace.parent / "escape.txt"
    outside.write_text("secret\n")
    text = run(nvim, "media-bad", "{ media = { received_max_bytes = 4096 } }")
    assert "▣ image · image/png · 8 B · ✗ invalid base64: not saved" in text
    assert "· ✗ larger than media.received_max_bytes (4.0 KB): not saved" in text
    assert "· ✗ says image/png but the bytes are audio/wav: not saved" in text
    assert "✗ media type 'application/x-msdownload' is not one acp.nvim saves" in text

    for needle in ("invalid base64", "larger than", "says image/png"):
        on_line(nvim, needle)
        nvim.input("gx")
    for needle in ("▣ link escape", "▣ link hostname"):
        on_line(nvim, needle)
        nvim.input("gf")
    said = wait_for(lambda: len(n := notes(nvim)) >= 5 and n, what="five one-line refusals", nvim=nvim)
    assert all("\n" not in line and "Traceback" not in line for line in said), said
    joined = "\n".join(said)
    assert "image: invalid base64: not saved" in joined
    assert "refused to open" in joined and "escape.txt" in joined and "outside the workspace roots" in joined
    assert "refused to open /etc/hostname" in joined
    assert nvim.exec_lua("return _G.opened") == []
    assert media_files(nvim) == before, "nothing saved"
    assert current_name(nvim) == CHAT and str(outside) not in [b.name for b in nvim.buffers]


def test_images_show_inline_through_an_image_plugin(nvim, workspace: Path, tmp_path: Path):
    stand_in = tmp_path / "image-plugin" / "lua"
    stand_in.mkdir(parents=True)
    (stand_in / "image.lua").write_text("""_G.drawn = {}
return { from_file = function(path, opts)
  table.insert(_G.drawn, { path = path, buffer = opts.buffer, y = opts.y })
  return { render = function() end }
end }
""")
    nvim.command(f"set runtimepath+={tmp_path / 'image-plugin'}")
    run(nvim, "media")
    drawn = wait_for(lambda: len(d := nvim.exec_lua("return _G.drawn")) >= 1 and d, what="the image drawn inline",
                     nvim=nvim)
    folder = Path(nvim.funcs.stdpath("state"), "acp_nvim", "media")
    assert Path(drawn[0]["path"]).parent == folder and drawn[0]["buffer"] == chat_buf(nvim)
    assert chat_lines(nvim)[drawn[0]["y"] - 1].startswith("▣ image")


def test_without_an_image_plugin_nothing_is_drawn_or_saved(nvim, workspace: Path):
    before = media_files(nvim)
    run(nvim, "media")
    assert nvim.exec_lua("return package.loaded['image'] == nil and package.loaded['snacks.image'] == nil")
    assert media_files(nvim) == before, "an image is saved only when opened (or drawn)"
    assert os.path.isdir(nvim.funcs.stdpath("state"))
